"""The public price archives `gpuprices backfill` reads, and what each one's commit time means.
The one home of that meaning: `calendar_signal` is written on every crawl a backfill makes
(raw.crawls.calendar_signal), and intermediate.int_sources_without_calendar, which the
month-end marts read, lists the sources whose crawls say false.

* skypilot-catalog (a catalog, rewritten by a fetcher every few hours): a commit is when the
  catalog was refreshed, not when the vendor changed a price; its dates are real, so it carries
  the calendar.
* cloud-gpus and full-stack (curated tables, edited by hand): a commit is when someone edited
  the table; the day of the month it happened says nothing of prices, so neither carries the
  calendar and the month-end marts leave them out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pipelines.backfill.cloud_gpus import parse_cloud_gpus
from pipelines.backfill.full_stack import parse_full_stack
from pipelines.backfill.offers import Parsed
from pipelines.backfill.skypilot import catalog_file, parse_vms


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
)}
