"""The price history per card, the first chart a buyer reads: for each of the cards most vendors
list, the daily close per GPU-hour of a few vendors' cheapest whole cards (hourly on-demand), one
line per vendor, from marts.card_history. Days a vendor's card was seen only through a public
price archive (backfilled with `gpuprices backfill`) are drawn as their own dotted line, named
so in the legend and the hover text: history read from an archive is never taken for a crawl.

Vendor names are scraped text and become trace names here: they go through `clean_text` and are
HTML-escaped, because plotly reads a few tags (`<a href>`, `<b>`) in legend and hover text and
decodes the entities back to the characters."""

from html import escape

import duckdb
import plotly.graph_objects as go
from markupsafe import Markup

from pipelines.display import clean_text
from pipelines.report.charts import (
    CHART_HEIGHT_PX,
    FONT_STACK,
    MARKERS_UP_TO_DAYS,
    date_axis,
    plot_html,
)
from pipelines.report.queries import named_query

MAX_CARDS = 8          # the cards listed by the most vendors
MAX_LINES = 6          # per card: its cheapest vendors (more lines would not be readable)
VENDOR_NAME_CHARS = 40
BACKFILLED_SUFFIX = " · archive"   # the legend's name of a vendor's backfilled days
# Distinct at a glance and for the common kinds of colour blindness (Okabe-Ito, then two more).
LINE_COLOURS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#7f7f7f",
                "#000000")


def trace_name(vendor: object) -> str:
    """A vendor name as plotly shows it: hidden characters visible, cut, tags escaped."""
    return escape(clean_text(vendor, VENDOR_NAME_CHARS), quote=False)


def runs(points: list[dict]) -> list[tuple[bool, list[dict]]]:
    """A vendor's points cut where they switch between backfilled and crawled days:
    (backfilled, points) in day order. A crawled run starts at the last backfilled point, so
    the line stays unbroken where the archive's history meets the crawls."""
    out: list[tuple[bool, list[dict]]] = []
    for point in points:
        archived = bool(point.get("backfilled"))
        if out and out[-1][0] == archived:
            out[-1][1].append(point)
        else:
            joined = [out[-1][1][-1]] if out else []
            out.append((archived, [*joined, point]))
    return out


def card_figure(card: str, lines: dict[str, list[dict]]) -> go.Figure:
    """One card's chart: one line per vendor (in `lines` order, cheapest first), its backfilled
    days dotted, under the vendor's name with BACKFILLED_SUFFIX."""
    fig = go.Figure()
    days = []
    for i, (vendor, points) in enumerate(lines.items()):
        days += [p["day"] for p in points]
        colour = LINE_COLOURS[i % len(LINE_COLOURS)]
        shown: set[bool] = set()
        for archived, run in runs(points):
            name = trace_name(vendor) + (BACKFILLED_SUFFIX if archived else "")
            fig.add_trace(go.Scatter(
                x=[p["day"].isoformat() for p in run], y=[round(p["price"], 2) for p in run],
                customdata=[[p["offers"]] for p in run], name=name,
                legendgroup=name, showlegend=archived not in shown,
                mode="lines+markers" if len(points) <= MARKERS_UP_TO_DAYS else "lines",
                line={"color": colour, "width": 2, "dash": "dot" if archived else "solid"},
                marker={"size": 6},
                hovertemplate="%{y:,.2f} CNY/GPU-h · cheapest of %{customdata[0]} offers"
                              + (" · backfilled from a public price archive" if archived else "")
                              + "<extra>%{fullData.name}</extra>"))
            shown.add(archived)
    fig.update_layout(
        template="plotly_white", height=CHART_HEIGHT_PX, font={"family": FONT_STACK},
        margin={"l": 56, "r": 12, "t": 44, "b": 8},
        title={"text": escape(clean_text(card, 60), quote=False), "font": {"size": 15},
               "x": 0.02},
        yaxis={"title": {"text": "CNY per GPU-hour"}, "rangemode": "tozero"},
        xaxis=date_axis(days), hovermode="closest",
        legend={"orientation": "h", "yanchor": "top", "y": -0.1, "x": 0, "font": {"size": 11}})
    return fig


def card_history(con: duckdb.DuckDBPyConnection, with_plotly_js: bool = True) -> dict:
    """One chart per card (cards in order of how many vendors list them), and the number drawn.
    plotly.js comes inlined with the first chart when `with_plotly_js`."""
    cards: dict[str, dict[str, list[dict]]] = {}
    for row in named_query(con, "card_history_lines", [MAX_CARDS, MAX_LINES]):
        cards.setdefault(row["gpu_model"], {}).setdefault(row["vendor"], []).append(row)
    charts = []
    for i, (card, lines) in enumerate(cards.items()):
        html: Markup = plot_html(card_figure(card, lines), f"card-history-{i + 1}",
                                 with_plotly_js and i == 0)
        charts.append({"card": clean_text(card), "vendors": len(lines), "html": html,
                       "days": len({p["day"] for points in lines.values() for p in points}),
                       "backfilled": any(p["backfilled"] for points in lines.values()
                                         for p in points)})
    return {"cards": charts, "charts": len(charts), "max_lines": MAX_LINES,
            "backfilled": any(chart["backfilled"] for chart in charts)}
