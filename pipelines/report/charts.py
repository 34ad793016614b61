"""The price-history charts: which charts there are, and each as a plotly figure and its HTML.
Chart data reaches plotly.js as JSON (plotly escapes `<`, `>` and `/` in it), never as markup;
the only trace names are the fixed line labels below. The points come from marts.chart_points
(dbt_like_sql/marts/chart_points.sql), whose chart keys and line labels are the ones here."""

from dataclasses import dataclass
from datetime import date, timedelta

import duckdb
import plotly.graph_objects as go
import plotly.io as pio
from markupsafe import Markup

from pipelines.report.queries import named_query
from spiders.parsing.card_catalog import MISSION_FAMILIES

# The card families the brief tracks (their one home: the card catalog); RTX4090D (a different,
# cut-down card) is not one of them.
FAMILIES = MISSION_FAMILIES

MARKERS_UP_TO_DAYS = 45    # longer series are drawn as lines only (markers would merge)
CHART_HEIGHT_PX = 360
# The page's and the charts' fonts: Latin first, then a Chinese font of each desktop (Windows,
# macOS, Linux with Debian's fonts-noto-cjk), so 阿里云 or 北京 never shows as boxes.
FONT_STACK = ('system-ui, -apple-system, "Segoe UI", "Microsoft YaHei", "PingFang SC", '
              '"Noto Sans CJK SC", "Noto Sans SC", "Noto Sans", sans-serif')


@dataclass(frozen=True)
class ChartSpec:
    key: str                    # the chart's key in marts.chart_points
    title: str
    scope: str                  # which offers, in words (shown under the chart)
    order: tuple[str, ...]      # lines in this order, each with a fixed colour


CHARTS = (
    ChartSpec("whole-vs-slice", "Whole card vs slice", "hourly on-demand offers",
              ("whole card", "slice")),
    ChartSpec("region", "By region", "whole cards, hourly on-demand offers",
              ("China tier-1 cities", "Inner Mongolia", "Guizhou", "Jiangsu", "China, other",
               "US", "Other countries")),
    ChartSpec("spot", "Spot vs on-demand", "whole cards, hourly offers", ("on-demand", "spot")),
)

COLOURS = {"whole card": "#1f5fa8", "slice": "#d9822b", "China tier-1 cities": "#c0392b",
           "Inner Mongolia": "#2e8b57", "Guizhou": "#8e44ad", "Jiangsu": "#d4a017",
           "China, other": "#7f8c8d", "US": "#1f5fa8", "Other countries": "#5dade2",
           "on-demand": "#1f5fa8", "spot": "#27ae60"}


def chart_points(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], list[dict]]:
    """The points of every chart, by (chart key, family): day, series, price, offers, vendors."""
    points: dict[tuple[str, str], list[dict]] = {}
    for row in named_query(con, "family_chart_points", [list(FAMILIES)]):
        points.setdefault((row["chart"], row["gpu_family"]), []).append(row)
    return points


def figure(family: str, spec: ChartSpec, points: list[dict]) -> go.Figure:
    fig = go.Figure()
    for series in spec.order:
        line = [p for p in points if p["series"] == series]
        if not line:
            continue
        fig.add_trace(go.Scatter(
            x=[p["day"].isoformat() for p in line], y=[round(p["price"], 2) for p in line],
            customdata=[[p["offers"], p["vendors"]] for p in line],
            # markers while the history is short: a single day still shows as a point
            name=series, mode="lines+markers" if len(line) <= MARKERS_UP_TO_DAYS else "lines",
            line={"color": COLOURS[series], "width": 2}, marker={"size": 7},
            hovertemplate="%{y:,.2f} CNY/GPU-h · %{customdata[0]} offers, "
                          "%{customdata[1]} vendors<extra>%{fullData.name}</extra>"))
    fig.update_layout(
        template="plotly_white", height=CHART_HEIGHT_PX, margin={"l": 56, "r": 12, "t": 44, "b": 8},
        font={"family": FONT_STACK},
        title={"text": f"{family}: {spec.title}", "font": {"size": 15}, "x": 0.02},
        yaxis={"title": {"text": "CNY per GPU-hour"}, "rangemode": "tozero"},
        xaxis=date_axis([p["day"] for p in points]), hovermode="closest",
        legend={"orientation": "h", "yanchor": "top", "y": -0.1, "x": 0, "font": {"size": 11}})
    return fig


def date_axis(days: list[date]) -> dict:
    """Day ticks; a short history gets a day of room either side and one tick per day (plotly
    would otherwise zoom a single day down to milliseconds)."""
    axis = {"type": "date", "tickformat": "%b %-d", "hoverformat": "%Y-%m-%d"}
    first, last = min(days), max(days)
    if (last - first).days < 14:
        axis["range"] = [(first - timedelta(days=1)).isoformat(),
                         (last + timedelta(days=1)).isoformat()]
        axis["dtick"] = 86_400_000 * max(1, ((last - first).days + 2) // 7)
    return axis


def chart_id(family: str, spec: ChartSpec) -> str:
    return f"chart-{family.lower()}-{spec.key}"


def chart_html(family: str, spec: ChartSpec, points: list[dict], with_plotly_js: bool) -> Markup:
    return plot_html(figure(family, spec, points), chart_id(family, spec), with_plotly_js)


def plot_html(fig: go.Figure, div_id: str, with_plotly_js: bool) -> Markup:
    """A chart's div and script, from plotly itself (trusted markup: the data inside is JSON).
    plotly.js is inlined with the first chart only, so the page works offline."""
    return Markup(pio.to_html(
        fig, full_html=False, include_plotlyjs=with_plotly_js, div_id=div_id,
        default_height=f"{fig.layout.height or CHART_HEIGHT_PX}px",
        config={"displaylogo": False, "responsive": True}))
