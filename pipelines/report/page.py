"""The page: each section's data (sections.py, signals.py) rendered by the Jinja2 templates in
templates/ with autoescape on, then published by rename (pipelines.publish)."""

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import duckdb
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from pipelines.publish import atomic_path
from pipelines.report import sections
from pipelines.report.card_history import card_history
from pipelines.report.charts import FONT_STACK
from pipelines.report.formatting import utc
from pipelines.report.index_charts import index_charts
from pipelines.report.queries import check_tables
from pipelines.report.signals import signals
from pipelines.report.tables import link_cell
from pipelines.warehouse.price_age import use_price_ages


@dataclass(frozen=True)
class ReportResult:
    path: Path
    bytes: int
    charts: int     # plotly charts on the page
    tables: int     # HTML tables on the page


@cache
def environment() -> Environment:
    """Templates from the installed package; every value printed is HTML-escaped."""
    return Environment(loader=PackageLoader("pipelines.report", "templates"), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                       keep_trailing_newline=True)


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)


def link(url: Any) -> Markup:
    """A URL as the page shows it: a link for http(s), text otherwise (see tables.link_cell)."""
    macros = environment().get_template("macros.html.j2").module
    return Markup(macros.cell(link_cell(url)))


def claims_section(con: duckdb.DuckDBPyConnection) -> str:
    """The market-claims scorecard on its own (the page includes the same template)."""
    return render("claims.html.j2", claims=sections.claims(con))


def render_page(con: duckdb.DuckDBPyConnection, generated_at: datetime) -> tuple[str, int, int]:
    """The whole page as a string, in a buyer's order: the cheapest offers and the price history
    per card first, then the market lines, saved workloads and signals, the claims scorecard
    last. Returns (HTML, charts, tables)."""
    row_counts = check_tables(con)
    use_price_ages(con)                        # ages count to today (UTC)
    ages = sections.price_ages(con)
    cards = card_history(con)                  # the first chart on the page brings plotly.js
    index = index_charts(con, with_plotly_js=not cards["charts"])
    history = sections.history(con, with_plotly_js=not (cards["charts"] or index["count"]))
    page = render(
        "page.html.j2", generated=utc(generated_at), font_stack=FONT_STACK,
        simulated=sections.simulated(con),
        header=sections.header(con, row_counts, generated_at), claims=sections.claims(con),
        ages=ages, cards=cards, index=index, history=history,
        cheapest=sections.cheapest(con, ages),
        workloads=sections.workloads(con), signals=signals(con))
    tables = page.count("<table>")  # scraped text is escaped, so only our own tables count
    return page, cards["charts"] + index["count"] + history["charts"], tables


def build_report(con: duckdb.DuckDBPyConnection, out_path: Path | str,
                 generated_at: datetime | None = None) -> ReportResult:
    """Build the page from an open connection (only reads) and publish it at `out_path`: written
    to a temporary file beside it and renamed, so a reader never sees half a page."""
    generated_at = generated_at or datetime.now(UTC)
    page, charts, tables = render_page(con, generated_at)
    out_path = Path(out_path)
    with atomic_path(out_path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(page)
        fh.flush()
        os.fsync(fh.fileno())
    return ReportResult(out_path, out_path.stat().st_size, charts, tables)
