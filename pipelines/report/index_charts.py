"""The price index in the report: one chart per card class of the families the brief tracks,
each hourly series (market x offer kind) as its index line, percent of its base day, with its
90 % interval as a band and the plain listing median as a thin dotted line, so the reader sees
what the mix of listings does to a median. Days without enough evidence are gaps. The rows come
from marts.price_index (report/sql/price_index_lines.sql); the table is optional: a database
built before the index, or without a closed day yet, gets a sentence instead."""

from __future__ import annotations

import duckdb

from pipelines.report.charts import (
    CHART_HEIGHT_PX,
    FONT_STACK,
    chart_figure,
    date_axis,
    plot_html,
    scatter,
)
from pipelines.report.queries import named_query, table_names
from pipelines.warehouse.tables import INDEX_TABLE

# The card classes of the families the report tracks (charts.FAMILIES), in the order shown.
INDEX_CARDS = ("A100-80GB", "A100-40GB", "H100/H800 SXM", "H100 PCIe", "H100 NVL", "H800 PCIe",
               "RTX4090")
LINE_COLOURS = {("china", "on_demand"): "#c0392b", ("china", "spot"): "#e59866",
                ("world", "on_demand"): "#1f5fa8", ("world", "spot"): "#5dade2"}
OTHER_COLOUR = "#7f8c8d"


def _figure(card: str, series: dict[str, list[dict]]) -> dict:
    traces = []
    for rows in series.values():
        first = rows[0]
        name = f"{first['market']} {first['offer_kind'].replace('_', '-')}"
        colour = LINE_COLOURS.get((first["market"], first["offer_kind"]), OTHER_COLOUR)
        days = [r["index_date"].isoformat() for r in rows]
        low = [None if r["low_pct"] is None else round(r["low_pct"], 3) for r in rows]
        high = [None if r["high_pct"] is None else round(r["high_pct"], 3) for r in rows]
        traces.append(scatter(x=days, y=high, mode="lines", line={"width": 0},
                                 hoverinfo="skip", showlegend=False, legendgroup=name))
        traces.append(scatter(x=days, y=low, mode="lines", line={"width": 0}, fill="tonexty",
                                 fillcolor=_alpha(colour), hoverinfo="skip", showlegend=False,
                                 legendgroup=name))
        traces.append(scatter(
            x=days, y=[None if r["level_pct"] is None else round(r["level_pct"], 3)
                       for r in rows],
            customdata=[[r["vendors_matched"], r["offers_matched"],
                         r["evidence_lacking"] or ""] for r in rows],
            # markers too: a day alone (the first, or one between gaps) draws no line
            name=f"{name} index", legendgroup=name, mode="lines+markers",
            line={"color": colour, "width": 2.5}, marker={"size": 5},
            hovertemplate="%{y:.2f} · %{customdata[0]} vendors, %{customdata[1]} offers "
                          "%{customdata[2]}<extra>%{fullData.name}</extra>"))
        traces.append(scatter(
            x=days, y=[None if r["median_pct"] is None else round(r["median_pct"], 3)
                       for r in rows],
            name=f"{name} listing median", legendgroup=name, mode="lines",
            line={"color": colour, "width": 1, "dash": "dot"},
            hovertemplate="%{y:.2f}<extra>%{fullData.name}</extra>"))
    all_days = [r["index_date"] for rows in series.values() for r in rows]
    return chart_figure(
        traces, height=CHART_HEIGHT_PX, margin={"l": 56, "r": 12, "t": 44, "b": 8},
        font={"family": FONT_STACK}, title={"text": f"{card}: price index, hourly offers",
                                            "font": {"size": 15}, "x": 0.02},
        yaxis={"title": {"text": "% of the base day"}}, xaxis=date_axis(all_days),
        hovermode="closest",
        legend={"orientation": "h", "yanchor": "top", "y": -0.1, "x": 0, "font": {"size": 11}})


def _alpha(colour: str, alpha: float = 0.18) -> str:
    red, green, blue = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red}, {green}, {blue}, {alpha})"


def index_charts(con: duckdb.DuckDBPyConnection, with_plotly_js: bool) -> dict:
    """{'charts': [{card, html, series, days}], 'count': n, 'available': bool}: one chart per
    card class with a series that printed a level."""
    if INDEX_TABLE not in table_names(con):
        return {"charts": [], "count": 0, "available": False}
    rows = named_query(con, "price_index_lines", [list(INDEX_CARDS)])
    by_card: dict[str, dict[str, list[dict]]] = {}
    for row in rows:
        by_card.setdefault(row["index_card"], {}).setdefault(row["series_id"], []).append(row)
    charts = []
    for card in INDEX_CARDS:
        series = {k: v for k, v in by_card.get(card, {}).items()
                  if any(r["level_pct"] is not None for r in v)}
        if not series:
            continue
        html = plot_html(_figure(card, series), f"index-{card.lower().replace('/', '-')}"
                         .replace(" ", "-"), with_plotly_js and not charts)
        charts.append({"card": card, "html": html, "series": len(series),
                       "days": len({r["index_date"] for v in series.values() for r in v})})
    return {"charts": charts, "count": len(charts), "available": True}
