"""`gpuprices report`: the price-history report (one offline HTML page) rebuilt on demand from the
published database; the hourly run writes it too."""

from __future__ import annotations

import os
from pathlib import Path

import click

from pipelines.cli.options import DataDirPath
from pipelines.cli.output import console
from pipelines.cli.published import published_db


@click.command("report")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Where to write the page (default: <data dir>/report/index.html).")
@click.option("--data-dir", type=DataDirPath(), default=None,
              help="Read <DIR>/prices.db and write <DIR>/report/index.html, e.g. the directory "
                   "of `gpuprices demo` (same as `gpuprices --data-dir DIR report`).")
def report_command(out: Path | None, data_dir: Path | None) -> None:
    """Write the price-history report (one offline HTML page) from the published database.

    The hourly run writes it too; this rebuilds it on demand, e.g. for the demo history:
    `gpuprices demo` then `gpuprices report --data-dir data/demo`. It reads <data dir>/prices.db
    only (not the file `gpuprices simulate` writes, which `gpuprices demo` publishes as a
    prices.db). Exit codes: 0 written; 3 no database yet."""
    from pipelines.report import build_report
    from spiders.layout import report_path

    if data_dir:
        os.environ["GPUPRICES_DATA_DIR"] = str(data_dir.resolve())
    target = out or report_path()
    with published_db("marts.market_claims") as con:
        result = build_report(con, target)
    console.print(f"report: {result.path} ({result.bytes / 1e6:.1f} MB, {result.charts} charts, "
                  f"{result.tables} tables)")
