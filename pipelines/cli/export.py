"""`gpuprices export`: every mart of the published database to files, CSV and/or Parquet, or the
hourly offers as SkyPilot catalogs; each file moved into place by an atomic rename."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from pipelines.cli.exit_codes import NoData
from pipelines.cli.options import EXPORT_FORMATS, NonEmptyPath
from pipelines.cli.output import console
from pipelines.cli.output_paths import (
    first_line,
    foreign_files,
    output_dir,
    refuse_foreign,
    write_errors,
)
from pipelines.cli.published import published_db
from pipelines.warehouse.sql_files import not_held_predicate, sql_text


@click.command("export")
@click.option("--out", type=NonEmptyPath(file_okay=False, path_type=Path), metavar="DIR",
              help="Directory to write to (default: <data dir>/export; created if missing).")
@click.option("--bom", is_flag=True,
              help="Start each CSV with a UTF-8 BOM, so Excel reads Chinese text right.")
@click.option("--format", "fmt", type=EXPORT_FORMATS, default="both", show_default=True,
              help="CSV, Parquet, or both; skypilot: <out>/skypilot/<source>/vms.csv.")
@click.option("--force", is_flag=True,
              help="Replace files of the same names that gpuprices did not write.")
def export_command(out: Path | None, bom: bool, fmt: str, force: bool) -> None:
    """Every mart of the published database to files: <mart>.csv and/or <mart>.parquet.

    CSV: UTF-8, a header row, ISO 8601 UTC timestamps (the same as data/feeds/), and beside it
    <mart>.schema.json, the column types. Each file is written to a temporary name and renamed
    into place, so a reader never sees half a file.

    --format skypilot writes SkyPilot's catalog columns instead, one vms.csv per source: one row
    per instance type and region, Price and SpotPrice in USD per instance-hour (hourly on-demand
    and spot offers only).

    \b
    Examples:
      gpuprices export --bom --format csv --out ~/gpu-prices
      gpuprices export --format parquet
      gpuprices export --format skypilot --out ~/.sky/gpuprices

    A file of the same name that is not an export of that mart is not replaced without --force.

    Exit codes: 0 written; 1 --out cannot be written (read-only, no space, permission);
    2 usage error (--out is a file, or holds files gpuprices did not write); 3 no database yet.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from pipelines.publish import publish_feed, sync_directory
    from spiders.layout import export_dir

    option = "--out" if out else "--data-dir"   # the default is under the data directory
    out = output_dir(out or export_dir(), option)
    if fmt == "skypilot":
        export_skypilot(out, force, option)
        return
    kinds = ("csv", "parquet") if fmt == "both" else (fmt,)
    written: list[tuple[Path, int]] = []
    with published_db() as con, write_errors(out, option):
        marts = [f"marts.{t}" for (t,) in con.execute(sql_text(__file__, "mart_tables"))
                 .fetchall()]
        if not marts:
            raise NoData("the published database has no marts yet: run `make run` first")
        refuse_foreign(foreign_export_files(con, out, marts, kinds), option, force,
                       "mart export")
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
                    if "csv" in kinds:   # the CSV's column types travel with it
                        os.replace(result["schema"], out / result["schema"].name)
                progress.advance(task)
    sync_directory(out)   # the renames into `out` survive a crash (the scratch files were not)
    listing = Table(title=f"exported {len(marts)} marts to {out}", title_justify="left")
    listing.add_column("file")
    listing.add_column("rows", justify="right")
    listing.add_column("size", justify="right")
    for path, rows in written:
        listing.add_row(escape(path.name), f"{rows:,}", f"{path.stat().st_size / 1024:,.1f} KiB")
    console.print(listing)
    if bom and "csv" in kinds:
        console.print("[dim]CSV files start with a UTF-8 BOM (for Excel)[/]")


# SkyPilot's vms.csv columns (skypilot-catalog README, schema v7/v8), in the order its generated
# catalogs write them; GpuInfo is left out (SkyPilot reads the columns by name).
SKYPILOT_COLUMNS = {"instance_type": "InstanceType", "accelerator_name": "AcceleratorName",
                    "accelerator_count": "AcceleratorCount", "vcpus": "vCPUs",
                    "memory_gib": "MemoryGiB", "price": "Price", "spot_price": "SpotPrice",
                    "region": "Region", "availability_zone": "AvailabilityZone"}


def export_targets(out: Path, table: str, kinds: tuple[str, ...]) -> list[Path]:
    """The files an export of `table` writes in `out`."""
    name = table.split(".")[-1]
    suffixes = [f".{kind}" for kind in kinds] + ([".schema.json"] if "csv" in kinds else [])
    return [out / f"{name}{suffix}" for suffix in suffixes]


def foreign_export_files(con, out: Path, marts: list[str], kinds: tuple[str, ...]) -> list[Path]:
    """The files the export would replace that are not an export of their mart: a CSV whose
    header is not the mart's columns, a Parquet file whose columns are not, a schema.json that
    names another table (an export of an older version of the mart passes through its schema
    companion)."""
    foreign: list[Path] = []
    for table in marts:
        targets = export_targets(out, table, kinds)
        if not any(os.path.lexists(p) for p in targets):
            continue
        columns = [row[0] for row in con.execute(f"describe {table}").fetchall()]
        schema = out / f"{table.split('.')[-1]}.schema.json"

        def is_own(path: Path, table=table, columns=columns, schema=schema) -> bool:
            if path.name.endswith(".schema.json"):
                return names_table(path, table)
            if path.suffix == ".csv":
                return first_line(path) == ",".join(columns) or names_table(schema, table)
            return parquet_columns(con, path) == columns or names_table(schema, table)
        foreign += foreign_files(targets, is_own)
    return foreign


def names_table(path: Path, table: str) -> bool:
    """Whether `path` is a schema companion gpuprices wrote for `table`."""
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("table") == table
    except (OSError, ValueError, AttributeError):
        return False


def parquet_columns(con, path: Path) -> list[str] | None:
    """The column names of a Parquet file, None when it is not one."""
    import duckdb

    try:
        with open(path, "rb") as fh:
            if fh.read(4) != b"PAR1":
                return None
        return [row[0] for row in con.execute("describe select * from read_parquet(?)",
                                              [str(path)]).fetchall()]
    except (OSError, duckdb.Error):
        return None


def export_skypilot(out: Path, force: bool = False, option: str = "--out") -> None:
    """<out>/skypilot/<source>/vms.csv for every source with hourly on-demand or spot offers:
    SkyPilot keeps one catalog per cloud, and one instance type in one region is one row, so
    each source gets its own file (a source is this project's cloud)."""
    from pipelines.publish import write_text_atomically

    with published_db("marts.latest_prices", "marts.price_outliers") as con:
        catalog = con.execute(sql_text(__file__, "skypilot_catalog").format(
            not_held=not_held_predicate())).df()
    if catalog.empty:
        raise NoData("the published database has no hourly on-demand or spot offers yet")
    header = ",".join(SKYPILOT_COLUMNS.values())
    targets = [out / "skypilot" / str(source) / "vms.csv" for source in sorted(set(
        catalog["source"]))]
    refuse_foreign(foreign_files(targets, lambda path: first_line(path) == header), option,
                   force, "SkyPilot catalog")
    listing = Table(title=f"SkyPilot catalogs in {out / 'skypilot'}", title_justify="left")
    listing.add_column("file")
    listing.add_column("rows", justify="right")
    for source, rows in catalog.groupby("source", sort=True):
        target = out / "skypilot" / str(source) / "vms.csv"
        body = rows[list(SKYPILOT_COLUMNS)].rename(columns=SKYPILOT_COLUMNS)
        with write_errors(target, option):
            write_text_atomically(target, body.to_csv(index=False, lineterminator="\n"))
        listing.add_row(escape(str(target.relative_to(out))), f"{len(rows):,}")
    console.print(listing)
    console.print("[dim]Price and SpotPrice: USD per instance-hour; vCPUs and MemoryGiB empty "
                  "(not listed yet); day/month billing and reserved offers left out[/]")
