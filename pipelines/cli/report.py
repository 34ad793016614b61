"""`gpuprices report`: the price-history report (one offline HTML page) rebuilt on demand from the
published database; the hourly run writes it too."""

from __future__ import annotations

import os
from pathlib import Path

import click

from pipelines.cli.options import DataDirPath, NonEmptyPath
from pipelines.cli.output import console
from pipelines.cli.output_paths import is_report_page, output_file, write_errors
from pipelines.cli.published import published_db


@click.command("report")
@click.option("--out", type=NonEmptyPath(dir_okay=False, path_type=Path), metavar="FILE",
              help="Where to write the page (default: <data dir>/report/index.html).")
@click.option("--data-dir", type=DataDirPath(), default=None,
              help="Read <DIR>/prices.db and write <DIR>/report/index.html, e.g. the directory "
                   "of `gpuprices demo` (same as `gpuprices --data-dir DIR report`).")
@click.option("--force", is_flag=True,
              help="Replace a file at --out that is not a gpuprices report page.")
def report_command(out: Path | None, data_dir: Path | None, force: bool) -> None:
    """Write the price-history report (one offline HTML page) from the published database.

    The hourly run writes it too; this rebuilds it on demand, e.g. for the demo history:
    `gpuprices demo` then `gpuprices report --data-dir data/demo`. It reads <data dir>/prices.db
    only (not the file `gpuprices simulate` writes, which `gpuprices demo` publishes as a
    prices.db). An existing file at --out that is not a gpuprices report is not replaced without
    --force. Exit codes: 0 written; 1 the page cannot be written there (read-only, no space,
    permission); 2 usage error (--out is a directory, a device or a foreign file); 3 no
    database yet."""
    from pipelines.report import build_report
    from spiders.layout import report_path

    if data_dir:
        os.environ["GPUPRICES_DATA_DIR"] = str(data_dir.resolve())
    option = "--out" if out else "--data-dir"
    target = output_file(out or report_path(), option, force=force, is_own=is_report_page,
                         kind="report page")
    with published_db("marts.market_claims") as con, write_errors(target, option):
        result = build_report(con, target)
    console.print(f"report: {result.path} ({result.bytes / 1e6:.1f} MB, {result.charts} charts, "
                  f"{result.tables} tables)")
