"""The public price archives `gpuprices backfill` reads, and what each one's commit time means.
The one home of that meaning: `calendar_signal` is written on every crawl a backfill makes
(raw.crawls.calendar_signal), and intermediate.int_sources_without_calendar, which the
month-end marts read, lists the sources whose crawls say false.

* skypilot-catalog (a catalog, rewritten by a fetcher every few hours): a commit is when the
  catalog was refreshed, not when the vendor changed a price; its dates are real, so it carries
  the calendar.
* gcp-pricing (Cyclenerd/google-cloud-pricing-cost-calculator's pricing.yml, regenerated from
  Google's Cloud Billing Catalog API by a scheduled job, .github/workflows/build-pricing.yml:
  cron '45 3 * * 4', every Thursday, committed as "Pricing updated" by github-actions; its
  `about: generated:` stamp matches the commit's day): a commit is when the prices were read,
  so it carries the calendar.
* cloud-gpus and full-stack (curated tables, edited by hand): a commit is when someone edited
  the table; the day of the month it happened says nothing of prices, so neither carries the
  calendar and the month-end marts leave them out.
* alibaba-priceserver (cloudpilot-ai/priceserver's built-in alibabacloud_price.json, two
  commits by a developer; the first was authored 2024-06-12 and committed 2024-10-09): a copy a
  person pulled and committed when they chose, so no calendar. Its time is the commit's, as for
  every archive: the earlier authoring date is not when the prices were read either.
* featurize-doc, ustc-saids, ikkem (documentation pages, edited by hand): as the curated
  tables, a commit is when someone edited the page; no calendar.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pipelines.backfill.alibaba_priceserver import parse_alibaba_priceserver
from pipelines.backfill.cloud_gpus import parse_cloud_gpus
from pipelines.backfill.featurize_doc import parse_featurize_doc
from pipelines.backfill.full_stack import parse_full_stack
from pipelines.backfill.gcp_pricing import parse_gcp_pricing
from pipelines.backfill.ikkem import parse_ikkem
from pipelines.backfill.offers import Parsed
from pipelines.backfill.skypilot import catalog_file, parse_vms
from pipelines.backfill.ustc_saids import parse_ustc_saids


@dataclass(frozen=True)
class Archive:
    name: str                    # the command's name for it
    prefix: str                  # the archive's part of the source name ('skypilot:aws')
    repository: str              # where a clone comes from (owner/name)
    pathspecs: tuple[str, ...]   # the files it keeps prices in (git glob pathspecs)
    curated: bool                # a table people edit, not a catalog a fetcher rewrites
    parse: Callable[[str, str], Parsed]   # (text, path) -> offers

    @property
    def calendar_signal(self) -> bool:
        """Whether a commit's date can say anything about prices by calendar day."""
        return not self.curated

    def file_cloud(self, path: str) -> str | None:
        """The cloud a file holds, for an archive with a file per cloud; None otherwise."""
        found = catalog_file(path) if self.name == "skypilot-catalog" else None
        return found[0] if found else None


ARCHIVES = {a.name: a for a in (
    Archive("skypilot-catalog", "skypilot", "skypilot-org/skypilot-catalog",
            ("catalogs/v*/*/vms.csv",), curated=False,
            parse=lambda text, path: parse_vms(text, catalog_file(path)[0])),  # type: ignore[index]
    Archive("cloud-gpus", "cloud-gpus", "cloud-gpus/cloud-gpus.github.io",
            ("cloud_gpu.json",), curated=True, parse=lambda text, path: parse_cloud_gpus(text)),
    Archive("full-stack", "full-stack", "the-full-stack/the-full-stack-website",
            ("docs/cloud-gpus/cloud-gpus.csv",), curated=True,
            parse=lambda text, path: parse_full_stack(text)),
    Archive("gcp-pricing", "gcp-pricing", "Cyclenerd/google-cloud-pricing-cost-calculator",
            ("pricing.yml",), curated=False, parse=lambda text, path: parse_gcp_pricing(text)),
    Archive("alibaba-priceserver", "alibaba-priceserver", "cloudpilot-ai/priceserver",
            ("pkg/client/builtin-data/alibabacloud_price.json",), curated=True,
            parse=lambda text, path: parse_alibaba_priceserver(text)),
    Archive("featurize-doc", "featurize-doc", "louis-she/featurize-doc", ("docs/prices.md",),
            curated=True, parse=lambda text, path: parse_featurize_doc(text)),
    Archive("ustc-saids", "ustc-saids", "yliu7949/SAIKS-HPC-docs", ("docs/cluster.md",),
            curated=True, parse=lambda text, path: parse_ustc_saids(text)),
    Archive("ikkem", "ikkem", "chenggroup/ikkem-hpc-manual",
            ("docs/introduction/partition.md",), curated=True,
            parse=lambda text, path: parse_ikkem(text)),
)}
