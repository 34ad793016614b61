"""`make bench`: figures for crawling, the SQL models at scale and the whole hourly run.

    python -m pipelines.tools.bench [--quick] [--year-offers 2000] [--skip-crawl] [--skip-growth]
                              [--skip-run] [--days 7,30,365] [--hours 3] [--repeats 2]
                              [--offers-from DB] [--work-dir DIR] [--out FILE]

It measures and prints; it asserts nothing. Timings on a shared machine are not pass/fail, so
each figure is printed next to its target with the gap, and everything lands in a JSON file
(`data/bench/bench-<UTC timestamp>.json`, or `--out`). The figures (issue 7, section 5):

  (a) crawl throughput over the replay server, in pages/s: plain HTTP pages (an HTML table, a
      JSON API) and Chromium-rendered pages, each with the polite default settings and with the
      engine's ceiling (no AutoThrottle, 16 requests in flight);
  (b) a simulated history (one year x 2,000 offers hourly, about 17.5 M observations): writing
      it, the full rebuild of every SQL model, the incremental one-hour update, the file size,
      the peak memory of each phase;
  (c) the floor: the same model SQL in a bare DuckDB session on the same data (floor and full
      rebuild alternate, `--repeats` times each, and the fastest of each is compared);
  (d) growth: (b) at one week, one month and one year;
  (e) `gpuprices run` on the bundled snapshots, end to end.

Each measured phase of (b)-(d) runs in a fresh Python process (`--phase`, internal), so its peak
resident memory (`ru_maxrss`, DuckDB's included: it runs in-process) is that phase's alone, and
an hourly update starts cold, as an hourly Dagster run does. The simulated databases live in a
temporary directory (never prices.db) that is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from spiders.layout import REPO_ROOT, SNAPSHOT_DIR, data_dir

# Targets of issue 7, section 5.
INCREMENTAL_TARGET_SECONDS = 5.0       # the hourly update at one year
INCREMENTAL_GROWTH_TARGET = 2.0        # incremental(year) / incremental(week)
FLOOR_RATIO_TARGET = 1.5               # full rebuild / bare-DuckDB floor
PEAK_MEMORY_TARGET_BYTES = 4 * 1024**3  # 4 GiB
WHOLE_RUN_TARGET_SECONDS = 60.0

GIB = 1024**3
PIPELINE_PHASES = ("full", "incremental", "publish")   # what the hourly pipeline itself runs
HISTORY_START = "2025-01-01T12:00"     # a noon start: the hourly updates measured after the
                                       # history rebuild a half-full day, as mid-day runs do
SEED = 0

# (a): the recorded pages each kind of crawl requests many times over, as URL variants.
CRAWL_KINDS: dict[str, dict[str, Any]] = {
    "html": {"source": "idc_sinnet_bj", "label": "static HTML table (Sinnet IDC page)",
             "url": "https://www.sinnet.com.cn/gpu/price.html?bench={n}",
             "file": "gpu_price.html", "content_type": "text/html; charset=utf-8"},
    "json": {"source": "tencent_cn", "label": "JSON API (Tencent price JSON)",
             "url": "https://buy.cloud.tencent.com/api/price/cvm/gpu?region=ap-beijing&bench={n}",
             "file": "gpu_ap-beijing.json", "content_type": "application/json; charset=utf-8"},
    "playwright": {"source": "autodl_cn", "label": "Chromium page + its XHR JSON (AutoDL market)",
                   "url": "https://www.autodl.com/market/list?bench={n}",
                   "file": "market_list.html", "content_type": "text/html; charset=utf-8"},
}
# The polite default is the project's settings as they are (AutoThrottle on, each source's
# max_concurrency of 4, 2 per domain, Playwright 4 pages per context). The ceiling lifts every
# brake: all replayed requests go to one host (127.0.0.1), so the per-domain cap is lifted too,
# else it alone would hold the crawl at 2 requests in flight.
CRAWL_MODES: dict[str, list[str]] = {
    "polite": [],
    "ceiling": ["AUTOTHROTTLE_ENABLED=False", "CONCURRENT_REQUESTS=16",
                "CONCURRENT_REQUESTS_PER_DOMAIN=16", "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT=16"],
}

SPIDER_TEMPLATE = '''\
"""A benchmark spider (written by pipelines.tools.bench): {source} over many URL variants."""
import json
from datetime import UTC, datetime
from time import monotonic

from spiders.registry import spider_class

Base = spider_class({source!r})


class BenchSpider(Base):
    name = {name!r}
    start_urls = {urls!r}

    def parse(self, response, **kwargs):
        now = monotonic()
        self.bench_first = getattr(self, "bench_first", now)
        self.bench_last = now
        self.bench_pages = getattr(self, "bench_pages", 0) + 1
        yield from super().parse(response, **kwargs)

    def closed(self, reason):
        # Timed from the spider's opening (browser start included) to its closing.
        stats = self.crawler.stats.get_stats()
        first, last = getattr(self, "bench_first", None), getattr(self, "bench_last", None)
        figures = {{
            "reason": reason,
            "pages": getattr(self, "bench_pages", 0),
            "responses": stats.get("response_received_count", 0),
            "items": stats.get("item_scraped_count", 0),
            "elapsed_seconds": (datetime.now(UTC) - stats["start_time"]).total_seconds(),
            "first_to_last_page_seconds": (last - first) if first is not None else None,
        }}
        with open(self.settings.get("BENCH_STATS_FILE"), "w", encoding="utf-8") as fh:
            json.dump(figures, fh)
'''


# ----------------------------------------------------------------------------------------------
# Configuration
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Config:
    offers: int = 2000                          # offers in the simulated history
    days: tuple[int, ...] = (7, 30, 365)        # history sizes; the last one is "the year"
    incremental_hours: int = 3                  # consecutive hourly updates measured per size
    repeats: int = 2                            # floor and full rebuild runs per size (best kept)
    crawl_pages: dict[str, int] = field(
        default_factory=lambda: {"html": 300, "json": 300, "playwright": 40})
    crawl_modes: tuple[str, ...] = ("polite", "ceiling")
    crawl: bool = True
    growth: bool = True
    whole_run: bool = True
    offers_from: Path | None = None             # a database's latest prices instead of the run's
    work_dir: Path | None = None                # where the simulated databases go (a temp dir)
    quick: bool = False

    @property
    def sizes(self) -> tuple[int, ...]:
        return self.days if self.growth else self.days[-1:]


QUICK = Config(offers=200, days=(7, 14, 30),
               crawl_pages={"html": 60, "json": 60, "playwright": 8}, quick=True)


def _say(text: str) -> None:
    print(f"[bench] {text}", file=sys.stderr, flush=True)


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024   # KiB on Linux


def _file_bytes(path: Path) -> int:
    wal = Path(f"{path}.wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


# ----------------------------------------------------------------------------------------------
# (a) Crawl throughput over the replay server
# ----------------------------------------------------------------------------------------------

def build_crawl_snapshots(root: Path, pages: dict[str, int]) -> Path:
    """A snapshot directory whose manifests map `pages[kind]` URL variants to one recorded page
    per kind (plus the recorded XHR JSON a rendered page fetches). Files are referenced in place."""
    snapshots = root / "snapshots"
    for kind, count in pages.items():
        spec = CRAWL_KINDS[kind]
        source_dir = SNAPSHOT_DIR / spec["source"]
        entries = [{"method": "GET", "url": spec["url"].format(n=n),
                    "file": str(source_dir / spec["file"]), "content_type": spec["content_type"]}
                   for n in range(count)]
        if kind == "playwright":   # the page's own fetch() calls, as recorded
            recorded = json.loads((source_dir / "manifest.json").read_text(encoding="utf-8"))
            entries += [{**e, "file": str(source_dir / e["file"])} for e in recorded["entries"]
                        if e["file"] != spec["file"]]
        manifest = {"source": f"bench_{kind}", "captured_at": "2026-01-01T00:00:00Z",
                    "entries": entries}
        (snapshots / f"bench_{kind}").mkdir(parents=True, exist_ok=True)
        (snapshots / f"bench_{kind}" / "manifest.json").write_text(json.dumps(manifest, indent=1),
                                                                    encoding="utf-8")
    return snapshots


def crawl_once(root: Path, replay_url: str, kind: str, count: int, mode: str) -> dict[str, Any]:
    """One real `scrapy runspider` subprocess (the project's settings) over `count` variants."""
    spec = CRAWL_KINDS[kind]
    name = f"bench_{kind}_{mode}"
    module = root / "spiders" / f"{name}.py"
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_text(SPIDER_TEMPLATE.format(
        source=spec["source"], name=name, urls=[spec["url"].format(n=n) for n in range(count)]),
        encoding="utf-8")
    data = root / "data"
    stats_file = root / f"{name}.stats.json"
    crawl_id = f"bench-{mode}"
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "spiders.settings",
           "GPUPRICES_DATA_DIR": str(data), "GPUPRICES_REPLAY_URL": replay_url}
    cmd = [sys.executable, "-m", "scrapy", "runspider", str(module), "-a", f"crawl_id={crawl_id}",
           "-O", f"{root / name}.jsonl:jsonlines", "-s", "LOG_LEVEL=INFO",
           "-s", f"BENCH_STATS_FILE={stats_file}"]
    for setting in CRAWL_MODES[mode]:
        cmd += ["-s", setting]
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=1800)
    wall = time.perf_counter() - started
    result: dict[str, Any] = {"kind": kind, "label": spec["label"], "mode": mode,
                              "settings": CRAWL_MODES[mode] or ["project defaults"],
                              "requested_pages": count, "wall_seconds": round(wall, 3),
                              "exit_code": proc.returncode}
    verdict_path = data / "raw" / "crawls" / name / f"{crawl_id}.json"
    if verdict_path.exists():
        verdict = json.loads(verdict_path.read_text(encoding="utf-8"))
        result.update(passed=verdict["passed"], failures=verdict["failures"])
    else:
        result.update(passed=False, failures=["no monitor verdict: "
                                              + " | ".join(proc.stderr.splitlines()[-5:])])
    if stats_file.exists():
        figures = json.loads(stats_file.read_text(encoding="utf-8"))
        result.update(figures)
        elapsed = figures["elapsed_seconds"]
        result["pages_per_second"] = figures["pages"] / elapsed if elapsed else None
        steady = figures["first_to_last_page_seconds"]
        result["steady_pages_per_second"] = ((figures["pages"] - 1) / steady
                                             if steady and figures["pages"] > 1 else None)
    return result


def crawl_bench(root: Path, pages: dict[str, int],
                modes: Sequence[str] = ("polite", "ceiling")) -> list[dict[str, Any]]:
    from spiders.replay_server import ReplayServer

    snapshots = build_crawl_snapshots(root, pages)
    results = []
    with ReplayServer(snapshots) as server:
        for kind, count in pages.items():
            for mode in modes:
                _say(f"crawl: {count} {kind} pages, {mode}")
                results.append(crawl_once(root, server.url, kind, count, mode))
    return results


# ----------------------------------------------------------------------------------------------
# (b)-(d) The SQL models on a simulated history: each phase in a fresh process
# ----------------------------------------------------------------------------------------------

def _models():
    from pipelines.warehouse.sql_models import load_models
    from spiders.layout import SQL_DIR

    return load_models(SQL_DIR, {"observations", "quarantine"})


def models_sha256() -> str:
    """A digest of the model SQL a phase ran: the models are being tuned, so the report says
    which version each figure is of (and whether one bench run saw two)."""
    import hashlib

    digest = hashlib.sha256()
    for model in _models():
        digest.update(model.table.encode() + b"\0" + model.sql.encode() + b"\0")
    return digest.hexdigest()[:16]


def phase_generate(db: str, offers_file: str, days: int) -> dict[str, Any]:
    import pandas as pd

    from pipelines.tools.simulate import simulate

    offers = pd.read_pickle(offers_file)
    result = simulate(db, start=HISTORY_START, days=days, offers=offers, seed=SEED,
                      build_models=False)
    return {"rows": result.rows, "offers": result.offers, "seconds": result.seconds,
            "rows_per_second": result.rows_per_second, "file_bytes": _file_bytes(Path(db)),
            "end": result.end.isoformat()}


def _run_models(con, *, full: bool) -> list[dict[str, Any]]:
    """Every model as the pipeline's assets build them: each in its own transaction."""
    from pipelines.warehouse.db import transaction
    from pipelines.warehouse.sql_models import run_model

    builds = []
    for model in _models():
        started = time.perf_counter()
        with transaction(con):
            how = run_model(con, model, full=full)
        builds.append({"model": model.table, "how": how,
                       "seconds": time.perf_counter() - started})
    return builds


def phase_full(db: str) -> dict[str, Any]:
    import duckdb

    from pipelines.warehouse.db import DUCKDB_CONFIG, ensure_schema

    started = time.perf_counter()
    con = duckdb.connect(db, config=dict(DUCKDB_CONFIG))
    try:
        ensure_schema(con)
        builds = _run_models(con, full=True)
        seconds = time.perf_counter() - started
    finally:
        con.close()
    return {"seconds": seconds, "models": builds, "file_bytes": _file_bytes(Path(db))}


def phase_floor(db: str) -> dict[str, Any]:
    """The same SQL, bare: `create or replace ... as <select>` in dependency order, no runner,
    no transaction, no bookkeeping (only the UTC session zone the models are written for)."""
    import duckdb

    models = _models()
    started = time.perf_counter()
    con = duckdb.connect(db)
    try:
        con.execute("set TimeZone = 'UTC'")
        for layer in sorted({m.layer for m in models}):
            con.execute(f"create schema if not exists {layer}")
        builds = []
        for model in models:
            t0 = time.perf_counter()
            con.execute(model.create_statement())
            builds.append({"model": model.table, "how": model.materialized,
                           "seconds": time.perf_counter() - t0})
        seconds = time.perf_counter() - started
    finally:
        con.close()
    return {"seconds": seconds, "models": builds}


def phase_incremental(db: str, offers_file: str, hour: str) -> dict[str, Any]:
    """One hourly update: the hour's observations land (the simulator's append_hour), then every
    model is brought up to date as the hourly run does (incremental where a model is)."""
    import duckdb
    import pandas as pd

    from pipelines.warehouse.db import DUCKDB_CONFIG, ensure_schema
    from pipelines.tools.simulate import append_hour

    offers = pd.read_pickle(offers_file)
    started = time.perf_counter()
    rows = append_hour(db, datetime.fromisoformat(hour), offers, seed=SEED)
    load_seconds = time.perf_counter() - started
    t0 = time.perf_counter()
    con = duckdb.connect(db, config=dict(DUCKDB_CONFIG))
    try:
        ensure_schema(con)
        builds = _run_models(con, full=False)
    finally:
        con.close()
    models_seconds = time.perf_counter() - t0
    return {"hour": hour, "rows": rows, "load_seconds": load_seconds,
            "models_seconds": models_seconds, "seconds": load_seconds + models_seconds,
            "models": builds}


def phase_publish(db: str) -> dict[str, Any]:
    """What serve/prices_db does after every run (pipelines/defs/feeds.py): checkpoint, copy the
    whole file, fsync, rename. Its cost grows with the history, not with the hour."""
    import duckdb

    from pipelines.warehouse.db import DUCKDB_CONFIG

    started = time.perf_counter()
    con = duckdb.connect(db, config=dict(DUCKDB_CONFIG))
    try:
        con.execute("checkpoint")
    finally:
        con.close()
    source = Path(db)
    target = source.with_name(f"published-{source.name}")
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    shutil.copyfile(source, tmp)
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, target)
    seconds = time.perf_counter() - started
    size = target.stat().st_size
    target.unlink()
    return {"seconds": seconds, "bytes": size}


PHASES: dict[str, Callable[..., dict[str, Any]]] = {
    "generate": phase_generate, "full": phase_full, "floor": phase_floor,
    "incremental": phase_incremental, "publish": phase_publish}


def run_phase(name: str, **kwargs: Any) -> dict[str, Any]:
    """Run one phase in a fresh Python process; its figures plus its peak resident memory."""
    with tempfile.NamedTemporaryFile("r", suffix=".json", delete=False) as out:
        out_path = Path(out.name)
    try:
        cmd = [sys.executable, "-m", "pipelines.tools.bench", "--phase", name,
               "--phase-args", json.dumps(kwargs), "--phase-out", str(out_path)]
        started = time.perf_counter()
        proc = subprocess.run(cmd, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            raise RuntimeError(f"bench phase {name} failed (exit code {proc.returncode}):\n"
                               + "\n".join(proc.stderr.splitlines()[-20:]))
        result = json.loads(out_path.read_text(encoding="utf-8"))
    finally:
        out_path.unlink(missing_ok=True)
    result["process_wall_seconds"] = wall
    return result


def _phase_main(name: str, args_json: str, out: str) -> None:
    result = PHASES[name](**json.loads(args_json))
    result["peak_rss_bytes"] = _peak_rss_bytes()
    result["models_sha256"] = models_sha256()
    Path(out).write_text(json.dumps(result), encoding="utf-8")


def best_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The fastest of repeated runs (its per-model times too), with every run's time and the
    highest peak memory of them all."""
    best = dict(min(runs, key=lambda r: r["seconds"]))
    best["all_seconds"] = [r["seconds"] for r in runs]
    best["peak_rss_bytes"] = max(r["peak_rss_bytes"] for r in runs)
    best["models_sha256_all"] = sorted({r["models_sha256"] for r in runs})
    return best


def history_bench(work: Path, offers_file: Path, days: int, hours: int,
                  repeats: int = 2) -> dict[str, Any]:
    """(b) and (c) at one size: write; the floor and the full rebuild, alternating, `repeats`
    times each (the fastest of each is compared: on a busy machine the order and the
    neighbours would otherwise decide the ratio); then `hours` hourly updates."""
    db = work / f"history-{days}d.db"
    _say(f"history {days} days: writing")
    generate = run_phase("generate", db=str(db), offers_file=str(offers_file), days=days)
    _say(f"history {days} days: {generate['rows']:,} rows in {generate['seconds']:.1f} s")
    floors, fulls = [], []
    for _ in range(max(1, repeats)):
        floors.append(run_phase("floor", db=str(db)))
        _say(f"history {days} days: bare-DuckDB floor {floors[-1]['seconds']:.1f} s")
        fulls.append(run_phase("full", db=str(db)))
        _say(f"history {days} days: full rebuild {fulls[-1]['seconds']:.1f} s")
    floor, full = best_run(floors), best_run(fulls)
    _say(f"history {days} days: {hours} hourly updates")
    end = datetime.fromisoformat(generate["end"])
    updates = []
    for i in range(hours):
        hour = (end + timedelta(hours=i)).isoformat()
        updates.append(run_phase("incremental", db=str(db), offers_file=str(offers_file),
                                 hour=hour))
        _say(f"history {days} days: update {hour}: {updates[-1]['seconds']:.2f} s")
    publish = run_phase("publish", db=str(db))
    size = {"days": days, "offers": generate["offers"], "rows": generate["rows"],
            "generate": generate, "floor": floor, "full": full, "incremental": updates,
            "publish": publish,
            "file_bytes_observations": generate["file_bytes"],
            "file_bytes": _file_bytes(db)}
    size.update(summarize_size(size))
    db.unlink(missing_ok=True)
    Path(f"{db}.wal").unlink(missing_ok=True)
    return size


def summarize_size(size: dict[str, Any]) -> dict[str, Any]:
    updates = size["incremental"]
    phases = {"generate": size["generate"]["peak_rss_bytes"],
              "floor": size["floor"]["peak_rss_bytes"],
              "full": size["full"]["peak_rss_bytes"],
              "incremental": max((u["peak_rss_bytes"] for u in updates), default=0),
              "publish": size["publish"]["peak_rss_bytes"]}
    # The target is the pipeline's: writing the history is the simulator's work and the floor is
    # a reference, so their peaks are reported but not held against it.
    pipeline = {k: v for k, v in phases.items() if k in PIPELINE_PHASES}
    return {
        "incremental_median_seconds": statistics.median(u["seconds"] for u in updates)
        if updates else None,
        "incremental_models_median_seconds": statistics.median(u["models_seconds"]
                                                               for u in updates)
        if updates else None,
        "incremental_load_median_seconds": statistics.median(u["load_seconds"] for u in updates)
        if updates else None,
        "full_over_floor": size["full"]["seconds"] / size["floor"]["seconds"]
        if size["floor"]["seconds"] else None,
        "peak_rss_bytes_by_phase": phases,
        "peak_rss_bytes": max(pipeline.values()),
        "peak_rss_phase": max(pipeline, key=pipeline.get),
    }


def bench_offers(count: int, base) -> Any:
    """`count` offers spread evenly over the real ones and their clones (scale_offers), so every
    source keeps its share whatever the count."""
    import numpy as np

    from pipelines.tools.simulate import scale_offers

    scale = max(1, math.ceil(count / len(base)))
    scaled = scale_offers(base, scale, seed=SEED)
    picks = np.unique(np.linspace(0, len(scaled) - 1, count).round().astype(int))
    return scaled.iloc[picks].reset_index(drop=True)


# ----------------------------------------------------------------------------------------------
# (e) The whole hourly run on the bundled snapshots
# ----------------------------------------------------------------------------------------------

def whole_run_bench(root: Path) -> dict[str, Any]:
    """`gpuprices run` in a subprocess with a temporary data directory and Dagster home."""
    data, home = root / "data", root / "dagster_home"
    env = {**os.environ, "GPUPRICES_DATA_DIR": str(data), "DAGSTER_HOME": str(home)}
    env.pop("GPUPRICES_REPLAY_URL", None)
    env.pop("GPUPRICES_MODE", None)
    gpuprices = Path(sys.executable).with_name("gpuprices")
    cmd = [str(gpuprices), "run"] if gpuprices.exists() else [
        sys.executable, "-c", "from pipelines.cli import main; main()", "run"]
    _say("whole run: gpuprices run (bundled snapshots)")
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    output, _ = proc.communicate()
    seconds = time.perf_counter() - started
    verdicts = [json.loads(p.read_text(encoding="utf-8"))
                for p in sorted((data / "raw" / "crawls").glob("*/*.json"))]
    return {"seconds": seconds, "exit_code": proc.returncode,
            "sources_passed": sum(1 for v in verdicts if v.get("passed")),
            "sources": len(verdicts), "published": (data / "prices.db").exists(),
            "db_path": str(data / "prices.db"),
            "requests": sum(v.get("requests") or 0 for v in verdicts),
            "crawl_seconds_by_source": {v["source"]: _seconds_between(v) for v in verdicts},
            **_dagster_run_times(home),
            "output_tail": output.splitlines()[-12:]}


def _seconds_between(verdict: dict[str, Any]) -> float | None:
    try:   # the monitor's timestamps have a 1 s resolution
        return (datetime.fromisoformat(verdict["finished_at"])
                - datetime.fromisoformat(verdict["started_at"])).total_seconds()
    except (KeyError, TypeError, ValueError):
        return None


def _dagster_run_times(home: Path) -> dict[str, Any]:
    """Where the run's time went: the Dagster run's duration and each step's, read back from
    the run's own instance (the rest of the wall time is process start-up and imports)."""
    try:
        import dagster as dg

        with dg.DagsterInstance.from_config(str(home)) as instance:
            runs = instance.get_runs(limit=1)
            if not runs:
                return {}
            run_stats = instance.get_run_stats(runs[0].run_id)
            steps = {s.step_key: s.end_time - s.start_time
                     for s in instance.get_run_step_stats(runs[0].run_id)
                     if s.start_time and s.end_time}
    except Exception as exc:   # a figure we could not read is reported missing, not fatal
        return {"dagster_error": f"{type(exc).__name__}: {exc}"}
    return {"dagster_run_seconds": (run_stats.end_time - run_stats.start_time
                                    if run_stats.start_time and run_stats.end_time else None),
            "step_seconds": dict(sorted(steps.items(), key=lambda kv: -kv[1]))}


# ----------------------------------------------------------------------------------------------
# Targets and gaps
# ----------------------------------------------------------------------------------------------

def gap(value: float | None, target: float, unit: str = "s") -> dict[str, Any]:
    """How `value` stands against an at-most `target`: met or not, and by how much."""
    if value is None:
        return {"value": None, "target": target, "met": None, "gap": "not measured"}
    met = value <= target
    formats: dict[str, Callable[[float], str]] = {
        "bytes": lambda v: f"{v / GIB:.2f} GiB", "s": lambda v: f"{v:.2f} s",
        "x": lambda v: f"{v:.2f}"}
    fmt = formats.get(unit, lambda v: f"{v:.2f} {unit}")
    diff = abs(target - value)
    text = (f"met: {fmt(diff)} under ({value / target:.0%} of target)" if met
            else f"missed: {fmt(diff)} over ({value / target:.2f}x target)")
    return {"value": value, "target": target, "met": met, "gap": text}


def targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    sizes = report.get("history") or []
    if sizes:
        year, week = sizes[-1], sizes[0]
        at = f"{year['days']} days x {year['offers']} offers"
        rows.append({"figure": f"incremental hourly update (median, load + models), {at}",
                     "unit": "s", **gap(year["incremental_median_seconds"],
                                        INCREMENTAL_TARGET_SECONDS)})
        rows.append({"figure": f"incremental hourly update (median, models only), {at}",
                     "unit": "s", **gap(year["incremental_models_median_seconds"],
                                        INCREMENTAL_TARGET_SECONDS)})
        if len(sizes) > 1:
            for what, key in (("load + models", "incremental_median_seconds"),
                              ("models only", "incremental_models_median_seconds")):
                ratio = year[key] / week[key] if week[key] else None
                rows.append({"figure": f"incremental update growth ({what}), {year['days']} d / "
                                       f"{week['days']} d", "unit": "x",
                             **gap(ratio, INCREMENTAL_GROWTH_TARGET, "x")})
        rows.append({"figure": f"full rebuild / bare-DuckDB floor, {at}", "unit": "x",
                     **gap(year["full_over_floor"], FLOOR_RATIO_TARGET, "x")})
        rows.append({"figure": f"peak memory of the pipeline's phases (largest: "
                               f"{year['peak_rss_phase']}), {at}", "unit": "bytes",
                     **gap(year["peak_rss_bytes"], PEAK_MEMORY_TARGET_BYTES, "bytes")})
    run = report.get("whole_run")
    if run:
        rows.append({"figure": "whole hourly run on the bundled snapshots (gpuprices run)",
                     "unit": "s", **gap(run["seconds"], WHOLE_RUN_TARGET_SECONDS)})
    return rows


# ----------------------------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------------------------

def machine() -> dict[str, Any]:
    import duckdb

    mem_total = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_total = int(line.split()[1]) * 1024
    except OSError:
        pass

    def git(*args: str) -> str | None:   # read-only: which models were measured
        try:
            return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None

    from pipelines.warehouse.db import DUCKDB_CONFIG

    status = git("status", "--porcelain", "--", "dbt_like_sql", "pipelines/warehouse/sql_models.py")
    return {"cpus": os.cpu_count(), "memory_bytes": mem_total, "platform": platform.platform(),
            "python": platform.python_version(), "duckdb": duckdb.__version__,
            "duckdb_config": dict(DUCKDB_CONFIG),
            "load_average_start": os.getloadavg(), "git_commit": git("rev-parse", "HEAD"),
            "models_uncommitted_changes": bool(status)}


def _fmt_s(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def _fmt_runs(phase: dict[str, Any]) -> str:
    """The fastest run, and the others in brackets."""
    others = sorted(phase.get("all_seconds", []))[1:]
    return _fmt_s(phase["seconds"]) + (f" ({', '.join(f'{x:.1f}' for x in others)})"
                                       if others else "")


def print_report(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 160)
    m = report["machine"]
    console.print(f"[bold]gpuprices bench[/] {report['started_at']} on {m['cpus']} CPUs, "
                  f"{(m['memory_bytes'] or 0) / GIB:.0f} GiB, load average "
                  f"{' '.join(f'{x:.1f}' for x in m['load_average_start'])} at start"
                  + (" (quick sizes)" if report["config"]["quick"] else ""))
    console.print(f"DuckDB {m['duckdb']} {m['duckdb_config']}; commit "
                  f"{(m['git_commit'] or '?')[:7]}"
                  + (" with uncommitted model changes" if m["models_uncommitted_changes"] else "")
                  + f"; models {', '.join(report.get('models_sha256') or ['-'])}")
    if report.get("crawl"):
        table = Table(title="(a) crawl throughput over the replay server")
        for col in ("crawl", "settings", "pages", "elapsed", "pages/s", "steady pages/s", "ok"):
            table.add_column(col, justify="left" if col in ("crawl", "settings", "ok") else "right")
        for r in report["crawl"]:
            table.add_row(r["label"], r["mode"], str(r.get("pages", 0)),
                          _fmt_s(r.get("elapsed_seconds")),
                          f"{r['pages_per_second']:.1f}" if r.get("pages_per_second") else "-",
                          f"{r['steady_pages_per_second']:.1f}"
                          if r.get("steady_pages_per_second") else "-",
                          "yes" if r.get("passed")
                          else "NO: " + "; ".join(r.get("failures", []))[:80])
        console.print(table)
    if report.get("history"):
        table = Table(title="(b)-(d) simulated history: SQL models (each phase a fresh process; "
                            "floor and full: fastest run, the others in brackets)")
        for col in ("history", "rows", "write", "rows/s", "file", "floor", "full", "full/floor",
                    "update (median)", "of it models", "publish copy", "pipeline peak RSS"):
            table.add_column(col, justify="right")
        for s in report["history"]:
            table.add_row(f"{s['days']} d x {s['offers']}", f"{s['rows']:,}",
                          _fmt_s(s["generate"]["seconds"]),
                          f"{s['generate']['rows_per_second']:,.0f}",
                          f"{s['file_bytes'] / GIB:.2f} GiB", _fmt_runs(s["floor"]),
                          _fmt_runs(s["full"]), f"{s['full_over_floor']:.2f}x",
                          _fmt_s(s["incremental_median_seconds"]),
                          _fmt_s(s["incremental_models_median_seconds"]),
                          _fmt_s(s["publish"]["seconds"]),
                          f"{s['peak_rss_bytes'] / GIB:.2f} GiB")
        console.print(table)
        largest = report["history"][-1]
        table = Table(title=f"per model at {largest['days']} days x {largest['offers']} offers")
        for col in ("model", "floor", "full", "update (median)", "update how"):
            table.add_column(col, justify="left" if col in ("model", "update how") else "right")
        floor = {b["model"]: b["seconds"] for b in largest["floor"]["models"]}
        inc: dict[str, list[float]] = {}
        how: dict[str, str] = {}
        for update in largest["incremental"]:
            for b in update["models"]:
                inc.setdefault(b["model"], []).append(b["seconds"])
                how[b["model"]] = b["how"]
        for b in largest["full"]["models"]:
            table.add_row(b["model"], _fmt_s(floor.get(b["model"])), _fmt_s(b["seconds"]),
                          _fmt_s(statistics.median(inc[b["model"]]) if inc.get(b["model"])
                                 else None), how.get(b["model"], "-"))
        console.print(table)
        table = Table(title="peak resident memory by phase, GiB (pipeline: full, update, "
                            "publish; write and floor for reference)")
        phases = ("generate", "floor", "full", "incremental", "publish")
        for col in ("history", "write", "floor", "full", "update", "publish"):
            table.add_column(col, justify="right")
        for s in report["history"]:
            p = s["peak_rss_bytes_by_phase"]
            table.add_row(f"{s['days']} d", *(f"{p[k] / GIB:.2f}" for k in phases))
        console.print(table)
    if report.get("whole_run"):
        r = report["whole_run"]
        console.print(f"(e) gpuprices run: {r['seconds']:.1f} s, exit code {r['exit_code']}, "
                      f"{r['sources_passed']}/{r['sources']} sources passed, "
                      f"{r.get('requests', 0)} requests")
        steps = r.get("step_seconds") or {}
        if steps:
            crawl = steps.get("raw_offers", 0.0)
            rest = sum(steps.values()) - crawl
            console.print(f"    Dagster run {r.get('dagster_run_seconds') or 0:.1f} s: crawl step "
                          f"(raw_offers, every source) {crawl:.1f} s, the {len(steps) - 1} other "
                          f"steps {rest:.1f} s; the rest of the wall time is start-up")
            slow = sorted(((v, k) for k, v in (r.get("crawl_seconds_by_source") or {}).items()
                           if v is not None), reverse=True)[:4]
            if slow:
                console.print("    slowest crawls: " + ", ".join(f"{k} {v:.0f} s" for v, k in slow))
    table = Table(title="targets (issue 7): figure, target, gap")
    for col in ("figure", "value", "target", "gap"):
        table.add_column(col)
    for t in report["targets"]:
        if t["unit"] == "bytes":
            value = "-" if t["value"] is None else f"{t['value'] / GIB:.2f} GiB"
            target = f"<= {t['target'] / GIB:.0f} GiB"
        else:
            value = "-" if t["value"] is None else f"{t['value']:.2f} {t['unit']}"
            target = f"<= {t['target']:g} {t['unit']}"
        style = "green" if t["met"] else "red" if t["met"] is False else ""
        table.add_row(t["figure"], value, target, f"[{style}]{t['gap']}[/]" if style else t["gap"])
    console.print(table)
    if len(report.get("models_sha256") or []) > 1:
        console.print("[yellow]the model SQL changed during this run (digests "
                      f"{', '.join(report['models_sha256'])}): figures mix versions[/]")
    console.print(f"figures: {report['out']}")


def run_bench(config: Config, out: Path | None = None, offers=None) -> dict[str, Any]:
    """Every figure the config asks for; writes the JSON report and returns it."""
    started = datetime.now(UTC)
    report: dict[str, Any] = {"started_at": started.isoformat(timespec="seconds"),
                              "machine": machine(),
                              "config": {k: (str(v) if isinstance(v, Path) else v)
                                         for k, v in asdict(config).items()},
                              "targets": []}
    out = out or data_dir() / "bench" / f"bench-{started:%Y%m%dT%H%M%SZ}.json"
    report["out"] = str(out)
    owned = config.work_dir is None
    work = Path(tempfile.mkdtemp(prefix="gpuprices-bench-")) if owned else config.work_dir
    work.mkdir(parents=True, exist_ok=True)
    try:
        if config.whole_run:
            report["whole_run"] = whole_run_bench(work / "run")
        if config.crawl:
            report["crawl"] = crawl_bench(work / "crawl", config.crawl_pages, config.crawl_modes)
        if config.sizes:
            offers_file = work / "offers.pkl"
            bench_offers(config.offers, _base_offers(config, report, offers)).to_pickle(
                offers_file)
            report["history"] = [history_bench(work, offers_file, days, config.incremental_hours,
                                               config.repeats)
                                 for days in config.sizes]
    finally:
        if owned:
            shutil.rmtree(work, ignore_errors=True)
    report["machine"]["load_average_end"] = os.getloadavg()
    report["models_sha256"] = sorted({
        digest for size in report.get("history") or []
        for phase in (size["floor"], size["full"], *size["incremental"])
        for digest in phase.get("models_sha256_all", [phase["models_sha256"]])})
    report["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    report["targets"] = targets(report)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    return report


def _base_offers(config: Config, report: dict[str, Any], offers):
    """The real offers the history is built from: given, or a database's latest prices (the
    whole run's, when it published one), else crawled from the bundled snapshots."""
    from pipelines.tools.simulate import load_offers, offers_from_db

    if offers is not None:
        report["offers_from"] = "given"
        return offers
    source = config.offers_from
    if source is None and report.get("whole_run", {}).get("published"):
        source = Path(report["whole_run"]["db_path"])
    if source is not None:
        report["offers_from"] = str(source)
        return offers_from_db(source)
    _say("offers: crawling the bundled snapshots")
    report["offers_from"] = "bundled snapshots"
    return load_offers()


def _days(text: str) -> tuple[int, ...]:
    days = tuple(sorted(int(d) for d in text.split(",") if d.strip()))
    if not days or days[0] < 1:
        raise argparse.ArgumentTypeError("days: comma-separated positive integers, e.g. 7,30,365")
    return days


def parse_args(argv: Sequence[str] | None = None) -> tuple[argparse.Namespace, Config]:
    parser = argparse.ArgumentParser(
        prog="python -m pipelines.tools.bench",
        description="Figures for crawling, the SQL models at scale and the whole hourly run, each "
                    "with its gap to the target. Measures only: never fails on a slow figure.")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes (200 offers; 7, 14 and 30 days; fewer crawl pages)")
    parser.add_argument("--year-offers", type=int, default=None, metavar="N",
                        help="offers in the simulated history (default 2000; --quick 200)")
    parser.add_argument("--days", type=_days, default=None, metavar="A,B,C",
                        help="history sizes in days, the largest last (default 7,30,365)")
    parser.add_argument("--hours", type=int, default=3, metavar="N",
                        help="consecutive hourly updates measured per size (median reported)")
    parser.add_argument("--repeats", type=int, default=2, metavar="N",
                        help="floor and full-rebuild runs per size, alternating (fastest kept)")
    parser.add_argument("--skip-crawl", action="store_true", help="skip (a), crawl throughput")
    parser.add_argument("--skip-growth", action="store_true",
                        help="only the largest history size (skip (d))")
    parser.add_argument("--skip-run", action="store_true", help="skip (e), the whole run")
    parser.add_argument("--offers-from", type=Path, default=None, metavar="DB",
                        help="take the offers from this database's latest prices (read-only)")
    parser.add_argument("--work-dir", type=Path, default=None, metavar="DIR",
                        help="where the simulated databases go (default: a temporary directory)")
    parser.add_argument("--out", type=Path, default=None, metavar="FILE",
                        help="the JSON report (default data/bench/bench-<UTC timestamp>.json)")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("--phase-args", help=argparse.SUPPRESS)
    parser.add_argument("--phase-out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    config = QUICK if args.quick else Config()
    config = replace(config, offers=args.year_offers or config.offers,
                     days=args.days or config.days, incremental_hours=max(1, args.hours),
                     repeats=max(1, args.repeats),
                     crawl=not args.skip_crawl, growth=not args.skip_growth,
                     whole_run=not args.skip_run, offers_from=args.offers_from,
                     work_dir=args.work_dir)
    if config.offers < 1:
        parser.error("--year-offers must be at least 1")
    if config.offers_from is not None and not config.offers_from.is_file():
        parser.error(f"--offers-from {config.offers_from}: no such database")
    return args, config


def main(argv: Sequence[str] | None = None) -> None:
    args, config = parse_args(argv)
    if args.phase:
        _phase_main(args.phase, args.phase_args, args.phase_out)
        return
    report = run_bench(config, args.out)
    print_report(report)

