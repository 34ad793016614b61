"""The public price record's load as `gpuprices run` does it before the job, and `gpuprices
record` after showing it: the versions the working database lacks, with a progress bar and a
one-line summary."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from pipelines.cli.exit_codes import EXIT_RUN_FAILED
from pipelines.cli.output import console

if TYPE_CHECKING:
    from pipelines.backfill.load import Stats


def load_with_progress() -> Stats:
    """The record's versions the working database lacks, loaded and published with a progress
    bar and a one-line summary; the load's Stats. Exits 1 when the bundle cannot be read (nothing
    is loaded) or the pipeline's checks refuse a chunk (its crawls stay pending)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from pipelines.backfill.load import BackfillBlocked
    from pipelines.backfill.publish import publish_pending
    from pipelines.backfill.record import RecordError
    from pipelines.backfill.record_load import load_record
    from pipelines.backfill.record_switch import RECORD_ENV

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
    from pipelines.backfill.record_switch import RECORD_ENV, record_enabled

    if no_record or not record_enabled():
        why = "--no-record" if no_record else f"{RECORD_ENV}=off"
        console.print(f"public price record: left out ({why})")
        return
    load_with_progress()
