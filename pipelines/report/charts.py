"""The price-history charts: which charts there are, and each as a plotly figure and its HTML.
A figure is plotly's JSON figure spec built as plain dicts (scatter, layout, chart_figure: with
the keys in the order plotly's own figure objects write them, so the page is the same byte for
byte), not plotly's validating figure objects, which took most of the report's time.
Chart data reaches plotly.js as JSON (plotly escapes `<`, `>` and `/` in it), never as markup;
the only trace names are the fixed line labels below. The points come from marts.chart_points
(dbt_like_sql/marts/chart_points.sql), whose chart keys and line labels are the ones here.

What a line tells is what happened: one line per series AND calendar (the live crawls, or one
archive: two archives' medians are never joined), no line drawn where its point starts a segment
(a gap longer than the calendar's cadence, or another set of vendors behind the median: the
point where the set changed is a diamond whose hover text names who joined and who left), and
dates that say their year."""

from dataclasses import dataclass
from datetime import date, timedelta
from functools import cache
from html import escape
from importlib.metadata import version
from pathlib import Path

import duckdb
import plotly.io as pio
from markupsafe import Markup

from pipelines.display import clean_text
from pipelines.report.queries import named_query
from spiders.file_cache import read_cache, write_cache
from spiders.parsing.card_catalog import MISSION_FAMILIES

# The card families the brief tracks (their one home: the card catalog); RTX4090D (a different,
# cut-down card) is not one of them.
FAMILIES = MISSION_FAMILIES

MARKERS_UP_TO_DAYS = 45    # longer series are drawn as lines only (markers would merge) ...
MARKER_SIZE = 7            # ... except a point no line reaches (a segment of one point)
CRAWL_CALENDAR = "crawl"   # marts' calendar of the live crawls (int_source_calendars.sql)
# An archive's line is dashed, each archive its own way; the live crawls' line is solid.
ARCHIVE_DASHES = ("dot", "dash", "dashdot", "longdash", "longdashdot")
SET_CHANGE_SYMBOL = "diamond"
CHART_HEIGHT_PX = 360
CHART_TEMPLATE = "plotly_white"   # every chart's look, applied once as its HTML is written
MONTH_TICKS_FROM_DAYS = 183  # from half a year on, the axis ticks months, not days
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


def broken_line(points: list[dict], hover: list[list], symbols: list[str] | None = None
                ) -> dict:
    """A line's plotly x, y, customdata and markers (`symbols`: one per point) with a gap
    (None) before each point that starts a segment, and a marker on every point while the line
    is short, then only on the points no line reaches."""
    symbols = symbols or ["circle"] * len(points)
    x: list = []
    y: list = []
    data: list = []
    sizes: list = []
    shapes: list = []
    for i, point in enumerate(points):
        if i and point.get("starts_segment"):
            for column, gap in ((x, None), (y, None), (data, None), (sizes, 0),
                                (shapes, "circle")):
                column.append(gap)
        alone = ((i == 0 or point.get("starts_segment"))
                 and (i + 1 == len(points) or points[i + 1].get("starts_segment")))
        x.append(point["day"].isoformat())
        y.append(round(point["price"], 2))
        data.append(hover[i])
        shapes.append(symbols[i])
        sizes.append(MARKER_SIZE if len(points) <= MARKERS_UP_TO_DAYS or alone
                     or symbols[i] != "circle" else 0)
    return {"x": x, "y": y, "customdata": data, "connectgaps": False,
            "mode": "lines+markers", "marker": {"size": sizes, "symbol": shapes}}


def line_name(label: str, calendar: str) -> str:
    """A line's legend name: the label, and the archive it is read from (not the live crawls)."""
    if calendar == CRAWL_CALENDAR:
        return label
    return f"{label} · {escape(clean_text(calendar, 40), quote=False)} archive"


def archive_dash(calendar: str, calendars: list[str]) -> str:
    if calendar == CRAWL_CALENDAR:
        return "solid"
    archives = [c for c in calendars if c != CRAWL_CALENDAR]
    return ARCHIVE_DASHES[archives.index(calendar) % len(ARCHIVE_DASHES)]


def scatter(**props) -> dict:
    """A scatter trace as plotly's JSON holds it: its properties (and theirs) in name order, as
    plotly's Scatter sets them, then its type."""
    return {**_in_name_order(props), "type": "scatter"}


def _in_name_order(value):
    if isinstance(value, dict):
        return {key: _in_name_order(value[key]) for key in sorted(value)}
    return value


def layout(**props) -> dict:
    """A layout as plotly's JSON holds it after `update_layout(**props)`: at every level the
    nested objects first, then the plain values, each in the order given."""
    return _as_updated(props)


def _as_updated(props: dict) -> dict:
    return {**{key: _as_updated(value) for key, value in props.items() if isinstance(value, dict)},
            **{key: value for key, value in props.items() if not isinstance(value, dict)}}


def chart_figure(traces: list[dict], **layout_props) -> dict:
    """A figure as plotly's JSON: its traces (scatter) and its layout (layout)."""
    return {"data": traces, "layout": layout(**layout_props)}


def figure(family: str, spec: ChartSpec, points: list[dict]) -> dict:
    traces = []
    calendars = sorted({p.get("calendar", CRAWL_CALENDAR) for p in points},
                       key=lambda c: (c != CRAWL_CALENDAR, c))
    for series in spec.order:
        for calendar in calendars:
            line = [p for p in points
                    if p["series"] == series and p.get("calendar", CRAWL_CALENDAR) == calendar]
            if not line:
                continue
            trace = broken_line(
                line, [[p["offers"], p["vendors"], _set_change_text(p)] for p in line],
                [SET_CHANGE_SYMBOL if p.get("vendor_set_change") else "circle" for p in line])
            traces.append(scatter(
                **trace, name=line_name(series, calendar),
                line={"color": COLOURS[series], "width": 2,
                      "dash": archive_dash(calendar, calendars)},
                hovertemplate="%{y:,.2f} CNY/GPU-h · %{customdata[0]} offers, "
                              "%{customdata[1]} vendors %{customdata[2]}"
                              "<extra>%{fullData.name}</extra>"))
    return chart_figure(
        traces, height=CHART_HEIGHT_PX, margin={"l": 56, "r": 12, "t": 44, "b": 8},
        font={"family": FONT_STACK},
        title={"text": f"{family}: {spec.title}", "font": {"size": 15}, "x": 0.02},
        yaxis={"title": {"text": "CNY per GPU-hour"}, "rangemode": "tozero"},
        xaxis=date_axis([p["day"] for p in points]), hovermode="closest",
        legend={"orientation": "h", "yanchor": "top", "y": -0.1, "x": 0, "font": {"size": 11}})


def _set_change_text(point: dict) -> str:
    """The hover text's note that the median's vendors changed here (the line breaks)."""
    change = point.get("vendor_set_change")
    if not change:
        return ""
    return f"· other vendors from here ({escape(clean_text(change, 300), quote=False)})"


def date_axis(days: list[date]) -> dict:
    """Day ticks that always say their year ("Mar 5, 2025"; by month, "Mar 2025", over half a
    year or more, where a day would crowd the axis); a short history gets a day of room either
    side and one tick per day (plotly would otherwise zoom a single day down to milliseconds)."""
    first, last = min(days), max(days)
    months = (last - first).days >= MONTH_TICKS_FROM_DAYS
    axis = {"type": "date", "tickformat": "%b %Y" if months else "%b %-d, %Y",
            "hoverformat": "%Y-%m-%d"}
    if (last - first).days < 14:
        axis["range"] = [(first - timedelta(days=1)).isoformat(),
                         (last + timedelta(days=1)).isoformat()]
        axis["dtick"] = 86_400_000 * max(1, ((last - first).days + 2) // 7)
    return axis


def chart_id(family: str, spec: ChartSpec) -> str:
    return f"chart-{family.lower()}-{spec.key}"


def chart_html(family: str, spec: ChartSpec, points: list[dict], with_plotly_js: bool) -> Markup:
    return plot_html(figure(family, spec, points), chart_id(family, spec), with_plotly_js)


def plot_html(fig: dict, div_id: str, with_plotly_js: bool) -> Markup:
    """A chart's div and script, from plotly itself (trusted markup: the data inside is JSON).
    plotly.js is inlined with the first chart only, so the page works offline. The figures set
    no template: CHART_TEMPLATE goes in here, as JSON made once (first in the layout, where a
    plotly figure object holds it)."""
    return Markup(pio.to_html(
        {"data": fig["data"], "layout": {"template": _template_json(), **fig["layout"]}},
        validate=False, full_html=False, include_plotlyjs=with_plotly_js, div_id=div_id,
        default_height=f"{fig['layout'].get('height') or CHART_HEIGHT_PX}px",
        config={"displaylogo": False, "responsive": True}))


def warm_up() -> None:
    """Make the template's JSON, done by pipelines/warm_up.py while a run's crawl waits, not in
    the report step (read from its memo, milliseconds; made, about 0.5 s of CPU)."""
    _template_json()


# CHART_TEMPLATE's JSON as plotly makes it, remembered between processes: making it loads
# plotly's figure objects and their validators (about 0.5 s of CPU, on the run's path while the
# crawl ends), for the same JSON every time with the same plotly and template.
TEMPLATE_MEMO = Path(__file__).resolve().parent / "__pycache__" / "chart_template.json"


@cache
def _template_json() -> dict:
    """CHART_TEMPLATE as a figure's JSON holds it (its keys in the figure's order): from the memo
    when plotly's version and the template's name are the ones it was made with."""
    key = f"plotly {version('plotly')}, template {CHART_TEMPLATE}"
    stored = read_cache(TEMPLATE_MEMO)
    if stored.get("key") == key and isinstance(stored.get("template"), dict):
        return stored["template"]
    template = made_template_json()
    write_cache(TEMPLATE_MEMO, {"key": key, "template": template})
    return template


def made_template_json() -> dict:
    """CHART_TEMPLATE's JSON made by plotly's figure objects (no memo)."""
    import plotly.graph_objects as go  # plotly's figure objects: only for the template

    return go.Figure(layout={"template": CHART_TEMPLATE}).to_plotly_json()["layout"]["template"]
