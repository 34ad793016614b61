"""The signals section as data for templates/signals.html.j2: each signal mart on its latest day
(slice-to-whole ratio, regional discount, spot discount, monthly saving, multi-GPU discount) and
the month-end dips, each as the mart it reads, that day and a table."""

from collections.abc import Callable

import duckdb

from pipelines.display import clean_text
from pipelines.query.comparisons import nothing_to_compare, signal_candidates
from pipelines.report.formatting import (
    count,
    fraction,
    gigabytes,
    kind,
    number,
    p_value,
    pct,
    price,
    ratio_pct,
    times,
)
from pipelines.report.queries import latest_day, named_query
from pipelines.report.tables import Cell, Column, col, table
from pipelines.verdicts import NOT_ENOUGH_EVIDENCE, css_class

DIP_ROWS_SHOWN = 40
PLACES_SHOWN = 3      # a non-Chinese grid row names this many places, the rest on hover


def on_latest_day(con: duckdb.DuckDBPyConnection, mart: str, query: str,
                  columns: list[Column], empty: str) -> dict:
    """A mart's rows on its latest day (sql/<query>.sql takes the day) as a table."""
    day = latest_day(con, mart)
    rows = named_query(con, query, [day])
    return {"mart": mart, "day": day, "table": table(columns, rows, empty)}


def slice_ratio(con: duckdb.DuckDBPyConnection) -> dict:
    return on_latest_day(con, "marts.slice_to_whole_ratio", "slice_to_whole", [
        col("card", "gpu_model"), col("variant", "gpu_variant"),
        col("slice", "gpu_fraction", fraction, "num"),
        col("slice VRAM GB", "slice_vram_gb", gigabytes, "num"),
        col("slices", "slices", count, "num"), col("vendors", "vendors", count, "num"),
        col("slice / whole (median)", "ratio", ratio_pct, "num"),
        col("lowest", "low", ratio_pct, "num"), col("highest", "high", ratio_pct, "num"),
        col("per-GPU premium", "premium", times, "num"),
    ], nothing_to_compare(signal_candidates(con), "slices"))


def regional_discount(con: duckdb.DuckDBPyConnection) -> dict:
    """Regions × cards, hourly on-demand whole cards: the discount against the reference."""
    mart = "marts.regional_discount"
    day = latest_day(con, mart)
    rows = named_query(con, "regional_discount_grid", [day])
    places = {(r["country"], r["region_group"]): r["places"]
              for r in named_query(con, "grid_region_places", [day])}
    cards = sorted({r["gpu_model"] for r in rows})
    regions: dict[tuple, dict] = {}
    for r in rows:
        regions.setdefault((r["country"], r["region_group"]), {})[r["gpu_model"]] = r
    grid = table(
        [col("country", "country"), Column("region", region_name, "region"),
         *[Column(card, discount_cell(card), "num") for card in cards]],
        [{"country": c, "region_group": g, "places": places.get((c, g)) if c != "CN" else None,
          "cards": v} for (c, g), v in regions.items()],
        nothing_to_compare(signal_candidates(con), "hourly_whole"))
    return {"mart": mart, "day": day, "table": grid}


def region_name(region: dict) -> str | Cell:
    """A grid row's region: the province in China; elsewhere the mart groups by country, so the
    row names the places behind it (states, cities or vendor regions), all of them on hover."""
    places = [clean_text(p, 40) for p in region.get("places") or ()]
    if not places:
        return clean_text(region.get("region_group"))
    shown = ", ".join(places[:PLACES_SHOWN])
    if len(places) > PLACES_SHOWN:
        shown += f" +{len(places) - PLACES_SHOWN} more"
    return Cell(shown, title=clean_text(", ".join(places), 400), css="places")


def discount_cell(card: str) -> Callable[[dict], str | Cell]:
    """A region's discount for `card`, tinted (cheaper green, dearer red), the prices and
    vendors behind it as hover text; a price with no reference to compare with is starred."""
    def cell(region: dict) -> str | Cell:
        r = region["cards"].get(card)
        if r is None:
            return ""
        d = number(r["discount_pct"])
        bound = number(r.get("error_bound_pp"))
        tone = "" if d is None or abs(d) < 0.05 else ("good" if d > 0 else "bad")
        median = price(r["median_price_cny_per_gpu_hour"])
        title = (f"median {median} vs {clean_text(r['reference'])} "
                 f"{price(r['reference_price_cny_per_gpu_hour'])} CNY/GPU-h; "
                 f"{r['vendors_paired']} of {r['vendors']} vendors paired, "
                 f"{r['distinct_offers']} distinct offers; vendor ratios "
                 f"{ratio_pct(r['ratio_low'])}–{ratio_pct(r['ratio_high'])}")
        if bound is not None:
            title += (f"; expect an error of up to {bound:.1f} percentage points (line ratios "
                      f"over {r.get('window_days')} paired days)")
        shown = pct(d, signed=True) if d is not None else f"{median}*"
        if d is not None and bound is not None:
            shown += f" ± {bound:.1f}"
        return Cell(shown, css=tone, title=clean_text(title, 400))
    return cell


def spot_discount(con: duckdb.DuckDBPyConnection) -> dict:
    return on_latest_day(con, "marts.spot_discount", "spot_discount_by_card", [
        col("card", "gpu_model"), col("spot offers", "pairs", count, "num"),
        col("same SKU", "by_sku", count, "num"), col("vendors", "vendors", count, "num"),
        col("spot / on-demand (median)", "ratio", ratio_pct, "num"),
        col("discount (median)", "discount", pct, "num"), col("lowest", "low", pct, "num"),
        col("highest", "high", pct, "num"),
    ], nothing_to_compare(signal_candidates(con), "spot"))


def monthly_saving(con: duckdb.DuckDBPyConnection) -> dict:
    return on_latest_day(con, "marts.monthly_vs_hourly_saving", "monthly_saving", [
        col("card", "gpu_model"), col("monthly offers", "lines", count, "num"),
        col("vendors", "vendors", count, "num"), col("saving (median)", "saving", pct, "num"),
        col("lowest", "low", pct, "num"), col("highest", "high", pct, "num"),
    ], nothing_to_compare(signal_candidates(con), "monthly"))


def multi_gpu_discount(con: duckdb.DuckDBPyConnection) -> dict:
    return on_latest_day(con, "marts.multi_gpu_discount", "multi_gpu_discount_by_card", [
        col("card", "gpu_model"), col("variant", "gpu_variant"),
        col("GPUs", "server_gpu_count", count, "num"),
        col("servers", "lines", count, "num"), col("vendors", "vendors", count, "num"),
        col("server / n × single (median)", "ratio", ratio_pct, "num"),
        col("discount (median)", "discount", pct, "num"),
    ], nothing_to_compare(signal_candidates(con), "multi_gpu"))


def verdict_cell(verdict: str | None, months_needed: int | None = None) -> Cell:
    """A verdict in its colour; 'not enough evidence' says how many more months it needs."""
    text = clean_text(verdict) if verdict else "–"
    if verdict == NOT_ENOUGH_EVIDENCE and months_needed:
        text += f" (+{int(months_needed)} mo)"
    return Cell(text, css=f"{css_class(verdict)} nw")


def month_end_dips(con: duckdb.DuckDBPyConnection) -> dict:
    """The month-end dip test per group (its latest month's row carries it), the strongest
    groups first, and how many groups release capacity at month end (marts.month_end_capacity)."""
    [counts] = named_query(con, "month_end_summary")
    month = counts["latest_month"]
    dips = table([
        col("card", "gpu_model"), col("variant", "gpu_variant"), col("vendor", "vendor"),
        col("region", "region_code"), col("kind", "offer_kind", kind),
        col("months", "months_observed", count, "num"),
        col("offer-months", "offer_months", count, "num"),
        col("offer noise", "noise_pct", pct, "num"),
        col("depth", "strength_pct", pct, "num"),
        Column("90 % interval", lambda r: f"{pct(r.get('depth_ci_low_pct'))} – "
                                          f"{pct(r.get('depth_ci_high_pct'))}", "num nw"),
        col("p", "p_value", p_value, "num"),
        col("recovery", "median_recovery_pct", pct, "num"),
        Column("latest month", lambda r: verdict_cell(r.get("month_verdict"))),
        Column("recurring dip", lambda r: verdict_cell(r.get("dip_verdict"),
                                                       r.get("months_needed"))),
    ], named_query(con, "month_end_dip_groups", [DIP_ROWS_SHOWN]),
        no_complete_month_reason(named_query(con, "month_end_evidence")[0]))
    return {**{k: count(v) for k, v in counts.items() if k != "latest_month"},
            "month": month.isoformat()[:7] if month else "none", "rows_shown": DIP_ROWS_SHOWN,
            "table": dips}


def no_complete_month_reason(evidence: dict) -> str:
    """Why no offer has a complete month (a row of sql/month_end_evidence.sql), with counts: the
    offers of curated tables, left out because their dates are edit dates (no calendar), and
    what the offer-months of the dated sources lack, window by window."""
    e = evidence
    windows = (f"local days {e['baseline_first_day']}–{e['baseline_last_day']} (at least "
               f"{e['min_baseline_days']} of them), the last {e['month_end_window_days']} days "
               f"(at least {e['min_month_end_days']}) and days 1–{e['next_start_last_day']} of "
               f"the next month (at least {e['min_next_start_days']})")
    curated = (f"{e['calendarless_offers']} hourly offers of {e['calendarless_sources']} curated "
               "tables are left out: their dates are the days someone edited the table, not days "
               "a price held, so they carry no calendar"
               if e["calendarless_offers"] else "")
    if not e["offer_months"]:
        head = ("No offer has a complete month: no hourly offer of a dated source has daily "
                "prices yet")
    else:
        head = (f"No offer has a complete month: of {e['offer_months']} offer-months of dated "
                f"sources, {e['complete_months']} are complete, {e['short_baseline']} lack the "
                f"mid-month days, {e['short_month_end']} the month's last days and "
                f"{e['short_next_start']} the next month's first days")
    return f"{head}{'; ' + curated if curated else ''}. A complete month needs daily prices on " \
        f"{windows}."


def signals(con: duckdb.DuckDBPyConnection) -> dict:
    return {"slice_ratio": slice_ratio(con), "regional": regional_discount(con),
            "spot": spot_discount(con), "saving": monthly_saving(con),
            "multi_gpu": multi_gpu_discount(con), "dips": month_end_dips(con)}
