"""`gpuprices export`: every mart of the published database to files, CSV and/or Parquet, each
moved into place by an atomic rename."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from pipelines.cli.exit_codes import NoData
from pipelines.cli.options import EXPORT_FORMATS
from pipelines.cli.output import console
from pipelines.cli.published import published_db
from pipelines.warehouse.sql_files import sql_text


@click.command("export")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Directory to write to (default: <data dir>/export; created if missing).")
@click.option("--bom", is_flag=True,
              help="Start each CSV with a UTF-8 BOM, so Excel reads Chinese text right.")
@click.option("--format", "fmt", type=EXPORT_FORMATS, default="both", show_default=True,
              help="CSV, Parquet, or both.")
def export_command(out: Path | None, bom: bool, fmt: str) -> None:
    """Every mart of the published database to files: <mart>.csv and/or <mart>.parquet.

    CSV: UTF-8, a header row, ISO 8601 UTC timestamps (the same as data/feeds/). Each file is
    written to a temporary name and renamed into place, so a reader never sees half a file.

    \b
    Examples:
      gpuprices export --bom --format csv --out ~/gpu-prices
      gpuprices export --format parquet

    Exit codes: 0 written; 3 no database yet.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from pipelines.publish import publish_feed
    from spiders.layout import data_dir

    out = (out or data_dir() / "export").expanduser().resolve()
    kinds = ("csv", "parquet") if fmt == "both" else (fmt,)
    written: list[tuple[Path, int]] = []
    with published_db() as con:
        marts = [f"marts.{t}" for (t,) in con.execute(sql_text(__file__, "mart_tables"))
                 .fetchall()]
        if not marts:
            raise NoData("the published database has no marts yet: run `make run` first")
        out.mkdir(parents=True, exist_ok=True)
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      console=console, transient=True) as progress:
            task = progress.add_task("exporting", total=len(marts))
            for table in marts:
                progress.update(task, description=f"exporting {table}")
                # publish_feed writes both formats; it writes into a scratch directory next to
                # `out` and only the asked-for files are moved over, each by an atomic rename
                with tempfile.TemporaryDirectory(dir=out, prefix=".export-") as scratch:
                    result = publish_feed(con, table, Path(scratch), bom)
                    for kind in kinds:
                        target = out / result[kind].name
                        os.replace(result[kind], target)
                        written.append((target, result["rows"]))
                progress.advance(task)
    listing = Table(title=f"exported {len(marts)} marts to {out}", title_justify="left")
    listing.add_column("file")
    listing.add_column("rows", justify="right")
    listing.add_column("size", justify="right")
    for path, rows in written:
        listing.add_row(escape(path.name), f"{rows:,}", f"{path.stat().st_size / 1024:,.1f} KiB")
    console.print(listing)
    if bom and "csv" in kinds:
        console.print("[dim]CSV files start with a UTF-8 BOM (for Excel)[/]")
