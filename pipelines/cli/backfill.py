"""`gpuprices backfill`: real price history from a public price archive's git history.

\b
    gpuprices backfill skypilot-catalog ~/src/skypilot-catalog --clouds aws,gcp --since 2025-01-01
    gpuprices backfill cloud-gpus ~/src/cloud-gpus.github.io
    gpuprices backfill full-stack ~/src/the-full-stack-website --every day
    gpuprices backfill gcp-pricing ~/src/google-cloud-pricing-cost-calculator --since 2024-01-01
"""

from __future__ import annotations

import sys
from datetime import UTC, date, datetime

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from pipelines.backfill.archives import ARCHIVES
from pipelines.cli.exit_codes import EXIT_RUN_FAILED
from pipelines.cli.options import TEXT, NonEmptyPath
from pipelines.cli.output import console
from pipelines.cli.run import hold_run_lock, refuse_unless_ready_to_write
from spiders.layout import db_path

ARCHIVE_NAMES = tuple(ARCHIVES)
EVERY_CHOICES = ("commit", "hour", "day")


def _day(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    try:
        day = date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date (YYYY-MM-DD)",
                                 param_hint=option) from None
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


@click.command("backfill")
@click.argument("archive", type=click.Choice(ARCHIVE_NAMES))
@click.argument("path", type=NonEmptyPath(exists=True, file_okay=False))
@click.option("--since", type=TEXT, metavar="DATE",
              help="Only commits from this UTC day on (YYYY-MM-DD).")
@click.option("--until", type=TEXT, metavar="DATE", help="Only commits before this UTC day.")
@click.option("--clouds", type=TEXT, metavar="A,B",
              help="Only these clouds (e.g. aws,gcp; the source name's part after the colon).")
@click.option("--every", type=click.Choice(EVERY_CHOICES), default="hour", show_default=True,
              help="Read one version per file and hour (or day; or every commit).")
@click.option("--no-build", is_flag=True,
              help="Load the observations only; the next run builds the models.")
def backfill_command(archive: str, path: str, since: str | None, until: str | None,
                     clouds: str | None, every: str, no_build: bool) -> None:
    """Load real price history from a local clone of a public price archive.

    Walks the git history of the archive's files (not the working tree) and loads every row of
    every version read as an observation at its commit's time, through the same normalization,
    quarantine and checks as a crawl, with its provenance (archive, commit, file, line); the
    sources are '<archive>:<cloud>' (skypilot:aws), reached via 'archive'. Run again, it adds
    nothing; interrupted, it resumes. Exit codes: 0 done; 1 a chunk failed its checks (its
    crawls stay pending: see `gpuprices reject`) or the archive cannot be read; 5 locked.
    """
    from pipelines.backfill.git_walk import ArchiveError
    from pipelines.backfill.load import BackfillBlocked, backfill
    from pipelines.backfill.publish import publish_pending

    start, end = _day(since, "--since"), _day(until, "--until")
    if start and end and start >= end:
        raise click.UsageError("--since must be before --until")
    hold_run_lock(f"gpuprices backfill {archive}")
    refuse_unless_ready_to_write()
    wanted = tuple(c.strip().lower() for c in (clouds or "").split(",") if c.strip())
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("commits, {task.fields[offers]:,} offers"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(archive, total=None, offers=0)
        try:
            stats = backfill(archive, path, publish_pending, since=start, until=end,
                             clouds=wanted, every=every,
                             progress=lambda n, total, offers: bar.update(
                                 task, completed=n, total=total, offers=offers))
        except ArchiveError as exc:
            raise click.ClickException(str(exc)) from None
        except BackfillBlocked as exc:
            console.print(f"[red]a chunk failed its checks; its crawls stay pending:[/] {exc}")
            sys.exit(EXIT_RUN_FAILED)
    console.print(f"read {stats.read} versions ({stats.already_read} read before, "
                  f"{stats.unreadable} unreadable) of {stats.versions} chosen: {stats.crawls} "
                  f"crawls, {stats.offers:,} offers; {stats.rows_added:,} new observations, "
                  f"{stats.quarantined:,} quarantined, in {stats.seconds:.1f} s")
    for why, count in sorted(stats.left_out.items()):
        console.print(f"  left out, not offers: {count:,} rows with {why}")
    if not no_build and stats.rows_added:
        build_models()


def build_models() -> None:
    """After a load: the models, feeds, report and published database brought up to date, as a
    run builds them (exit 1 when that fails)."""
    from pipelines.backfill.publish import build_after

    ok, message = build_after()
    if not ok:
        console.print(f"[red]building the models failed:[/] {message}")
        sys.exit(EXIT_RUN_FAILED)
    console.print(f"models, feeds, report and {db_path()} brought up to date")
