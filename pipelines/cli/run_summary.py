"""The summary `gpuprices run` prints when its run has ended: the failed steps first, each with its
own error; each source's crawl, the quarantine, the checks; what was published and where (only
files that exist); the report and the alerts; and the exit code that says how it went."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from rich.table import Table

from pipelines.cli.exit_codes import EXIT_OK, EXIT_PARTIAL, EXIT_RUN_FAILED
from pipelines.cli.output import console
from pipelines.display import terminal_text
from pipelines.warehouse.sql_files import sql_text

SHOWN_STATUS = {"passed": "[green]ok[/]", "failed": "[red]FAILED[/]",
                "skipped": "[yellow]skipped[/]", "rejected": "[yellow]rejected[/]",
                "held": "[yellow]held[/]"}


def print_summary(result) -> int:
    """What the run did, the failed steps first; the exit code that says how it went."""
    import dagster as dg
    import duckdb

    from pipelines.defs.ingest import CRAWL_CHECK
    from spiders.layout import work_db_path

    failures = failed_steps(result)
    for step, message in failures:
        console.print(f"[red bold]step {terminal_text(step)} failed[/][red]: "
                      f"{terminal_text(message)}[/]")
    try:
        crawls, reasons, (total, offers), held = run_rows(result.run_id)
    except duckdb.Error as exc:   # a run that failed on the database itself (locked, not made)
        console.print(f"[red]  the run's crawls could not be read from {work_db_path()}: "
                      f"{terminal_text(str(exc).strip().splitlines()[0])}[/]")
        crawls, reasons, (total, offers), held = [], [], (0, 0), []

    not_selected = opt_in_skips(crawls)
    crawls = [crawl for crawl in crawls if crawl[0] not in not_selected]
    table = Table(title="sources")
    for column in ("source", "crawl", "collected", "normalized", "quarantined"):
        table.add_column(column, justify="right" if column not in ("source", "crawl") else "left")
    for source, status, collected, normalized, quarantined, _, _ in crawls:
        table.add_row(source, SHOWN_STATUS[status], str(collected), str(normalized),
                      str(quarantined))
    console.print(table)
    for source, status, *_, reasons_failed, _ in crawls:
        colour = "yellow" if status == "skipped" else "red"
        for failure in ([] if status == "passed" else reasons_failed):
            console.print(f"[{colour}]  {terminal_text(source)}: {terminal_text(failure)}[/]")
    for line in not_selected_lines(not_selected):
        console.print(f"[yellow]  {line}[/]")
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
            details = json.dumps(check.metadata["failures"].value, ensure_ascii=False)
            console.print("    " + terminal_text(details, 600))
    batch_blocked = any(c.asset_key == dg.AssetKey("observation_batch") for c in failed_checks)
    for line in next_steps(crawls, batch_blocked, os.environ.get("GPUPRICES_MODE", "replay")):
        console.print(f"[yellow]  {line}[/]")
    batch = materialized(result, "observation_batch") or {}
    for line in hold_lines(held, batch.get("decisions") or []):
        console.print(f"[yellow]  {line}[/]")
    console.print(sources_line(crawls, held))
    for line in where_the_data_is(result, total, offers) + outputs_summary(result):
        console.print(line)
    published = materialized(result, "feeds", "prices_db") is not None
    if failures:
        steps = ", ".join(terminal_text(step) for step, _ in failures)
        outcome = ("prices.db and the feeds were published all the same (they do not depend on it)"
                   if published else "prices.db and the feeds were left as they were")
        console.print(f"[red bold]run failed[/]: step {steps} failed (its error is at the top); "
                      f"{outcome} (Dagster run {result.run_id}; `make ui` shows its full log).")
        return EXIT_RUN_FAILED
    statuses = [status for _, status, *_ in crawls]
    # a held crawl passed its monitors: its source is a warning, not a failure (it lands when
    # its hold is settled); the run's exit code speaks of this run's crawls alone
    if "failed" in statuses and not {"passed", "held"} & set(statuses):
        console.print("[red bold]every source failed[/]: nothing new was collected; prices.db, "
                      "the feeds and the report were left as they were")
        return EXIT_RUN_FAILED
    if not result.success:   # failed without a failed step (the run itself): say so
        console.print(f"[red bold]run failed[/] (Dagster run {result.run_id}; `make ui` shows "
                      "its full log).")
        return EXIT_RUN_FAILED
    if "failed" in statuses:
        return EXIT_PARTIAL
    return EXIT_OK


def opt_in_skips(crawls: list[tuple]) -> dict[str, str]:
    """{source: why} of the run's opt-in sources it did not name (spiders/default_sources.py):
    not selected, so out of the table and of the exit code."""
    from spiders.default_sources import is_opt_in_skip

    return {source: failures[0].split(";")[0] for source, status, *_, failures, _ in crawls
            if status == "skipped" and is_opt_in_skip(failures)}


def not_selected_lines(not_selected: dict[str, str]) -> list[str]:
    """One line per reason naming its sources (rich markup, escaped), then how to opt in."""
    from spiders.default_sources import HOW_TO_OPT_IN

    by_reason: dict[str, list[str]] = {}
    for source, reason in sorted(not_selected.items()):
        by_reason.setdefault(reason, []).append(source)
    lines = [f"not crawled, {terminal_text(reason)}: {terminal_text(', '.join(names))}"
             for reason, names in sorted(by_reason.items())]
    return lines + ([f"to crawl one: {terminal_text(HOW_TO_OPT_IN)} (`gpuprices sources` says "
                     "why each is opt-in)"] if lines else [])


def keyless_notes(sources) -> list[tuple[str, str]]:
    """(source, note) for each crawled source that has a keyed path but took its public one,
    naming the keys it lacks ("TENCENTCLOUD_SECRET_ID not set: public path, ..."). A source
    skipped for a missing key already says so among the failures."""
    from spiders.source_manifest import manifest

    known, notes = manifest(), []
    for source in sources:
        facts = known.get(source)
        # the manifest's facts, not the spider: importing it (and its vendor SDK) cost seconds
        if facts and facts.key_names and not facts.api_key_required \
                and not facts.keyed():
            notes.append((source, facts.path_note()))
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
    """Where the report is and what became of the alerts (rich markup, escaped). A report not
    written this run is said to be so, naming the older page only when there is one."""
    from spiders.layout import report_path

    report = materialized(result, "report", "price_report")
    if report:
        lines = [f"report: {terminal_text(str(report['path']))}"]
    elif report_path().is_file():
        lines = [f"[yellow]report: not written this run (its step failed, did not run, or no "
                 f"source landed); {terminal_text(str(report_path()))} is from "
                 f"{modified(report_path())}[/]"]
    else:
        lines = ["[yellow]report: not written this run (its step failed, did not run, or no "
                 "source landed)[/]"]
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


def modified(path: Path) -> str:
    """When `path` was last written, UTC, to the minute."""
    stamp = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    return f"{stamp:%Y-%m-%d %H:%M} UTC"


def failed_steps(result) -> list[tuple[str, str]]:
    """(step, its own error's first line) for every step that failed, in the order they failed.
    A step's own error: the exception it raised (a dg.Failure's description), not Dagster's
    wrapper of it."""
    failed = []
    for event in result.all_events:
        if event.is_step_failure:
            error = event.step_failure_data.error
            cause = (error.cause or error) if error else None
            message = cause.message.strip().splitlines()[0] if cause and cause.message.strip() \
                else "no error message"
            failed.append((event.step_key, message))
    return failed


def where_the_data_is(result, total: int, offers: int) -> list[str]:
    """What was published this run and where, naming only files that exist (rich markup)."""
    from spiders.layout import db_path, feeds_dir, raw_dir

    published = materialized(result, "feeds", "prices_db") is not None
    db = db_path()
    counts = f"observations: {total} rows, {offers} offers"
    if published:
        lines = [f"{counts}, published in {terminal_text(str(db))}",
                 f"feeds: {terminal_text(str(feeds_dir()))}"]
    elif db.is_file():
        lines = [f"{counts} in the working database",
                 f"[yellow]prices.db not replaced this run: {terminal_text(str(db))} and the feeds "
                 f"are those published {modified(db)}[/]"]
    else:
        lines = [f"{counts} in the working database",
                 f"[yellow]nothing published yet: {terminal_text(str(db))} does not exist[/]"]
    if raw_dir().is_dir():
        lines.append(f"raw archive: {terminal_text(str(raw_dir()))}")
    if db.is_file():
        lines.append("query: .venv/bin/duckdb -readonly " + terminal_text(str(db))
                     + "   (or: make sql)")
    return lines


def run_rows(run_id: str) -> tuple[list, list, tuple[int, int], list]:
    """The run's crawls, its quarantine reasons, (observation rows, offers) and the crawls held
    now (this run's or earlier), from the working database."""
    from pipelines.resources import duckdb_from_env

    # The run's own connections used this configuration; DuckDB refuses a second, different one
    # to the same file within one process.
    with duckdb_from_env().get_connection() as con:
        by_run = {"run_id": run_id}
        crawls = con.execute(sql_text(__file__, "run_crawls"), by_run).fetchall()
        reasons = con.execute(sql_text(__file__, "run_quarantine_reasons"), by_run).fetchall()
        totals = con.execute(
            "select count(*), count(distinct offer_id) from observations").fetchone()
        held = con.execute(sql_text(__file__, "held_crawls")).fetchall()
    return crawls, reasons, totals, held


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
        steps.append("a blocking check failed on what the judging let through (a defect of the "
                     "judging: docs/robustness.md); the batch stays pending and is retried next "
                     "run; to set a wrong crawl aside: gpuprices reject <crawl_id> --reason '...'")
    return steps


def hold_lines(held: list[tuple], decisions: list[str]) -> list[str]:
    """This run's settlements (observation_batch's `decisions`), then every crawl held now: since
    when, why, and how it settles (rich markup, escaped)."""
    from pipelines.quality.settlement import settle_commands

    lines = [f"decided: {terminal_text(d, 300)}" for d in decisions
             if " held: " not in d]
    for source, crawl_id, since, reason in held:
        when = f"{since:%Y-%m-%d %H:%M} UTC" if since else "?"
        lines.append(f"held: {terminal_text(source)} {terminal_text(crawl_id)} since {when}: "
                     f"{terminal_text(reason or '', 300)}")
    if held:
        lines.append("a held crawl settles by rule (the next crawls confirm its level, or one is "
                     "back at the level before) or by a person: "
                     + terminal_text(settle_commands("<crawl_id>")))
    return lines


def sources_line(crawls: list[tuple], held: list[tuple]) -> str:
    """How this run's sources went: landed, held (a warning), failed."""
    statuses = [status for _, status, *_ in crawls]
    since = min((t for *_, t, _ in held if t), default=None)
    return (f"sources this run: {statuses.count('passed')} landed, {statuses.count('held')} held"
            + (f" (held crawls in all: {len(held)}, the oldest since {since:%Y-%m-%d %H:%M} UTC)"
               if since else "")
            + f", {statuses.count('failed')} failed")


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
