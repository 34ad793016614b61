"""The price history per card, the first chart a buyer reads: for each of the cards most vendors
list, the daily close per GPU-hour of a few vendors' cheapest whole cards (hourly on-demand), one
line per vendor and record, from marts.card_history. A vendor read from two records (two public
price archives, or an archive and the live crawls) is two lines, never one alternating between
tables that disagree; a line read from an archive (backfilled with `gpuprices backfill`) is
dashed and named so in the legend and the hover text: history read from an archive is never
taken for a crawl. No line is drawn across a gap longer than its source's cadence.

Vendor names are scraped text and become trace names here: they go through `clean_text` and are
HTML-escaped, because plotly reads a few tags (`<a href>`, `<b>`) in legend and hover text and
decodes the entities back to the characters."""

from html import escape

import duckdb
from markupsafe import Markup

from pipelines.display import clean_text
from pipelines.report.charts import (
    CHART_HEIGHT_PX,
    CRAWL_CALENDAR,
    FONT_STACK,
    archive_dash,
    broken_line,
    chart_figure,
    date_axis,
    line_name,
    plot_html,
    scatter,
)
from pipelines.report.queries import named_query

MAX_CARDS = 8          # the cards listed by the most vendors
MAX_LINES = 6          # per card: its cheapest lines (more lines would not be readable)
VENDOR_NAME_CHARS = 40
# Distinct at a glance and for the common kinds of colour blindness (Okabe-Ito, then two more).
LINE_COLOURS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#7f7f7f",
                "#000000")


def trace_name(vendor: object) -> str:
    """A vendor name as plotly shows it: hidden characters visible, cut, tags escaped."""
    return escape(clean_text(vendor, VENDOR_NAME_CHARS), quote=False)


def card_figure(card: str, lines: dict[tuple[str, str], list[dict]]) -> dict:
    """One card's chart: one line per (vendor, source) in `lines` order (cheapest first), a
    vendor's lines in one colour, an archive's dashed and named after it, each broken where a
    point starts a segment."""
    traces = []
    days = []
    colours: dict[str, str] = {}
    calendars = sorted({p["calendar"] for points in lines.values() for p in points},
                       key=lambda c: (c != CRAWL_CALENDAR, c))
    for (vendor, _source), points in lines.items():
        days += [p["day"] for p in points]
        colour = colours.setdefault(vendor, LINE_COLOURS[len(colours) % len(LINE_COLOURS)])
        archived = bool(points[0]["backfilled"])
        calendar = points[0]["calendar"]
        traces.append(scatter(
            **broken_line(points, [[p["offers"], escape(clean_text(p["source"], 60), quote=False)]
                                   for p in points]),
            name=line_name(trace_name(vendor), calendar),
            line={"color": colour, "width": 2, "dash": archive_dash(calendar, calendars)},
            hovertemplate="%{y:,.2f} CNY/GPU-h · cheapest of %{customdata[0]} offers · "
                          + ("backfilled from a public price archive, "
                             if archived else "crawled, ")
                          + "%{customdata[1]}<extra>%{fullData.name}</extra>"))
    return chart_figure(
        traces, height=CHART_HEIGHT_PX, font={"family": FONT_STACK},
        margin={"l": 56, "r": 12, "t": 44, "b": 8},
        title={"text": escape(clean_text(card, 60), quote=False), "font": {"size": 15},
               "x": 0.02},
        yaxis={"title": {"text": "CNY per GPU-hour"}, "rangemode": "tozero"},
        xaxis=date_axis(days), hovermode="closest",
        legend={"orientation": "h", "yanchor": "top", "y": -0.1, "x": 0, "font": {"size": 11}})


def card_history(con: duckdb.DuckDBPyConnection, with_plotly_js: bool = True) -> dict:
    """One chart per card (cards in order of how many vendors list them), and the number drawn.
    plotly.js comes inlined with the first chart when `with_plotly_js`."""
    cards: dict[str, dict[tuple[str, str], list[dict]]] = {}
    for row in named_query(con, "card_history_lines", [MAX_CARDS, MAX_LINES]):
        cards.setdefault(row["gpu_model"], {}).setdefault(
            (row["vendor"], row["source"]), []).append(row)
    charts = []
    for i, (card, lines) in enumerate(cards.items()):
        html: Markup = plot_html(card_figure(card, lines), f"card-history-{i + 1}",
                                 with_plotly_js and i == 0)
        charts.append({"card": clean_text(card),
                       "vendors": len({vendor for vendor, _ in lines}), "lines": len(lines),
                       "html": html,
                       "days": len({p["day"] for points in lines.values() for p in points}),
                       "backfilled": any(p["backfilled"] for points in lines.values()
                                         for p in points)})
    return {"cards": charts, "charts": len(charts), "max_lines": MAX_LINES,
            "backfilled": any(chart["backfilled"] for chart in charts)}
