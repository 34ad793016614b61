"""The whole bench: every figure the configuration asks for, in a work directory removed at the
end, written as one JSON report."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from spiders import layout
from spiders.layout import REPO_ROOT
from tests.workshop.bench.backfill import backfill_bench
from tests.workshop.bench.config import Config, say
from tests.workshop.bench.crawl import crawl_bench
from tests.workshop.bench.history import bench_offers, history_bench
from tests.workshop.bench.report import machine
from tests.workshop.bench.startup import startup_bench
from tests.workshop.bench.suite import last_suite_figure, suite_bench
from tests.workshop.bench.targets import targets
from tests.workshop.bench.whole_run import whole_run_bench


def run_bench(config: Config, out: Path | None = None, offers=None) -> dict[str, Any]:
    """Every figure the config asks for; writes the JSON report and returns it."""
    started = datetime.now(UTC)
    report: dict[str, Any] = {"started_at": started.isoformat(timespec="seconds"),
                              "machine": machine(),
                              "config": {k: (str(v) if isinstance(v, Path) else v)
                                         for k, v in asdict(config).items()},
                              "targets": []}
    out = out or layout.bench_dir() / f"bench-{started:%Y%m%dT%H%M%SZ}.json"
    report["out"] = str(out)
    owned = config.work_dir is None
    work = Path(tempfile.mkdtemp(prefix="gpuprices-bench-")) if owned else config.work_dir
    work.mkdir(parents=True, exist_ok=True)
    bench_dir = out.parent
    try:
        # The suite first and alone: it is the figure most disturbed by other work.
        report["suite"] = (suite_bench(REPO_ROOT, bench_dir) if config.suite
                           else last_suite_figure(bench_dir))
        if config.whole_run:
            report["whole_run"] = whole_run_bench(work / "run")
        if config.crawl:
            report["crawl"] = crawl_bench(work / "crawl", config.crawl_pages, config.crawl_modes)
        offers_file = work / "offers.pkl"
        bench_offers(config.offers, _base_offers(config, report, offers)).to_pickle(offers_file)
        if config.startup:
            published = report.get("whole_run", {}).get("db_path")
            report["startup"] = startup_bench(work / "startup", offers_file, config.startup_runs,
                                              Path(published) if published else None)
        if config.sizes:
            report["history"] = [history_bench(work, offers_file, days, config.incremental_hours,
                                               config.repeats, config.floor)
                                 for days in config.sizes]
        if config.backfill:
            report["backfill"] = backfill_bench(work / "backfill", config.backfill_days)
    finally:
        if owned:
            shutil.rmtree(work, ignore_errors=True)
    report["machine"]["load_average_end"] = os.getloadavg()
    report["models_sha256"] = sorted({
        digest for size in report.get("history") or []
        for phase in (size["floor"] or {}, size["full"], *size["incremental"]) if phase
        for digest in phase.get("models_sha256_all", [phase["models_sha256"]])})
    report["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    report["targets"] = targets(report)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    return report


def _base_offers(config: Config, report: dict[str, Any], offers):
    """The real offers the history is built from: given, or a database's latest prices (the
    whole run's, when it published one), else crawled from the bundled snapshots."""
    from pipelines.simulate import load_offers, offers_from_db

    if offers is not None:
        report["offers_from"] = "given"
        return offers
    source = config.offers_from
    if source is None and report.get("whole_run", {}).get("published"):
        source = Path(report["whole_run"]["db_path"])
    if source is not None:
        report["offers_from"] = str(source)
        return offers_from_db(source)
    say("offers: crawling the bundled snapshots")
    report["offers_from"] = "bundled snapshots"
    return load_offers()
