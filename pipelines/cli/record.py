"""`gpuprices record`: what the public price record (data/records/) holds, and loading it; and
the record's load as `gpuprices run` does it first (`load_record_before_run`).

\b
    gpuprices record            show the record and load what the database lacks
    gpuprices record --show     only show it
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from pipelines.cli.exit_codes import EXIT_RUN_FAILED
from pipelines.cli.output import console

if TYPE_CHECKING:
    from pipelines.backfill.load import Stats


def show_record() -> None:
    """One line per archive of the record: versions, dates and their kind, offers, size."""
    from pipelines.backfill.record import RECORD_DIR, read_manifest

    parts = read_manifest(RECORD_DIR)
    total = sum((RECORD_DIR / p.file).stat().st_size for p in parts.values()
                if (RECORD_DIR / p.file).exists())
    console.print(f"[bold]public price record[/] in {RECORD_DIR}: {len(parts)} archives, "
                  f"{sum(len(p.versions) for p in parts.values())} versions, "
                  f"{sum(p.rows for p in parts.values()):,} offers, {total:,} bytes")
    for part in parts.values():
        days = sorted(v.committed_at for v in part.versions)
        span = f"{days[0]:%Y-%m-%d} to {days[-1]:%Y-%m-%d}" if days else "no versions"
        kind = "calendar dates (a catalog refresh)" if part.calendar_signal \
            else "edit dates (a curated table)"
        console.print(f"  {part.name}: {part.repository} {', '.join(part.paths)} at "
                      f"{part.head[:12]}; {len(part.versions)} versions ({span}; {kind}; every "
                      f"{part.selection.get('every')}), {part.rows:,} offers")


def load_with_progress() -> Stats:
    """The record's versions the working database lacks, loaded and published with a progress
    bar and a one-line summary; the load's Stats. Exits 1 when the bundle cannot be read (nothing
    is loaded) or the pipeline's checks refuse a chunk (its crawls stay pending)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from pipelines.backfill.load import BackfillBlocked
    from pipelines.backfill.publish import publish_pending
    from pipelines.backfill.record import RecordError
    from pipelines.backfill.record_load import RECORD_ENV, load_record

    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("versions, {task.fields[offers]:,} offers"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("public price record", total=None, offers=0, visible=False)
        try:
            stats = load_record(
                publish_pending,
                on_start=lambda todo: bar.update(task, total=todo, visible=todo > 0),
                progress=lambda n, total, offers: bar.update(task, completed=n,
                                                             offers=offers))
        except RecordError as exc:
            console.print(f"[red]the public price record cannot be read; nothing of it was "
                          f"loaded:[/] {exc} (leave it out: --no-record or {RECORD_ENV}=off)")
            sys.exit(EXIT_RUN_FAILED)
        except BackfillBlocked as exc:
            console.print(f"[red]a chunk of the public price record failed its checks; its "
                          f"crawls stay pending:[/] {exc}")
            sys.exit(EXIT_RUN_FAILED)
    if stats.read:
        console.print(f"public price record: loaded {stats.read} versions ({stats.already_read} "
                      f"loaded before), {stats.offers:,} offers: {stats.rows_added:,} new "
                      f"observations, {stats.quarantined:,} quarantined, in "
                      f"{stats.seconds:.1f} s")
    else:
        console.print(f"public price record: all {stats.already_read} versions already loaded "
                      f"({stats.seconds:.1f} s)")
    return stats


def load_record_before_run(no_record: bool) -> None:
    """What `gpuprices run` does first: the record loaded, unless --no-record or
    GPUPRICES_RECORD=off say otherwise."""
    from pipelines.backfill.record_load import RECORD_ENV, record_enabled

    if no_record or not record_enabled():
        why = "--no-record" if no_record else f"{RECORD_ENV}=off"
        console.print(f"public price record: left out ({why})")
        return
    load_with_progress()


@click.command("record")
@click.option("--show", is_flag=True, help="Only show what the record holds; load nothing.")
@click.option("--no-build", is_flag=True,
              help="Load the observations only; the next run builds the models.")
def record_command(show: bool, no_build: bool) -> None:
    """Show the public price record bundled in data/records/, and load what the database lacks.

    The record holds dated versions of public price archives, parsed (one row per offer, with
    its commit, date, file and line); `gpuprices run` loads it first (--no-record, or
    GPUPRICES_RECORD=off, leaves it out). Loading is idempotent: a version already in the
    database is not loaded again. Exit codes: 0 done; 1 the bundle cannot be read or a chunk
    failed its checks; 5 locked.
    """
    from pipelines.backfill.record import RecordError
    from pipelines.cli.run import hold_run_lock, refuse_unless_ready_to_write

    try:
        show_record()
    except RecordError as exc:
        raise click.ClickException(str(exc)) from None
    if show:
        return
    hold_run_lock("gpuprices record")
    refuse_unless_ready_to_write()
    stats = load_with_progress()
    if not no_build and stats.rows_added:
        from pipelines.cli.backfill import build_models

        build_models()
