"""`gpuprices report`: the price-history report (one offline HTML page) rebuilt on demand from the
published database; the hourly run writes it too."""

from __future__ import annotations

from pathlib import Path

import click

from pipelines.cli.output import console
from pipelines.cli.published import published_db


@click.command("report")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Where to write the page (default: <data dir>/report/index.html).")
def report_command(out: Path | None) -> None:
    """Write the price-history report (one offline HTML page) from the published database.

    The hourly run writes it too; this rebuilds it on demand, e.g. after `gpuprices simulate`
    with --data-dir. Exit codes: 0 written; 3 no database yet."""
    from pipelines.report import build_report
    from spiders.layout import data_dir

    target = out or data_dir() / "report" / "index.html"
    with published_db("marts.market_claims") as con:
        result = build_report(con, target)
    console.print(f"report: {result.path} ({result.bytes / 1e6:.1f} MB, {result.charts} charts, "
                  f"{result.tables} tables)")
