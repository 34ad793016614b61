"""(b)-(d) The measured phases on a simulated history (write, full rebuild, bare-DuckDB floor,
hourly update, publish), each run in a fresh Python process (`--phase`, internal) so that its
peak resident memory is its own and an hourly update starts cold, as an hourly Dagster run does."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from spiders.layout import REPO_ROOT, SQL_DIR
from tests.workshop.bench.config import HISTORY_START, SEED, file_bytes, peak_rss_bytes


def _models():
    from pipelines.warehouse.sql_models import load_models

    return load_models(SQL_DIR)


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

    from pipelines.simulate import simulate

    offers = pd.read_pickle(offers_file)
    result = simulate(db, start=HISTORY_START, days=days, offers=offers, seed=SEED,
                      build_models=False)
    return {"rows": result.rows, "offers": result.offers, "seconds": result.seconds,
            "rows_per_second": result.rows_per_second, "file_bytes": file_bytes(Path(db)),
            "end": result.end.isoformat()}


def _rebuild_models(con) -> list[dict[str, Any]]:
    """Every model rebuilt in full as `gpuprices simulate` does: in slices of history when the
    history outgrows DuckDB's memory limit (pipelines/warehouse/model_rebuild.py)."""
    from pipelines.warehouse.model_rebuild import rebuild_models

    return [{"model": table, "how": how, "seconds": seconds}
            for table, how, seconds in rebuild_models(con, _models())]


def _run_models(con, *, full: bool) -> list[dict[str, Any]]:
    """Every model as the pipeline's assets build them: one batch (the catalog and the models'
    state read once), each model in its own transaction."""
    from pipelines.warehouse.model_batch import ModelBatch

    batch = ModelBatch(con)
    builds = []
    for model in _models():
        started = time.perf_counter()
        how = batch.build(model, full=full)
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
        builds = _rebuild_models(con)
        seconds = time.perf_counter() - started
    finally:
        con.close()
    return {"seconds": seconds, "models": builds, "file_bytes": file_bytes(Path(db))}


def phase_floor(db: str) -> dict[str, Any]:
    """The same SQL, bare: `create or replace ... as <select>` in dependency order, no runner,
    no transaction, no bookkeeping (only the UTC session zone the models are written for)."""
    import duckdb

    from pipelines.warehouse.sql_models import create_model_macros

    models = _models()
    started = time.perf_counter()
    con = duckdb.connect(db)
    try:
        con.execute("set TimeZone = 'UTC'")
        create_model_macros(con)    # the incremental filter (a full build: from the start), terms
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
    model is brought up to date as the hourly run does (incremental where a model is). The
    hour's prices are drawn before the clock starts (hour_plan: the simulated market's work, not
    the pipeline's; `plan_seconds`), so `load_seconds` is the write: open, insert, commit."""
    import duckdb
    import pandas as pd

    from pipelines.simulate import append_hour, hour_plan
    from pipelines.warehouse.db import DUCKDB_CONFIG, ensure_schema

    offers = pd.read_pickle(offers_file)
    at = datetime.fromisoformat(hour)
    started = time.perf_counter()
    plan = hour_plan(db, at, offers, seed=SEED)
    plan_seconds = time.perf_counter() - started
    started = time.perf_counter()
    rows = append_hour(db, at, offers, seed=SEED, plan=plan)
    load_seconds = time.perf_counter() - started
    t0 = time.perf_counter()
    con = duckdb.connect(db, config=dict(DUCKDB_CONFIG))
    try:
        ensure_schema(con)
        builds = _run_models(con, full=False)
    finally:
        con.close()
    models_seconds = time.perf_counter() - t0
    return {"hour": hour, "rows": rows, "plan_seconds": plan_seconds,
            "load_seconds": load_seconds, "models_seconds": models_seconds,
            "seconds": load_seconds + models_seconds, "models": builds}


# Hourly publishes timed per publish phase (each after its own hourly update).
PUBLISH_HOURS = 3


def phase_publish(db: str, hours: int = PUBLISH_HOURS) -> dict[str, Any]:
    """What feeds/prices_db does after every run, with the product's own code, hour after hour:
    the two generations are written once (`publish_generation`: whole copies, the fallback's
    cost, `copy_seconds`); then `hours` times an hourly update (an hour of the history's latest
    offers landed, every model brought up to date: not timed here) followed by the timed
    publish (checkpoint and close, then the generation readers do not hold brought up to date
    in place and the link switched). `seconds` is their median; `method` is "generations" when
    every timed publish updated in place, else "copy". Then, after each, the feeds as the
    mart_feeds step writes and the publish moves them (a dated mart only the days its models
    rebuilt, pipelines/feed_days.py): `feeds_seconds` is their median, `feeds_first_seconds`
    the first write of every feed whole, before the hours."""
    import statistics

    import duckdb
    import pandas as pd

    from pipelines.publish import publish_generation
    from pipelines.simulate.offers import offers_from_db
    from pipelines.warehouse.db import DUCKDB_CONFIG

    source = Path(db)
    target = source.with_name(f"published-{source.stem}") / "prices.db"

    def publish() -> tuple[float, dict[str, Any]]:
        started = time.perf_counter()
        con = duckdb.connect(db, config=dict(DUCKDB_CONFIG))
        try:
            con.execute("checkpoint")
        finally:
            con.close()
        published = publish_generation(source, target)
        return time.perf_counter() - started, published

    def publish_feeds() -> tuple[float, dict[str, Any]]:
        from pipelines.defs.feeds import FEED_TABLES, feed_source
        from pipelines.feed_days import write_feeds
        from pipelines.publish import move_staged, staging_dir
        from pipelines.warehouse.db import DUCKDB_CONFIG

        feeds = target.parent / "feeds"
        feeds.mkdir(parents=True, exist_ok=True)
        staged = staging_dir(feeds)
        started = time.perf_counter()
        con = duckdb.connect(db, read_only=True, config=dict(DUCKDB_CONFIG))
        try:    # every feed but the price index's: the simulated history builds no index
            held = {name for (name,) in con.execute(
                "select schema_name || '.' || table_name from duckdb_tables() union all "
                "select schema_name || '.' || view_name from duckdb_views()").fetchall()}
            tables = [t for t in FEED_TABLES if t in held]
            written = dict(write_feeds(con, tables, staged, feeds, False, feed_source))
        finally:
            con.close()
        move_staged(staged, feeds)
        return time.perf_counter() - started, {
            t: w.get("from", "whole") for t, w in written.items() if "days" in w}

    copies = [publish()[0] for _ in range(2)]
    feeds_first = publish_feeds()[0]
    with tempfile.NamedTemporaryFile(suffix=".pkl", delete=False) as fh:
        offers_file = Path(fh.name)
    runs = []
    try:
        offers_from_db(source).to_pickle(offers_file)
        for _ in range(hours):
            con = duckdb.connect(db, read_only=True)
            try:
                last = con.execute("select max(observed_hour) from observations").fetchone()[0]
            finally:
                con.close()
            phase_incremental(db, str(offers_file),
                              (pd.Timestamp(last) + pd.Timedelta(hours=1)).isoformat())
            seconds, published = publish()
            feeds_seconds, feeds_from = publish_feeds()
            runs.append({"seconds": seconds, "method": published["method"],
                         "why": published["why"], "tables": published["tables"],
                         "feeds_seconds": feeds_seconds, "feeds_from": feeds_from})
        size = target.stat().st_size
    finally:
        offers_file.unlink(missing_ok=True)
        shutil.rmtree(target.parent, ignore_errors=True)
    methods = {r["method"] for r in runs}
    return {"seconds": statistics.median(r["seconds"] for r in runs),
            "copy_seconds": statistics.median(copies), "bytes": size,
            "method": "generations" if methods == {"generations"} else "copy",
            "feeds_seconds": statistics.median(r["feeds_seconds"] for r in runs),
            "feeds_first_seconds": feeds_first, "hours": runs}


def phase_crawl_alone(data: str) -> dict[str, Any]:
    """(e)'s crawl floor: every source of a default run crawled over the bundled snapshots by the
    code the raw_offers step calls (CrawlerResource.crawl_many: the same spiders, processes and
    replay server), with no Dagster around it. Timed from the call to its return."""
    import os

    os.environ["GPUPRICES_DATA_DIR"] = data
    os.environ.pop("GPUPRICES_MODE", None)
    from pipelines.resources import crawler_from_env
    from spiders.registry import source_names

    crawler = crawler_from_env()
    jobs = {source: f"{source}-floor" for source in source_names()}
    started = time.perf_counter()
    results = crawler.crawl_many(jobs)
    return {"seconds": time.perf_counter() - started, "sources": len(results),
            "sources_passed": sum(r.passed for r in results.values())}


PHASES: dict[str, Callable[..., dict[str, Any]]] = {
    "generate": phase_generate, "full": phase_full, "floor": phase_floor,
    "incremental": phase_incremental, "publish": phase_publish,
    "crawl_alone": phase_crawl_alone}


def run_phase(name: str, **kwargs: Any) -> dict[str, Any]:
    """Run one phase in a fresh Python process; its figures plus its peak resident memory."""
    with tempfile.NamedTemporaryFile("r", suffix=".json", delete=False) as out:
        out_path = Path(out.name)
    try:
        cmd = [sys.executable, "-m", "tests.workshop.bench", "--phase", name,
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


def phase_main(name: str, args_json: str, out: str) -> None:
    """The `--phase` entry point: run one phase in this process and write its figures, with
    this process's peak resident memory and the digest of the model SQL it ran, to `out`."""
    result = PHASES[name](**json.loads(args_json))
    result["peak_rss_bytes"] = peak_rss_bytes()
    result["models_sha256"] = models_sha256()
    Path(out).write_text(json.dumps(result), encoding="utf-8")
