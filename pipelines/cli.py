"""`gpuprices`: run the pipeline once and see what happened.

Exit codes: 0 every source landed; 1 the run failed (a step errored, a blocking check failed, or
every source failed: nothing new was published); 2 usage error; 4 some sources failed, the
others landed.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pipelines.paths import REPO_ROOT, SNAPSHOT_DIR

console = Console(stderr=False, highlight=False)
EXIT_OK, EXIT_RUN_FAILED, EXIT_PARTIAL = 0, 1, 4


def _dagster_home() -> Path:
    home = Path(os.environ.get("DAGSTER_HOME") or REPO_ROOT / ".dagster_home").resolve()
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists():
        shutil.copy(REPO_ROOT / "dagster.yaml", home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    return home


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where prices.db, raw/ and feeds/ live (default: ./data, or GPUPRICES_DATA_DIR).")
def main(data_dir: Path | None) -> None:
    """gpuprices: an honest, queryable history of GPU rental prices."""
    if data_dir:
        os.environ["GPUPRICES_DATA_DIR"] = str(data_dir.resolve())


@main.command()
@click.option("--live", is_flag=True, help="Crawl the vendors' real sites instead of the bundled snapshots.")
@click.option("--from-raw", is_flag=True,
              help="Re-run from the raw archive (each source's latest archived crawl), no crawling.")
@click.option("--source", "sources", multiple=True, metavar="S",
              help="Only this source (repeatable); see `gpuprices sources`.")
def run(live: bool, from_raw: bool, sources: tuple[str, ...]) -> None:
    """Run the main job once: crawl, normalize, check, build models and feeds; print a summary."""
    if live and from_raw:
        raise click.UsageError("--live and --from-raw exclude each other")
    mode = "live" if live else "raw" if from_raw else "replay"
    os.environ["GPUPRICES_MODE"] = mode
    _dagster_home()
    import dagster as dg

    from pipelines.definitions import defs
    from pipelines.paths import data_dir
    from spiders.registry import source_names

    unknown = sorted(set(sources) - set(source_names()))
    if unknown:
        raise click.BadParameter(f"unknown source(s) {', '.join(unknown)}; known: "
                                 f"{', '.join(source_names())}", param_hint="--source")
    job = defs.resolve_job_def("gpuprices_job")
    selection = None
    if sources:
        raw_keys = [dg.AssetKey(["raw", s]) for s in sources]
        selection = list((dg.AssetSelection.assets(*raw_keys).downstream())
                         .resolve(defs.resolve_asset_graph()))
    origin = {"live": "live vendor sites", "raw": "the raw archive (replay on 127.0.0.1)",
              "replay": "bundled snapshots (replay on 127.0.0.1)"}[mode]
    console.print(f"[bold]gpuprices run[/] over {origin}; data in {data_dir()}")
    with console.status("crawling, normalizing and checking ..."):
        result = job.execute_in_process(
            instance=dg.DagsterInstance.get(), asset_selection=selection, raise_on_error=False,
            # failed steps are summarized below; Dagster's own log keeps the full traces
            run_config={"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}},
        )
    sys.exit(print_summary(result))


def print_summary(result) -> int:
    import dagster as dg
    import duckdb

    from pipelines.defs.ingest import CRAWL_CHECK
    from pipelines.paths import data_dir, db_path
    from pipelines.resources import duckdb_from_env

    # The run's own connections used this configuration; DuckDB refuses a second, different one
    # to the same file within one process.
    with duckdb_from_env().get_connection() as con:
        crawls = con.execute("""
            select source, status, offers, coalesce(normalized_rows, 0),
                   coalesce(quarantined_rows, 0), failures, crawl_id
            from raw.crawls where run_id = ? order by source""", [result.run_id]).fetchall()
        reasons = con.execute("""
            select q.source, q.stage, q.reason, count(*) from quarantine q
            join raw.crawls c using (crawl_id) where c.run_id = ?
            group by all order by 1, 4 desc""", [result.run_id]).fetchall()
        total, offers = con.execute(
            "select count(*), count(distinct offer_id) from observations").fetchone()
        pending = con.execute("select source, crawl_id from raw.crawls where passed and "
                              "normalized_at is null order by 1, 2").fetchall()

    table = Table(title="sources")
    for column in ("source", "crawl", "collected", "normalized", "quarantined"):
        table.add_column(column, justify="right" if column not in ("source", "crawl") else "left")
    shown = {"passed": "[green]ok[/]", "failed": "[red]FAILED[/]", "skipped": "[yellow]skipped[/]",
             "rejected": "[yellow]rejected[/]"}
    for source, status, collected, normalized, quarantined, _, _ in crawls:
        table.add_row(source, shown[status], str(collected), str(normalized), str(quarantined))
    console.print(table)
    for source, status, *_, failures, _ in crawls:
        colour = "yellow" if status == "skipped" else "red"
        for failure in ([] if status == "passed" else failures):
            console.print(f"[{colour}]  {escape(source)}: {escape(failure)}[/]")
    for source, stage, reason, count in reasons:
        console.print(escape(f"  quarantined {count} × {source} [{stage}]: {reason}"))

    checks = result.get_asset_check_evaluations()
    failed_checks = [c for c in checks if not c.passed and c.severity == dg.AssetCheckSeverity.ERROR]
    warned = [c for c in checks if not c.passed and c.severity != dg.AssetCheckSeverity.ERROR]
    console.print(f"checks: {len(checks) - len(failed_checks) - len(warned)} passed, "
                  f"{len(failed_checks)} failed, {len(warned)} warned")
    for check in failed_checks:
        name = f"{check.asset_key.to_user_string()}:{check.check_name}"
        if check.check_name == CRAWL_CHECK:  # its reasons are listed under the sources above
            console.print(f"[red]  {name}[/]")
            continue
        console.print(f"[red]  {name}: {escape(check.description or '')}[/]")
        if check.metadata.get("failures"):
            failures = json.dumps(check.metadata["failures"].value, ensure_ascii=False)
            console.print("    " + escape(failures[:600]))
    if failed_checks:
        console.print("[yellow]  the batch stays pending and is retried next run; to set a wrong "
                      "crawl aside: gpuprices reject <crawl_id> --reason '...'[/]")
        for source, crawl_id in pending:
            console.print(f"    pending: {source} {crawl_id}")
    console.print(f"observations: {total} rows, {offers} offers in {db_path()}")
    console.print(f"feeds: {data_dir() / 'feeds'}   raw archive: {data_dir() / 'raw'}")
    console.print("query: .venv/bin/duckdb -readonly " + str(db_path()) + "   (or: make sql)")
    if not result.success:
        for event in result.all_events:
            if event.is_step_failure:
                error = event.step_failure_data.error
                cause = error.cause or error
                console.print(f"[red]  step {event.step_key} failed: "
                              f"{escape(cause.message.strip().splitlines()[0][:300])}[/]")
        console.print("[red bold]run failed[/]: nothing new was published past the failed step "
                      f"(Dagster run {result.run_id}; `make ui` shows its full log).")
        return EXIT_RUN_FAILED
    statuses = [status for _, status, *_ in crawls]
    if "failed" in statuses and "passed" not in statuses:
        console.print("[red bold]every source failed[/]: nothing new was collected")
        return EXIT_RUN_FAILED
    if "failed" in statuses:
        return EXIT_PARTIAL
    return EXIT_OK


@main.command()
@click.argument("crawl_ids", nargs=-1, required=True)
@click.option("--reason", required=True, help="Why the crawl is set aside (kept with it).")
def reject(crawl_ids: tuple[str, ...], reason: str) -> None:
    """Set aside pending crawls that a blocking check refused; their raw offers stay in raw.offers."""
    from pipelines.lib.db import ensure_schema, transaction
    from pipelines.resources import duckdb_from_env

    with duckdb_from_env().get_connection() as con:
        ensure_schema(con)
        with transaction(con):
            for crawl_id in crawl_ids:
                row = con.execute("select passed, normalized_at from raw.crawls where crawl_id = ?",
                                  [crawl_id]).fetchone()
                if row is None:
                    raise click.UsageError(f"no crawl {crawl_id!r} (see raw.crawls)")
                if not row[0] or row[1] is not None:
                    raise click.UsageError(f"crawl {crawl_id!r} is not pending: only a passing, "
                                           "unpublished crawl can be rejected")
                con.execute("""update raw.crawls set passed = false, status = 'rejected',
                               failures = list_append(failures, ?) where crawl_id = ?""",
                            [f"rejected: {reason}", crawl_id])
    console.print(f"rejected {len(crawl_ids)} crawl(s); the next run publishes without them")


def _source_facts() -> dict[str, dict]:
    """Per source, from the database when there is one: cards, kinds, periods, regions, last run."""
    import duckdb

    from pipelines.paths import db_path

    if not db_path().exists():
        return {}
    with duckdb.connect(str(db_path()), read_only=True) as con:
        tables = {t for (t,) in con.execute("select table_name from information_schema.tables").fetchall()}
        if not {"crawls", "observations"} <= tables:
            return {}
        facts = {src: {"cards": cards, "kinds": kinds, "regions": regions}
                 for src, cards, kinds, regions in con.execute("""
            select source, string_agg(distinct gpu_model, ' ' order by gpu_model),
                   string_agg(distinct offer_kind || '/' || billing_period, ' '
                              order by offer_kind || '/' || billing_period),
                   count(distinct region_code)
            from observations group by source""").fetchall()}
        # databases written before the status column existed: derive it from `passed`
        has_status = con.execute("select count(*) from information_schema.columns where "
                                 "table_name = 'crawls' and column_name = 'status'").fetchone()[0]
        status_sql = "status" if has_status else "case when passed then 'passed' else 'failed' end"
        for src, status, finished, offers, failures in con.execute(f"""
            select source, {status_sql}, finished_at, offers, failures from raw.crawls
            qualify row_number() over (partition by source order by crawl_id desc) = 1""").fetchall():
            last = f"{status} {finished:%Y-%m-%d %H:%M} ({offers} offers)" if finished else status
            if status != "passed" and failures:
                last += f": {failures[0]}"
            facts.setdefault(src, {})["last_run"] = last
    return facts


@main.command()
def sources() -> None:
    """List the sources: vendor, kind, fetch style, cards, price kinds, regions, snapshot, last run."""
    from spiders.registry import source_names, spider_class

    facts = _source_facts()
    table = Table(title="sources", show_lines=True)
    for column in ("source", "vendor", "kind", "fetch", "cards", "kind/period", "regions",
                   "snapshot", "last run"):
        table.add_column(column, overflow="fold")
    for name in source_names():
        spider = spider_class(name)
        manifest = SNAPSHOT_DIR / name / "manifest.json"
        snapshot = "none"
        if manifest.exists():
            meta = json.loads(manifest.read_text(encoding="utf-8"))
            snapshot = f"{meta['captured_at'][:10]} {meta.get('provenance', '')}"
        seen = facts.get(name, {})
        table.add_row(name, spider.vendor, spider.vendor_kind, spider.describe_fetch(),
                      seen.get("cards", "-"),
                      seen.get("kinds", "-"), str(seen.get("regions", "-")), snapshot,
                      escape(seen.get("last_run", "never run")))
    console.print(table)


if __name__ == "__main__":
    main()
