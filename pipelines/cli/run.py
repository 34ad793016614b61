"""`gpuprices run`: one run of the Dagster job in this process (crawl, normalize, check, build the
models and feeds), with a live view of its steps and a summary; the exit code says how it went."""

from __future__ import annotations

import json
import os
import sys
import uuid

import click
from rich.table import Table

from pipelines.cli.dagster_home import dagster_home
from pipelines.cli.exit_codes import EXIT_OK, EXIT_PARTIAL, EXIT_RUN_FAILED
from pipelines.cli.output import console
from pipelines.cli.run_progress import StepProgress
from pipelines.display import terminal_text
from pipelines.warehouse.sql_files import sql_text

ORIGINS = {"live": "live vendor sites", "raw": "the raw archive (replay on 127.0.0.1)",
           "replay": "bundled snapshots (replay on 127.0.0.1)"}
SHOWN_STATUS = {"passed": "[green]ok[/]", "failed": "[red]FAILED[/]",
                "skipped": "[yellow]skipped[/]", "rejected": "[yellow]rejected[/]"}


@click.command("run")
@click.option("--live", is_flag=True,
              help="Crawl the vendors' real sites instead of the bundled snapshots.")
@click.option("--from-raw", is_flag=True,
              help="Re-run from the raw archive (each source's latest archived crawl), "
                   "no crawling.")
@click.option("--source", "sources", multiple=True, metavar="S",
              help="Only this source (repeatable); see `gpuprices sources`.")
def run_command(live: bool, from_raw: bool, sources: tuple[str, ...]) -> None:
    """Run the main job once: crawl, normalize, check, build models and feeds; print a summary.

    \b
    Exit codes: 0 every source landed; 4 some sources failed, the others landed;
    1 the run failed (nothing new was published past the failed step); 2 usage error;
    5 another run held the data directory longer than GPUPRICES_LOCK_WAIT (seconds, default
    60; 0: do not wait): nothing was done. One run per data directory at a time.
    """
    if live and from_raw:
        raise click.UsageError("--live and --from-raw exclude each other")
    mode = "live" if live else "raw" if from_raw else "replay"
    os.environ["GPUPRICES_MODE"] = mode
    dagster_home()
    hold_run_lock(f"gpuprices run ({mode})")
    refuse_unless_ready_to_write()
    # Dagster and Scrapy load here, when a run starts, not with `gpuprices --help`.
    import dagster as dg

    from pipelines.definitions import defs
    from spiders.layout import data_dir
    from spiders.registry import source_names

    unknown = sorted(set(sources) - set(source_names()))
    if unknown:
        raise click.BadParameter(f"unknown source(s) {', '.join(unknown)}; known: "
                                 f"{', '.join(source_names())}", param_hint="--source")
    job = defs.resolve_job_def("gpuprices_job")
    selection = None
    if sources:
        raw_keys = [dg.AssetKey(["raw", s]) for s in sources]
        downstream = dg.AssetSelection.assets(*raw_keys).downstream()
        # plus what those assets read that no crawl feeds (constant tables such as
        # intermediate.int_sign_test), but never another source's crawl
        selection = list((downstream | (downstream.upstream(depth=1)
                                        - dg.AssetSelection.key_prefixes(["raw"])))
                         .resolve(defs.resolve_asset_graph()))
    console.print(f"[bold]gpuprices run[/] over {ORIGINS[mode]}; data in {data_dir()}"
                  + (f" ({job.executor_def.name} executor)"
                     if job.executor_def.name != "in_process" else ""))
    instance = dg.DagsterInstance.get()
    run_id = str(uuid.uuid4())  # known before the run starts, so its events can be followed
    with StepProgress(instance, run_id, len(sources) or len(source_names()), data_dir()):
        if job.executor_def.name == "in_process":
            result = job.execute_in_process(
                instance=instance, asset_selection=selection, raise_on_error=False,
                run_id=run_id, run_config=RUN_CONFIG)
        else:
            result = execute_out_of_process(instance, run_id, selection)
    sys.exit(print_summary(result))


def refuse_unless_ready_to_write() -> None:
    """Before Dagster loads and anything is crawled: a data directory or working database the run
    cannot write ends the command in a second with one paragraph (exit 1), not after the crawl."""
    from pipelines.preflight import DiskRefused, check_ready_to_write

    try:
        check_ready_to_write()
    except DiskRefused as exc:
        raise click.ClickException(str(exc)) from None


# failed steps are summarized by print_summary; Dagster's own log keeps the full traces
RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def hold_run_lock(by: str) -> None:
    """One writer per data directory (pipelines/run_lock.py), `by` naming it ("gpuprices run
    (replay)", "gpuprices reject"): wait up to GPUPRICES_LOCK_WAIT seconds for another run, or
    exit 5 having done nothing. Released when the command ends; the kernel
    releases it if the process dies."""
    import time

    from pipelines.cli.exit_codes import RunLocked
    from pipelines.run_lock import RunLockBusy, acquire, release, wait_seconds_from_env
    from spiders.layout import data_dir

    directory = data_dir()
    try:
        wait = wait_seconds_from_env()
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    asked = time.monotonic()

    def say_waiting(holder: str) -> None:
        console.print(f"[yellow]another run is using {directory} ({terminal_text(holder)}); "
                      f"waiting up to {wait:g} s for it to finish[/]")
    try:
        acquire(directory, by, wait, say_waiting if wait else None)
    except RunLockBusy as busy:
        raise RunLocked(f"another run is using {directory} ({terminal_text(busy.holder)}); "
                        f"waited {wait:g} s for it. Nothing was done: run again when it has "
                        "finished, or set GPUPRICES_LOCK_WAIT (seconds) to wait longer.") from None
    except OSError as exc:   # an unwritable data directory: the preflight check says why
        console.print(f"[yellow]cannot lock {directory} ({exc}): not guarded against a "
                      "concurrent run[/]")
        return
    if time.monotonic() - asked >= 1:
        console.print(f"the other run finished; waited {time.monotonic() - asked:.0f} s")
    click.get_current_context().call_on_close(lambda: release(directory))


def gpuprices_job():
    """The job, from the code location (already loaded in this process; the multiprocess
    executor's step processes each load it once through this function)."""
    from pipelines.definitions import defs

    return defs.resolve_job_def("gpuprices_job")


def execute_out_of_process(instance, run_id: str, selection):
    """A run of the job under its own executor (GPUPRICES_EXECUTOR=multiprocess: a process per
    step). What `dagster.execute_job` does, with the run id chosen beforehand."""
    import dagster as dg
    from dagster._core.execution.api import execute_run

    recon = dg.reconstructable(gpuprices_job)
    load_data = recon.repository.get_definition().repository_load_data
    recon = recon.with_repository_load_data(load_data)
    run = instance.create_run_for_job(
        job_def=recon.get_definition(), run_id=run_id, run_config=RUN_CONFIG,
        asset_selection=frozenset(selection) if selection else None,
        job_code_origin=recon.get_python_origin(), repository_load_data=load_data)
    ensure_pool_limit(instance)
    try:
        return execute_run(recon, run, instance, raise_on_error=False)
    finally:
        # a step process that died holding a duckdb_writer slot must not block the next run
        instance.event_log_storage.free_concurrency_slots_for_run(run_id)


def ensure_pool_limit(instance) -> None:
    """A DAGSTER_HOME made before the pool existed has no limit in its dagster.yaml; without one
    the pool would not hold the DuckDB steps back, and they would fail on the file lock."""
    from pipelines.defs.execution import DUCKDB_POOL_NAME

    storage = instance.event_log_storage
    if (storage.supports_global_concurrency_limits
            and instance.get_concurrency_config().pool_config.default_pool_limit is None
            and DUCKDB_POOL_NAME not in {pool.name for pool in storage.get_pool_limits()}):
        storage.set_concurrency_slots(DUCKDB_POOL_NAME, 1)


def print_summary(result) -> int:
    """What the run did: each source's crawl, the quarantine, the checks, where the data is; the
    exit code that says how it went."""
    import dagster as dg
    import duckdb

    from pipelines.defs.ingest import CRAWL_CHECK
    from spiders.layout import db_path, feeds_dir, raw_dir, work_db_path

    try:
        crawls, reasons, (total, offers), pending = run_rows(result.run_id)
    except duckdb.Error as exc:   # a run that failed on the database itself (locked, not made)
        console.print(f"[red]  the run's crawls could not be read from {work_db_path()}: "
                      f"{terminal_text(str(exc).strip().splitlines()[0])}[/]")
        crawls, reasons, (total, offers), pending = [], [], (0, 0), []

    table = Table(title="sources")
    for column in ("source", "crawl", "collected", "normalized", "quarantined"):
        table.add_column(column, justify="right" if column not in ("source", "crawl") else "left")
    for source, status, collected, normalized, quarantined, _, _ in crawls:
        table.add_row(source, SHOWN_STATUS[status], str(collected), str(normalized),
                      str(quarantined))
    console.print(table)
    for source, status, *_, failures, _ in crawls:
        colour = "yellow" if status == "skipped" else "red"
        for failure in ([] if status == "passed" else failures):
            console.print(f"[{colour}]  {terminal_text(source)}: {terminal_text(failure)}[/]")
    for source, note in keyless_notes(source for source, *_ in crawls):
        console.print(f"[yellow]  {terminal_text(source)}: {terminal_text(note)}[/]")
    for source, reason in retried_alone(result):
        console.print(f"[yellow]  {terminal_text(source)}: retried alone: "
                      f"{terminal_text(reason)}[/]")
    for source, stage, reason, count in reasons:
        console.print(f"  quarantined {count} × {terminal_text(source)} "
                      f"\\[{terminal_text(stage)}]: {terminal_text(reason)}")

    checks = result.get_asset_check_evaluations()
    failed_checks = [c for c in checks
                     if not c.passed and c.severity == dg.AssetCheckSeverity.ERROR]
    warned = [c for c in checks if not c.passed and c.severity != dg.AssetCheckSeverity.ERROR]
    console.print(f"checks: {len(checks) - len(failed_checks) - len(warned)} passed, "
                  f"{len(failed_checks)} failed, {len(warned)} warned")
    for check in failed_checks:
        name = f"{check.asset_key.to_user_string()}:{check.check_name}"
        if check.check_name == CRAWL_CHECK:  # its reasons are listed under the sources above
            console.print(f"[red]  {name}[/]")
            continue
        console.print(f"[red]  {name}: {terminal_text(check.description or '')}[/]")
        if check.metadata.get("failures"):
            failures = json.dumps(check.metadata["failures"].value, ensure_ascii=False)
            console.print("    " + terminal_text(failures, 600))
    batch_blocked = any(c.asset_key == dg.AssetKey("observation_batch") for c in failed_checks)
    for line in next_steps(crawls, batch_blocked, os.environ.get("GPUPRICES_MODE", "replay")):
        console.print(f"[yellow]  {line}[/]")
    if batch_blocked:
        for source, crawl_id in pending:
            console.print(f"    pending: {source} {crawl_id}")
    console.print(f"observations: {total} rows, {offers} offers in {db_path()}")
    console.print(f"feeds: {feeds_dir()}   raw archive: {raw_dir()}")
    console.print("query: .venv/bin/duckdb -readonly " + str(db_path()) + "   (or: make sql)")
    for line in outputs_summary(result):
        console.print(line)
    if not result.success:
        for event in result.all_events:
            if event.is_step_failure:
                error = event.step_failure_data.error
                cause = error.cause or error
                console.print(f"[red]  step {event.step_key} failed: "
                              f"{terminal_text(cause.message.strip().splitlines()[0])}[/]")
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


def keyless_notes(sources) -> list[tuple[str, str]]:
    """(source, note) for each crawled source that has a keyed path but took its public one,
    naming the keys it lacks ("TENCENTCLOUD_SECRET_ID not set: public path, ..."). A source
    skipped for a missing key already says so among the failures."""
    from spiders.registry import source_names, spider_class

    known = set(source_names())
    notes = []
    for source in sources:
        spider = spider_class(source) if source in known else None
        if spider and spider.key_names() and not spider.keyed() and not spider.api_key_required:
            notes.append((source, spider.path_note()))
    return notes


def materialized(result, *key: str) -> dict | None:
    """The metadata the run recorded when it materialized the asset `key`, or None."""
    import dagster as dg

    for event in result.all_events:
        if event.is_step_materialization and event.asset_key == dg.AssetKey(list(key)):
            metadata = event.step_materialization_data.materialization.metadata
            return {name: value.value for name, value in metadata.items()}
    return None


def outputs_summary(result) -> list[str]:
    """Where the report is and what became of the alerts (rich markup, escaped)."""
    report = materialized(result, "report", "price_report")
    lines = [f"report: {terminal_text(str(report['path']))}" if report
             else "[yellow]report: not written this run (its step failed or did not run)[/]"]
    alerts = materialized(result, "alerts", "price_alerts")
    if alerts is None:
        lines.append("[yellow]alerts: not checked this run (their step failed or did not run); "
                     "unsent alerts wait in alerts.outbox[/]")
    elif not alerts.get("channels"):
        lines.append(f"alerts: {alerts.get('detected', 0)} new, none sent: no notification URLs "
                     f"configured; {alerts.get('pending', 0)} wait in alerts.outbox "
                     "(docs/alerts.md; `gpuprices alerts` lists them)")
    else:
        lines.append(f"alerts: {alerts.get('detected', 0)} new; {alerts.get('delivered', 0)} "
                     f"sent, {alerts.get('failed', 0)} failed, {alerts.get('pending', 0)} "
                     "unsent in alerts.outbox (`gpuprices alerts` lists them)")
    return lines


def run_rows(run_id: str) -> tuple[list, list, tuple[int, int], list]:
    """The run's crawls, its quarantine reasons, (observation rows, offers) and the crawls still
    pending, from the working database."""
    from pipelines.resources import duckdb_from_env

    # The run's own connections used this configuration; DuckDB refuses a second, different one
    # to the same file within one process.
    with duckdb_from_env().get_connection() as con:
        by_run = {"run_id": run_id}
        crawls = con.execute(sql_text(__file__, "run_crawls"), by_run).fetchall()
        reasons = con.execute(sql_text(__file__, "run_quarantine_reasons"), by_run).fetchall()
        totals = con.execute(
            "select count(*), count(distinct offer_id) from observations").fetchone()
        pending = con.execute(sql_text(__file__, "pending_crawls")).fetchall()
    return crawls, reasons, totals, pending


# How the crawl monitor names failed downloads (spiders/extensions/monitors.py): no connection,
# DNS, timeouts, resets; an HTTP error status means the site was reached.
DOWNLOADS_FAILED = "download attempts failed"


def next_steps(crawls: list[tuple], batch_blocked: bool, mode: str) -> list[str]:
    """What the operator can do next (rich markup, escaped). Rejecting applies only to a crawl a
    blocking check on the batch held back; a failed crawl was never loaded, so there is nothing
    to reject, only earlier prices that stay."""
    steps = []
    failed = {source: failures for source, status, *_, failures, _ in crawls
              if status == "failed"}
    if failed:
        names = terminal_text(", ".join(sorted(failed)))
        unreachable = mode == "live" and all(
            any(DOWNLOADS_FAILED in f for f in failures) for failures in failed.values())
        cause = ("could not be reached (no network, DNS or the site down: the errors are above)"
                 if unreachable else "failed (the reasons are above)")
        steps.append(f"{names} {cause}: nothing of those crawls was loaded, their earlier prices "
                     "are kept, and the next run crawls them again")
    if batch_blocked:
        steps.append("the batch stays pending and is retried next run; to set a wrong crawl "
                     "aside: gpuprices reject <crawl_id> --reason '...'")
    return steps


def retried_alone(result) -> list[tuple[str, str]]:
    """(source, why) for every source crawled again in its own process because the shared crawl
    process died first (the raw asset's `retried_alone` metadata)."""
    retried = []
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        reason = materialization.metadata.get("retried_alone")
        if reason is not None and materialization.asset_key.path[0] == "raw":
            retried.append((materialization.asset_key.path[-1], str(reason.value)))
    return sorted(retried)
