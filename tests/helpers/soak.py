"""The soak of the hourly schedule (tests/e2e/test_soak.py): a day of hourly runs of a few JSON
sources, one of them faulty every few hours, on a simulated clock.

Each (source, fault) pair is crawled once for real (`scrapy crawl` through CrawlerResource over
the replay server, on a copy of the snapshot whose bodies the fault rewrote), before the day
starts. An hour's run is then the real Dagster assets in process (crawl step, normalization,
blocking checks, publish) with `SoakCrawler` as the crawler: it hands each source the recorded
crawl of its fault of that hour (or its clean one), its offers stamped with the simulated hour and
its verdict with the simulated times. So every hour sees real spider output and real monitor
verdicts, and a day of runs costs a few crawls instead of a hundred.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import dagster as dg
from pydantic import Field

from pipelines.resources import CrawlerResource, CrawlResult
from spiders.layout import SNAPSHOT_DIR

# source -> (the keys of its price numbers, the lists its offers are in, a key its spider reads)
SOAK_SOURCES: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {
    "vastai": (("dph_base", "dph_total", "min_bid"), ("offers",), "gpu_name"),
    "gpugeek_cn": (("price_hour", "price_day", "price_month"), ("list",), "gpu_name"),
    "matpool_cn": (("discountPriceMillicent", "priceMillicent"), ("pools",), "gpu_model"),
    "vultr": (("hourly_cost", "monthly_cost", "hourly_cost_preemptible",
               "monthly_cost_preemptible"), ("plans", "plans_metal"), "gpu_type"),
    "lambda_cloud": (("price_cents_per_hour",), (), "instance_type"),
}
CLEAN = "clean"


@dataclass(frozen=True)
class Fault:
    """What a vendor's answer does wrong for `hours` (hours of the day) and how the run must take
    it: `settles` is the decision the settlement rules must reach on its held crawls
    (pipelines/quality/settlement.py): "reverted" (a glitch, rejected), "confirmed" (a real move,
    landed with its own hours), or the `person`'s decision; or "failed": the crawl itself fails,
    naming `named`, and nothing is held. `alerted`: the hold outlives HOLD_ALERT_HOURS before
    it is settled, so it is alerted on as unresolved first."""
    name: str
    source: str
    hours: range
    settles: str
    factor: float = 1.0          # every price number times this
    keep_share: float = 1.0      # this share of each offer list kept
    renamed: bool = False        # the source's key renamed (`<key>_v2`)
    named: str = ""
    alerted: bool = False
    # 'accepted' | 'rejected': a person settles the first held crawl right after its run
    # (`gpuprices accept` / `reject`), before any rule could
    person: str = ""

    @property
    def variant(self) -> str:
        """The answer the fault serves: faults that serve the same share one crawl."""
        return f"{self.source}:x{self.factor:g}:keep{self.keep_share:g}:renamed{self.renamed}"


def rewrite(value, fault: Fault, price_keys: tuple[str, ...], lists: tuple[str, ...], key: str):
    """A JSON body with `fault` applied: price numbers scaled, offer lists cut, a key renamed."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            v = rewrite(v, fault, price_keys, lists, key)
            if k in price_keys and isinstance(v, (int, float)) and not isinstance(v, bool):
                v = round(v * fault.factor, 6)
            if k in lists and isinstance(v, list) and fault.keep_share < 1:
                v = v[:max(1, int(len(v) * fault.keep_share))]
            out[f"{k}_v2" if fault.renamed and k == key else k] = v
        return out
    if isinstance(value, list):
        return [rewrite(v, fault, price_keys, lists, key) for v in value]
    return value


def faulted_snapshots(root: Path, faults: list[Fault]) -> Path:
    """A snapshot directory holding each faulted source's snapshot with its JSON bodies rewritten
    (the others as recorded)."""
    for source in SOAK_SOURCES:
        shutil.copytree(SNAPSHOT_DIR / source, root / source)
    for fault in faults:
        price_keys, lists, key = SOAK_SOURCES[fault.source]
        manifest = json.loads((root / fault.source / "manifest.json").read_text(encoding="utf-8"))
        for entry in manifest["entries"]:
            if "json" not in entry["content_type"]:
                continue
            path = root / fault.source / entry["file"]
            body = rewrite(json.loads(path.read_text(encoding="utf-8")), fault, price_keys,
                           lists, key)
            path.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    return root


def crawl_variants(root: Path, faults: list[Fault]) -> Path:
    """Crawl every source clean, and each fault once, for real; the offers and verdicts under
    `root/library/<source>/<variant>.{jsonl,json}`. Faults of distinct sources share a crawl."""
    library = root / "library"
    rounds: list[dict[str, Fault | None]] = [dict.fromkeys(SOAK_SOURCES)]
    unique = {f.variant: f for f in faults}
    for fault in unique.values():
        free = next((r for r in rounds[1:] if fault.source not in r), None)
        if free is None:
            rounds.append(free := {})
        free[fault.source] = fault
    for n, plan in enumerate(rounds):
        snapshots = faulted_snapshots(root / f"snapshots{n}",
                                      [f for f in plan.values() if f is not None])
        crawler = CrawlerResource(mode="replay", data_dir=str(root / f"crawl{n}"),
                                  snapshot_dir=str(snapshots), opt_in=["all"])
        results = crawler.crawl_many({s: f"{s}-soak{n}" for s in plan})
        for source, result in results.items():
            variant = plan[source].variant if plan[source] else CLEAN
            out = library / source
            out.mkdir(parents=True, exist_ok=True)
            items = result.items_path.read_text(encoding="utf-8") if result.items_path.exists() \
                else ""
            (out / f"{variant}.jsonl").write_text(items if result.passed else "",
                                                  encoding="utf-8")
            (out / f"{variant}.json").write_text(json.dumps(
                {"passed": result.passed, "offers": result.offers, "failures": result.failures,
                 "verdict": result.verdict}), encoding="utf-8")
    return library


class SoakCrawler(CrawlerResource):
    """The crawler of one simulated hour: each source's recorded crawl of its variant this hour
    (`variants`: source -> variant; absent: clean), stamped with the hour `hour` (ISO)."""
    library: str
    hour: str
    variants: dict[str, str] = Field(default_factory=dict)

    def crawl_many(self, jobs: dict[str, str], log=None,
                   settings: dict | None = None) -> dict[str, CrawlResult]:
        start = datetime.fromisoformat(self.hour)
        results = {}
        for n, (source, crawl_id) in enumerate(jobs.items()):
            variant = self.variants.get(source, CLEAN)
            recorded = json.loads((Path(self.library) / source / f"{variant}.json")
                                  .read_text(encoding="utf-8"))
            observed = start + timedelta(minutes=2 + n)   # crawls a few minutes past the hour
            items = self.items_path(source, crawl_id)
            items.parent.mkdir(parents=True, exist_ok=True)
            lines = (Path(self.library) / source / f"{variant}.jsonl").read_text(
                encoding="utf-8").splitlines()
            items.write_text("".join(
                json.dumps({**json.loads(line), "observed_at": observed.isoformat()},
                           ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
            verdict = {**recorded["verdict"], "started_at": observed.isoformat(),
                       "finished_at": (observed + timedelta(seconds=30)).isoformat()}
            results[source] = CrawlResult(source, crawl_id, recorded["passed"],
                                          recorded["offers"], recorded["failures"], items,
                                          verdict)
        return results


@dataclass
class HourOutcome:
    """What one run of the day did, read back from the working database."""
    hour: int
    success: bool
    published: set[str] = field(default_factory=set)   # sources with observations of this hour
    failed: dict[str, str] = field(default_factory=dict)   # source -> the crawl's reasons
    held: set[str] = field(default_factory=set)            # sources whose crawl is pending
    # source -> its newest observation hour and its count of observations, after the run
    latest: dict[str, tuple] = field(default_factory=dict)


def run_hour(assets: list, selection: list[dg.AssetKey], crawler: SoakCrawler,
             duckdb_resource) -> dg.ExecuteInProcessResult:
    """One hourly run: the assets in process, the crawler of that hour."""
    return dg.materialize(assets, selection=selection, raise_on_error=False,
                          resources={"crawler": crawler, "duckdb": duckdb_resource})
