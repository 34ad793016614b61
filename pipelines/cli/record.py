"""`gpuprices record`: what the public price record (data/records/) holds, and loading it (as
`gpuprices run` does first: record_progress.py).

\b
    gpuprices record            show the record and load what the database lacks
    gpuprices record --show     only show it
"""

from __future__ import annotations

import click

from pipelines.cli.output import console


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
    from pipelines.cli.record_progress import load_with_progress
    from pipelines.cli.run import (
        hold_run_lock,
        refuse_unless_ready_to_write,
        refuse_unusable_data_dir,
    )

    try:
        show_record()
    except RecordError as exc:
        raise click.ClickException(str(exc)) from None
    if show:
        return
    refuse_unusable_data_dir()
    hold_run_lock("gpuprices record")
    refuse_unless_ready_to_write()
    stats = load_with_progress()
    if not no_build and stats.rows_added:
        from pipelines.cli.backfill import build_models

        build_models()
