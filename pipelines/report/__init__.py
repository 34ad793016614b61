"""The price-history report: one self-contained HTML page built from the DuckDB database.

The page shows what the marts say; it computes nothing of its own except the daily medians the
charts plot. Vendor names, skus, region codes and URLs come from scraped web pages, so every
value put into HTML goes through `text()` (control characters made visible, long values cut,
then `html.escape`), links are kept only for http(s) URLs, and chart data reaches plotly.js as
JSON, never as markup. plotly.js is inlined once, with the first chart, so the page works offline
from a file:// URL (it is most of the page's ~4.8 MB).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import duckdb
import plotly.graph_objects as go
import plotly.io as pio

from pipelines.display import HIDDEN_CHARS as _HIDDEN_CHARS
from pipelines.display import MAX_TEXT_CHARS, clean_text

# The card families the brief tracks; RTX4090D (a different, cut-down card) is left out.
FAMILIES = ("A100", "H100", "H800", "RTX4090")

# Every table the page reads (the asset depends on exactly these).
REPORT_TABLES = (
    "observations", "quarantine", "intermediate.int_offer_daily", "marts.latest_prices",
    "marts.cheapest_offers", "marts.slice_to_whole_ratio", "marts.regional_discount",
    "marts.spot_discount", "marts.monthly_vs_hourly_saving", "marts.multi_gpu_discount",
    "marts.month_end_dip", "marts.month_end_capacity", "marts.market_claims",
)
# Written by the advisor asset; optional: the page says so when it is not there yet.
ADVICE_TABLE = "advisor.workload_advice"

MAX_URL_CHARS = 2048        # longer URLs are not made into links


class ReportError(RuntimeError):
    pass


@dataclass(frozen=True)
class ReportResult:
    path: Path
    bytes: int
    charts: int     # plotly charts on the page
    tables: int     # HTML tables on the page


# ── text and numbers ────────────────────────────────────────────────────────────────────────────

def text(value: Any, limit: int = MAX_TEXT_CHARS) -> str:
    """Any value, safe inside an HTML element or a quoted attribute."""
    return escape(clean_text(value, limit), quote=True)


def _num(value: Any) -> float | None:
    return None if value is None else float(value)


def price(value: Any) -> str:
    v = _num(value)
    return "—" if v is None else f"{v:,.2f}"


def pct(value: Any, signed: bool = False) -> str:
    v = _num(value)
    if v is None:
        return "—"
    v = round(v, 1) + 0.0       # no "-0.0 %"
    return f"{v:+.1f} %" if signed else f"{v:.1f} %"


def ratio_pct(value: Any) -> str:
    """A ratio (0.33) as a percentage (33.0 %)."""
    v = _num(value)
    return "—" if v is None else f"{100 * v:.1f} %"


def times(value: Any) -> str:
    v = _num(value)
    return "—" if v is None else f"×{v:.2f}"


def count(value: Any) -> str:
    return "—" if value is None else f"{int(value):,}"


def fraction(value: Any) -> str:
    v = _num(value)
    return "—" if v is None else ("whole" if v == 1 else f"{v:g}")


def plain(value: Any) -> str:
    """A measured figure: thousands without decimals (9,350), others with at most two (33.2)."""
    v = _num(value)
    if v is None:
        return "—"
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.2f}".rstrip("0").rstrip(".")


def kind(value: Any) -> str:
    return clean_text(value).replace("_", "-")


def utc(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, datetime):
        value = value.astimezone(timezone.utc) if value.tzinfo else value
        return value.strftime("%Y-%m-%d %H:%M UTC")
    if isinstance(value, date):
        return value.isoformat()
    return clean_text(value)


def link(url: Any) -> str:
    """An http(s) URL as a link showing its host; anything else (javascript:, data:, junk) as
    plain text, so a scraped URL can never run code."""
    raw = "" if url is None else str(url)
    try:
        parts = urlsplit(raw)
    except ValueError:
        parts = None
    if (parts is None or parts.scheme.lower() not in ("http", "https") or not parts.netloc
            or len(raw) > MAX_URL_CHARS or _HIDDEN_CHARS.search(raw)):
        return text(raw) if raw else "—"
    return (f'<a href="{escape(raw, quote=True)}" rel="noopener noreferrer nofollow">'
            f"{text(parts.hostname or parts.netloc)}</a>")


# ── tables ──────────────────────────────────────────────────────────────────────────────────────

@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[[dict], str]     # row -> HTML (already escaped)
    css: str = ""                   # "num": right-aligned figures; "nw": no wrapping


def col(header: str, key: str, fmt: Callable[[Any], str] = clean_text, css: str = "") -> Column:
    """A column showing row[key] formatted by `fmt`; the result is escaped here."""
    return Column(header, lambda row: escape(fmt(row.get(key)), quote=True), css)


def render_table(columns: Sequence[Column], rows: Iterable[dict], empty: str) -> str:
    """A table of `rows`, or the sentence `empty` when there are none."""
    rows = list(rows)
    if not rows:
        return f'<p class="empty">{escape(empty)}</p>'
    head = "".join(f'<th class="{c.css}">{escape(c.header)}</th>' for c in columns)
    body = "".join("<tr>" + "".join(f'<td class="{c.css}">{c.cell(row)}</td>' for c in columns)
                   + "</tr>" for row in rows)
    return (f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def records(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = ()) -> list[dict]:
    cursor = con.execute(sql, list(params))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def latest_day(con: duckdb.DuckDBPyConnection, table: str, column: str = "day") -> date | None:
    return con.execute(f"select max({column}) from {table}").fetchone()[0]


# ── header ──────────────────────────────────────────────────────────────────────────────────────

def check_tables(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Row count of every table the page reads; a missing one is an error naming it."""
    known = {f"{s}.{t}" if s != "main" else t for s, t in con.execute(
        "select table_schema, table_name from information_schema.tables").fetchall()}
    missing = [t for t in REPORT_TABLES if t not in known]
    if missing:
        raise ReportError(f"the report reads tables that do not exist: {', '.join(missing)} "
                          "(build the SQL models of dbt_like_sql/ first)")
    return {t: con.execute(f"select count(*) from {t}").fetchone()[0] for t in REPORT_TABLES}


def header_section(con: duckdb.DuckDBPyConnection, row_counts: dict[str, int],
                   generated_at: datetime) -> str:
    span = con.execute("select min(observed_at), max(observed_at), "
                       "count(distinct timezone('UTC', observed_at)::date), "
                       "count(distinct source), count(distinct offer_id) "
                       "from observations").fetchone()
    first, last, days, sources, offers = span
    time_range = (f"{utc(first)} → {utc(last)} ({days:,} day{'s' if days != 1 else ''})"
                  if first else "no observations yet")
    facts = [("data", time_range), ("sources", f"{sources:,}"), ("offers", f"{offers:,}"),
             ("observations", f"{row_counts['observations']:,}"),
             ("quarantined", f"{row_counts['quarantine']:,}"),
             ("generated", utc(generated_at))]
    facts_html = "".join(f"<div><dt>{escape(k)}</dt><dd>{escape(v)}</dd></div>" for k, v in facts)
    source_rows = records(con, """
        select source, any_value(vendor) as vendor, any_value(vendor_kind) as vendor_kind,
               count(*) as observations, count(distinct offer_id) as offers,
               min(observed_at) as first_seen, max(observed_at) as last_seen
        from observations group by source order by source""")
    sources_table = render_table(
        [col("source", "source"), col("vendor", "vendor"), col("kind", "vendor_kind"),
         col("observations", "observations", count, "num"), col("offers", "offers", count, "num"),
         col("first seen", "first_seen", utc), col("last seen", "last_seen", utc)],
        source_rows, "No source has landed observations yet.")
    counts_table = render_table(
        [col("table", "table"), col("rows", "rows", count, "num")],
        [{"table": t, "rows": n} for t, n in row_counts.items()], "")
    return (f'<header><h1>GPU rental prices</h1>'
            f'<p class="lede">Price per whole-GPU-equivalent hour in CNY (a month = 730 h), from '
            f'the gpuprices database.</p><dl class="facts">{facts_html}</dl>'
            f'<details><summary>Sources ({sources:,})</summary>{sources_table}</details>'
            f'<details><summary>Row counts of the tables this page reads</summary>'
            f'{counts_table}</details></header>')


# ── charts ──────────────────────────────────────────────────────────────────────────────────────

@dataclass(frozen=True)
class ChartSpec:
    key: str
    title: str
    scope: str                  # which offers, in words (shown under the chart)
    where: str                  # SQL filter on intermediate.int_offer_daily (constant, not data)
    series: str                 # SQL expression naming the line an offer belongs to
    order: tuple[str, ...]      # lines in this order, each with a fixed colour


REGION_SERIES = """case
        when country = 'CN' and is_tier1_city then 'China tier-1 cities'
        when country = 'CN' and province_or_state in ('Inner Mongolia', 'Guizhou', 'Jiangsu')
            then province_or_state
        when country = 'CN' then 'China, other'
        when country = 'US' then 'US'
        else 'Other countries'
    end"""

CHARTS = (
    ChartSpec("whole-vs-slice", "Whole card vs slice", "hourly on-demand offers",
              "offer_kind = 'on_demand'",
              "case when gpu_fraction < 1 then 'slice' else 'whole card' end",
              ("whole card", "slice")),
    ChartSpec("region", "By region", "whole cards, hourly on-demand offers",
              "gpu_fraction = 1 and offer_kind = 'on_demand'", REGION_SERIES,
              ("China tier-1 cities", "Inner Mongolia", "Guizhou", "Jiangsu", "China, other",
               "US", "Other countries")),
    ChartSpec("spot", "Spot vs on-demand", "whole cards, hourly offers",
              "gpu_fraction = 1 and offer_kind in ('on_demand', 'spot')",
              "replace(offer_kind, '_', '-')", ("on-demand", "spot")),
)

MARKERS_UP_TO_DAYS = 45    # longer series are drawn as lines only (markers would merge)

COLOURS = {"whole card": "#1f5fa8", "slice": "#d9822b", "China tier-1 cities": "#c0392b",
           "Inner Mongolia": "#2e8b57", "Guizhou": "#8e44ad", "Jiangsu": "#d4a017",
           "China, other": "#7f8c8d", "US": "#1f5fa8", "Other countries": "#5dade2",
           "on-demand": "#1f5fa8", "spot": "#27ae60"}


def chart_series(con: duckdb.DuckDBPyConnection, spec: ChartSpec) -> list[dict]:
    """Per family, line and day: the median over vendors of each vendor's median close price,
    so a vendor listing one price in twenty regions counts once (as in marts.regional_discount)."""
    families = ", ".join(f"'{f}'" for f in FAMILIES)
    return records(con, f"""
        with offers as (
            select observed_date as day, gpu_family, vendor, offer_id,
                   close_price_cny_per_gpu_hour as price, {spec.series} as series
            from intermediate.int_offer_daily
            where billing_period = 'hour' and gpu_family in ({families}) and {spec.where}
        ),
        per_vendor as (
            select day, gpu_family, series, vendor, median(price) as vendor_price,
                   count(distinct offer_id) as offers
            from offers group by day, gpu_family, series, vendor
        )
        select gpu_family, series, day, median(vendor_price)::double as price,
               sum(offers)::integer as offers, count(*)::integer as vendors
        from per_vendor group by gpu_family, series, day
        order by gpu_family, series, day""")


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
        template="plotly_white", height=360, margin={"l": 56, "r": 12, "t": 44, "b": 8},
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


def chart_sections(con: duckdb.DuckDBPyConnection) -> tuple[str, int]:
    """One section per card family with one chart per ChartSpec; returns (HTML, charts)."""
    series = {spec.key: chart_series(con, spec) for spec in CHARTS}
    parts, charts = [], 0
    for family in FAMILIES:
        cells = []
        for spec in CHARTS:
            points = [p for p in series[spec.key] if p["gpu_family"] == family]
            note = f"{spec.scope}; median over vendors of each vendor's median daily close"
            if not points:
                cells.append(f'<figure class="no-chart"><p class="empty">{escape(family)}: no '
                             f'{escape(spec.scope)} for “{escape(spec.title)}”.</p></figure>')
                continue
            div = pio.to_html(
                figure(family, spec, points), full_html=False,
                include_plotlyjs=charts == 0,   # plotly.js once, inlined: the page works offline
                div_id=f"chart-{family.lower()}-{spec.key}", default_height="360px",
                config={"displaylogo": False, "responsive": True})
            cells.append(f'<figure class="chart" data-family="{escape(family)}" '
                         f'data-chart="{escape(spec.key)}">{div}'
                         f'<figcaption>{escape(note)}</figcaption></figure>')
            charts += 1
        parts.append(f'<section class="family"><h3>{escape(family)}</h3>'
                     f'<div class="chart-grid">{"".join(cells)}</div></section>')
    return (f'<section id="history"><h2>Price history</h2>'
            f'<p>Median price per GPU-hour per day (CNY). Hover a point for the offers and '
            f'vendors behind it.</p>{"".join(parts)}</section>', charts)


# ── cheapest offers ─────────────────────────────────────────────────────────────────────────────

def listed(row: dict) -> str:
    amount = _num(row.get("price_amount"))
    if amount is None:
        return "—"
    return f"{amount:,.2f} {clean_text(row.get('currency'), 8)} / {row.get('billing_period')}"


def instance(row: dict) -> str:
    count_, frac = row.get("gpu_count"), _num(row.get("gpu_fraction"))
    return f"{frac:g} of a card" if frac is not None and frac < 1 else f"{count_} × card"


def cheapest_section(con: duckdb.DuckDBPyConnection) -> str:
    rows = records(con, """
        select * from marts.cheapest_offers where rank = 1
        order by gpu_model, offer_kind, billing_period, price_per_gpu_hour_cny, vendor""")
    best: dict[tuple, dict] = {}
    for row in rows:   # ordered by price: the first row per card, kind and period is the cheapest
        best.setdefault((row["gpu_model"], row["offer_kind"], row["billing_period"]), row)
    columns = [
        col("card", "gpu_model", css="nw"), col("kind", "offer_kind", kind, "nw"),
        col("billing", "billing_period"),
        col("CNY / GPU-h", "price_per_gpu_hour_cny", price, "num"),
        Column("listed", lambda r: escape(listed(r)), "num"),
        Column("instance", lambda r: escape(instance(r)), "nw"),
        col("vendor", "vendor"), col("sku", "sku"),
        Column("region", lambda r: f'{text(r.get("region_group"))} '
                                   f'<span class="muted">{text(r.get("region_code"))}</span>'),
        col("last seen", "last_seen_at", utc, "nw"), Column("page", lambda r: link(r.get("url"))),
    ]
    overall = render_table(columns, best.values(), "No offers yet.")
    by_region = render_table(columns, rows, "No offers yet.")
    return (f'<section id="cheapest"><h2>Cheapest offers now</h2>'
            f'<p>The cheapest offer per card, offer kind and billing period, anywhere '
            f'(from <code>marts.cheapest_offers</code>, rank 1, by latest price).</p>{overall}'
            f'<details><summary>Cheapest per region ({len(rows):,} rows)</summary>{by_region}'
            f'</details></section>')


# ── signals ─────────────────────────────────────────────────────────────────────────────────────

def _on_latest(con: duckdb.DuckDBPyConnection, table: str) -> tuple[date | None, str]:
    day = latest_day(con, table)
    return day, (f"On {day.isoformat()}, the latest day in <code>{table}</code>." if day
                 else f"<code>{table}</code> is empty.")


def slice_table(con: duckdb.DuckDBPyConnection) -> tuple[str, str]:
    day, when = _on_latest(con, "marts.slice_to_whole_ratio")
    rows = records(con, """
        select gpu_model, coalesce(gpu_variant, '?') as gpu_variant, gpu_fraction, slice_vram_gb,
               count(distinct slice_offer_id) as slices, count(distinct vendor) as vendors,
               median(slice_to_whole_ratio) as ratio,
               min(slice_to_whole_ratio) as low, max(slice_to_whole_ratio) as high,
               median(per_gpu_premium) as premium
        from marts.slice_to_whole_ratio where day = ?
        group by all order by gpu_model, gpu_variant, gpu_fraction, slice_vram_gb""", [day])
    table = render_table(
        [col("card", "gpu_model"), col("variant", "gpu_variant"),
         col("slice", "gpu_fraction", fraction, "num"),
         col("slice VRAM GB", "slice_vram_gb", lambda v: "—" if v is None else f"{float(v):g}",
             "num"),
         col("slices", "slices", count, "num"), col("vendors", "vendors", count, "num"),
         col("slice / whole (median)", "ratio", ratio_pct, "num"),
         col("lowest", "low", ratio_pct, "num"), col("highest", "high", ratio_pct, "num"),
         col("per-GPU premium", "premium", times, "num")],
        rows, "No slice has a whole card to compare with.")
    return ("Slice-to-whole ratio",
            f"<p>Each slice offer's hourly price as a share of the cheapest whole single card "
            f"at the same vendor and region, of the same card variant (? = not stated), kind and "
            f"billing period; ×1.00 premium = pro-rata. {when}</p>{table}")


def regional_table(con: duckdb.DuckDBPyConnection) -> tuple[str, str]:
    """Regions × cards, hourly on-demand whole cards: the discount against the reference."""
    day, when = _on_latest(con, "marts.regional_discount")
    rows = records(con, """
        select * from marts.regional_discount
        where day = ? and offer_kind = 'on_demand' and billing_period = 'hour'
        order by country <> 'CN', country, region_group, gpu_model""", [day])
    cards = sorted({r["gpu_model"] for r in rows})
    regions: dict[tuple, dict] = {}
    for r in rows:
        regions.setdefault((r["country"], r["region_group"]), {})[r["gpu_model"]] = r

    def cell(card: str) -> Callable[[dict], str]:
        def render(region: dict) -> str:
            r = region["cards"].get(card)
            if r is None:
                return ""
            d = _num(r["discount_pct"])
            tone = "" if d is None or abs(d) < 0.05 else ("good" if d > 0 else "bad")
            median = price(r["median_price_cny_per_gpu_hour"])
            title = (f"median {median} vs {clean_text(r['reference'])} "
                     f"{price(r['reference_price_cny_per_gpu_hour'])} CNY/GPU-h; "
                     f"{r['vendors_paired']} of {r['vendors']} vendors paired, "
                     f"{r['distinct_offers']} distinct offers; vendor ratios "
                     f"{ratio_pct(r['ratio_low'])}–{ratio_pct(r['ratio_high'])}")
            shown = pct(d, signed=True) if d is not None else f"{median}*"
            return f'<span class="{tone}" title="{text(title, 400)}">{escape(shown)}</span>'
        return render

    table = render_table(
        [col("country", "country"), col("region", "region_group"),
         *[Column(card, cell(card), "num") for card in cards]],
        [{"country": c, "region_group": g, "cards": v} for (c, g), v in regions.items()],
        "No hourly on-demand whole-card prices.")
    return ("Regional discount",
            f"<p>Whole cards, hourly on-demand: how much cheaper (+) or dearer (−) a region is "
            f"than the reference (China: tier-1 cities; elsewhere: the US) at the same vendor "
            f"for the same offer line, median across vendors; * = a price with no vendor "
            f"listing the same line in the reference that day. Hover a cell for the prices "
            f"and the vendors behind it. {when}</p>"
            f"{table}")


def spot_table(con: duckdb.DuckDBPyConnection) -> tuple[str, str]:
    day, when = _on_latest(con, "marts.spot_discount")
    rows = records(con, """
        select gpu_model, count(distinct spot_offer_id) as pairs,
               count(distinct spot_offer_id) filter (where pairing = 'sku') as by_sku,
               count(distinct vendor) as vendors,
               median(spot_to_on_demand_ratio) as ratio, median(spot_discount_pct) as discount,
               min(spot_discount_pct) as low, max(spot_discount_pct) as high
        from marts.spot_discount where day = ? group by gpu_model order by gpu_model""", [day])
    table = render_table(
        [col("card", "gpu_model"), col("spot offers", "pairs", count, "num"),
         col("same SKU", "by_sku", count, "num"), col("vendors", "vendors", count, "num"),
         col("spot / on-demand (median)", "ratio", ratio_pct, "num"),
         col("discount (median)", "discount", pct, "num"), col("lowest", "low", pct, "num"),
         col("highest", "high", pct, "num")],
        rows, "No spot offer has an on-demand offer to compare with.")
    return ("Spot discount",
            f"<p>Each spot offer against the on-demand offer of the same instance type (SKU) at "
            f"the same vendor and region, or, where the vendor has none, the cheapest on-demand "
            f"offer of the same line (card variant, GPU count, slice, term). {when}</p>{table}")


def saving_table(con: duckdb.DuckDBPyConnection) -> tuple[str, str]:
    day, when = _on_latest(con, "marts.monthly_vs_hourly_saving")
    rows = records(con, """
        select gpu_model, count(distinct monthly_offer_id) as lines,
               count(distinct vendor) as vendors,
               median(saving_pct) as saving, min(saving_pct) as low, max(saving_pct) as high
        from marts.monthly_vs_hourly_saving where day = ?
        group by gpu_model order by gpu_model""", [day])
    table = render_table(
        [col("card", "gpu_model"), col("monthly offers", "lines", count, "num"),
         col("vendors", "vendors", count, "num"), col("saving (median)", "saving", pct, "num"),
         col("lowest", "low", pct, "num"), col("highest", "high", pct, "num")],
        rows, "No monthly offer has an hourly offer to compare with.")
    return ("Monthly package saving",
            f"<p>What each monthly package (÷ 730 h) saves against paying, for a whole month, "
            f"the hourly price of the same SKU (else the cheapest hourly offer of the same line) "
            f"at the same vendor and region. {when}</p>{table}")


def multi_gpu_table(con: duckdb.DuckDBPyConnection) -> tuple[str, str]:
    day, when = _on_latest(con, "marts.multi_gpu_discount")
    rows = records(con, """
        select gpu_model, coalesce(gpu_variant, '?') as gpu_variant, server_gpu_count,
               count(distinct server_offer_id) as lines, count(distinct vendor) as vendors,
               median(server_to_single_ratio) as ratio, median(discount_pct) as discount
        from marts.multi_gpu_discount where day = ?
        group by all order by gpu_model, gpu_variant, server_gpu_count""", [day])
    table = render_table(
        [col("card", "gpu_model"), col("variant", "gpu_variant"),
         col("GPUs", "server_gpu_count", count, "num"),
         col("servers", "lines", count, "num"), col("vendors", "vendors", count, "num"),
         col("server / n × single (median)", "ratio", ratio_pct, "num"),
         col("discount (median)", "discount", pct, "num")],
        rows, "No multi-GPU server has a single card to compare with.")
    return ("Multi-GPU discount",
            f"<p>Each multi-card server's price per GPU against the cheapest whole single card "
            f"of the same model and variant (? = not stated) at the same vendor and region, of "
            f"the same kind and billing period. {when}</p>{table}")


def dip_table(con: duckdb.DuckDBPyConnection) -> tuple[str, str]:
    """The month-end dip test per group (its latest month's row carries it) and, beside it, how
    many groups release capacity at month end (marts.month_end_capacity)."""
    month = latest_day(con, "marts.month_end_dip", "month")
    groups, judged, signals = con.execute("""
        with latest as (
            select * from marts.month_end_dip
            qualify row_number() over (
                partition by source, vendor, gpu_model, gpu_variant, region_code, offer_kind
                order by month desc) = 1
        )
        select count(*), count(*) filter (where months_observed >= 2 and offer_months >= 5),
               count(*) filter (where dip_signal) from latest""").fetchone()
    released, capacity_judged = con.execute("""
        with latest as (
            select * from marts.month_end_capacity
            qualify row_number() over (
                partition by source, vendor, gpu_model, gpu_variant, region_code, offer_kind
                order by month desc) = 1
        )
        select count(*) filter (where release_signal), count(*) filter (where untied_months >= 5)
        from latest""").fetchone()
    rows = records(con, """
        select * from marts.month_end_dip
        where months_observed >= 1
        qualify row_number() over (
            partition by source, vendor, gpu_model, gpu_variant, region_code, offer_kind
            order by month desc) = 1
        order by dip_signal desc, p_value nulls last, strength_pct desc nulls last,
            gpu_model, vendor
        limit 40""")

    def p_value(value: Any) -> str:
        return "—" if value is None else f"{float(value):.3g}"

    table = render_table(
        [col("card", "gpu_model"), col("variant", "gpu_variant"), col("vendor", "vendor"),
         col("region", "region_code"), col("kind", "offer_kind", kind),
         col("months", "months_observed", count, "num"),
         col("offer-months", "offer_months", count, "num"),
         col("below the line", "positive_offer_months", count, "num"),
         col("p (sign test)", "p_value", p_value, "num"),
         col("median depth", "strength_pct", pct, "num"),
         Column("interval", lambda r: escape(f"{pct(r.get('depth_ci_low_pct'))} – "
                                             f"{pct(r.get('depth_ci_high_pct'))}"), "num nw"),
         col("recovery", "median_recovery_pct", pct, "num"),
         Column("signal", lambda r: '<span class="good">dip</span>' if r.get("dip_signal")
                else '<span class="muted">no</span>')],
        rows, "No offer has a complete month yet: an offer-month needs its daily prices on "
              "local days 8–22, in the last 5 days and on days 1–7 of the next month.")
    return ("Month-end dips",
            f"<p>Each hourly offer is followed through the vendor's local month in its listed "
            f"currency; its depth is how far its last-5-days price lies below the straight line "
            f"from its mid-month price (days 8–22) to the next month's start (days 1–7), so a "
            f"steady trend is no dip. {groups:,} offer groups; {judged:,} with at least 2 months "
            f"and 5 offer-months; {signals:,} with a dip signal (one-sided sign test p ≤ 0.05, "
            f"median depth ≥ 1 %, dropping and recovering). Capacity released at month end is "
            f"a separate signal: {released:,} of {capacity_judged:,} groups with 5 or more "
            f"months in <code>marts.month_end_capacity</code>. Latest month in "
            f"<code>marts.month_end_dip</code>: "
            f"{escape(month.isoformat()[:7]) if month else 'none'}. Strongest groups first "
            f"(up to 40).</p>{table}")


def signals_section(con: duckdb.DuckDBPyConnection) -> str:
    blocks = [slice_table(con), regional_table(con), spot_table(con), saving_table(con),
              multi_gpu_table(con), dip_table(con)]
    html = "".join(f'<div class="signal"><h3>{escape(title)}</h3>{body}</div>'
                   for title, body in blocks)
    return f'<section id="signals"><h2>Signals</h2>{html}</section>'


# ── saved workloads ─────────────────────────────────────────────────────────────────────────────

def _has_table(con: duckdb.DuckDBPyConnection, qualified: str) -> bool:
    schema, name = qualified.split(".")
    found = con.execute("select count(*) from information_schema.tables "
                        "where table_schema = ? and table_name = ?", [schema, name]).fetchone()[0]
    return found > 0


def option_label(row: dict) -> str:
    return "best" if row.get("rank") == 1 else f"best {clean_text(row.get('kind'))}"


def workloads_section(con: duckdb.DuckDBPyConnection) -> str:
    """Each saved workload's best option, then the best of each other kind, from the advisor's
    table (optional: before the advisor has run there is nothing to show)."""
    intro = ('<section id="workloads"><h2>Saved workloads</h2>'
             '<p>For each saved workload profile (<code>pipelines/workloads.yaml</code>), the '
             'cheapest configuration of the current offers that fits it, then the cheapest of '
             'each other kind (whole card, slice, multi-GPU, spot), from '
             '<code>advisor.workload_advice</code>')
    if not _has_table(con, ADVICE_TABLE):
        return (f'{intro}.</p><p class="empty">Nothing yet: the advisor '
                f'(<code>advisor/workload_advice</code>) has not run on this database.</p>'
                f'</section>')
    rows = records(con, f"""
        select * from {ADVICE_TABLE} where rank = 1 or best_of_kind
        order by workload, rank""")
    computed = con.execute(f"select max(computed_at) from {ADVICE_TABLE}").fetchone()[0]
    table = render_table([
        col("workload", "workload", css="nw"),
        col("profile", "workload_spec", lambda v: clean_text(v, 200)),
        Column("option", lambda r: escape(option_label(r)), "nw"),
        col("configuration", "configuration"),
        col("total CNY", "total_cost_cny", price, "num"),
        col("total USD", "total_cost_usd", price, "num"),
        col("wall hours", "wall_hours", plain, "num"),
        col("billing", "billing_period"),
        col("vendor", "vendor"), col("sku", "sku"),
        Column("region", lambda r: f'{text(r.get("region_group"))} '
                                   f'<span class="muted">{text(r.get("region_code"))}</span>'),
        Column("page", lambda r: link(r.get("url"))),
    ], rows, "Nothing yet: no saved workload has an option that fits the current offers.")
    return (f'{intro}, computed {escape(utc(computed))}.</p>{table}</section>')


# ── market claims ───────────────────────────────────────────────────────────────────────────────

VERDICT_CLASSES = {"holds": "verdict-holds", "does not hold": "verdict-fails",
                   "inconclusive": "verdict-inconclusive", "not enough data": "verdict-nodata"}


def expected_range(row: dict) -> str:
    low, high = row.get("expected_low"), row.get("expected_high")
    if low is None and high is None:
        return "—"
    if high is None:
        return f"≥ {plain(low)}"        # open-ended: "saves 20-40 %+"
    if low is None:
        return f"≤ {plain(high)}"
    return f"{plain(low)} – {plain(high)}"


def claims_section(con: duckdb.DuckDBPyConnection) -> str:
    rows = records(con, "select * from marts.market_claims")
    tally = {v: sum(r["verdict"] == v for r in rows) for v in VERDICT_CLASSES}
    table = render_table(
        [col("claim", "claim", lambda v: clean_text(v, 400)),
         Column("measured as", lambda r: f'{text(r.get("measure"), 400)}<br>'
                f'<span class="muted">{text(r.get("scope"), 400)}</span>'),
         col("median", "median_value", plain, "num"),
         Column("interval", lambda r: "—" if r.get("ci_low") is None else
                f'{plain(r.get("ci_low"))} – {plain(r.get("ci_high"))}<br><span class="muted">'
                f'{100 * float(r.get("ci_coverage") or 0):.0f} %</span>', "num"),
         Column("expected", lambda r: escape(expected_range(r)), "num"),
         Column("distinct offers", lambda r: f'{count(r.get("distinct_offers"))}<br>'
                f'<span class="muted">{count(r.get("offers"))} offers, '
                f'{count(r.get("vendors"))} vendors</span>', "num"),
         Column("verdict", lambda r: f'<span class="verdict '
                f'{VERDICT_CLASSES.get(r.get("verdict"), "verdict-unknown")}">'
                f'{text(r.get("verdict"))}</span><br>'
                f'<span class="muted">{text(r.get("reason"), 200)}</span>')],
        rows, "marts.market_claims is empty.")
    summary = ", ".join(f"{n} {v}" for v, n in tally.items())
    return (f'<section id="claims"><h2>Market claims scorecard</h2>'
            f'<p>Rules of thumb from published Chinese GPU-rental guides (2024–2026, listed in '
            f'<code>docs/market-claims.md</code>), measured on the latest data '
            f'(<code>marts.market_claims</code>): {escape(summary)}. The verdict is read from the '
            f'≥ 90 % interval of the median over distinct offers (a price copied into many '
            f'regions counts once) and needs at least 5 of them.</p>{table}</section>')


# ── the page ────────────────────────────────────────────────────────────────────────────────────

STYLE = """
:root { --ink: #1d2530; --muted: #6b7785; --line: #dfe3e8; --bg: #f6f7f9; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC",
  "PingFang SC", "Microsoft YaHei", sans-serif; }
main { max-width: 1320px; margin: 0 auto; padding: 24px 20px 48px; }
h1 { margin: 0 0 4px; font-size: 26px; } h2 { margin: 36px 0 8px; font-size: 20px; }
h3 { margin: 20px 0 8px; font-size: 16px; }
.lede, .muted, figcaption, .empty { color: var(--muted); }
.facts { display: flex; flex-wrap: wrap; gap: 8px 28px; margin: 12px 0; }
.facts dt { font-size: 12px; color: var(--muted); text-transform: uppercase; }
.facts dd { margin: 0; font-weight: 600; }
details { margin: 8px 0; } summary { cursor: pointer; color: #1f5fa8; }
.chart-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(380px, 1fr));
  gap: 12px; }
figure { margin: 0; background: #fff; border: 1px solid var(--line); border-radius: 6px;
  padding: 6px; min-width: 0; }
figure.no-chart { display: flex; align-items: center; justify-content: center; min-height: 120px; }
figcaption { font-size: 12px; padding: 2px 6px; }
.table-wrap { overflow-x: auto; background: #fff; border: 1px solid var(--line);
  border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { padding: 5px 8px; border-bottom: 1px solid var(--line); text-align: left;
  vertical-align: top; overflow-wrap: anywhere; }
th { background: #eef1f4; font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; white-space: nowrap; }
td.nw, td a { white-space: nowrap; }
tbody tr:hover { background: #f9fafb; }
.good { color: #1e7b34; } .bad { color: #b03a2e; }
.verdict { display: inline-block; padding: 1px 8px; border-radius: 10px; font-weight: 600;
  white-space: nowrap; }
.verdict-holds { background: #d9f2df; color: #1e6b2f; }
.verdict-fails { background: #f8d9d5; color: #9b2c20; }
.verdict-inconclusive { background: #fbeccb; color: #7a5a10; }
.verdict-nodata, .verdict-unknown { background: #e6e8eb; color: #58616b; }
code { font-size: 12px; background: #eef1f4; padding: 0 3px; border-radius: 3px; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
"""


def render_page(con: duckdb.DuckDBPyConnection, generated_at: datetime) -> tuple[str, int, int]:
    """The whole page as a string; returns (HTML, charts, tables)."""
    row_counts = check_tables(con)
    header = header_section(con, row_counts, generated_at)
    history, charts = chart_sections(con)
    cheapest = cheapest_section(con)
    signals = signals_section(con)
    claims = claims_section(con)
    workloads = workloads_section(con)
    body = f"{header}{claims}{history}{cheapest}{workloads}{signals}"
    tables = body.count("<table>")  # scraped text is escaped, so only our own tables count
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>GPU rental prices — gpuprices report {escape(utc(generated_at))}</title>"
        f"<style>{STYLE}</style></head><body><main>{body}"
        f'<footer>Generated by gpuprices at {escape(utc(generated_at))}. Prices are per '
        f"whole-GPU-equivalent hour in CNY at the ECB rate of the observation date.</footer>"
        "</main></body></html>\n")
    return page, charts, tables


def write_atomically(path: Path, content: str) -> int:
    """Write `content` to a temporary file next to `path`, then rename it over `path`: a reader
    never sees half a page. Returns the size in bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(content)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path.stat().st_size


def build_report(con: duckdb.DuckDBPyConnection, out_path: Path | str,
                 generated_at: datetime | None = None) -> ReportResult:
    """Build the page from an open connection (only reads) and publish it at `out_path`."""
    generated_at = generated_at or datetime.now(timezone.utc)
    page, charts, tables = render_page(con, generated_at)
    out_path = Path(out_path)
    size = write_atomically(out_path, page)
    return ReportResult(out_path, size, charts, tables)
