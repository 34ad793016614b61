"""What each section of the page shows, as data for its template (templates/<section>.html.j2):
the header's facts, the price-history charts, the cheapest offers, the saved workloads and the
market-claims scorecard. The signals have their own module, signals.py."""

import json
from datetime import datetime
from typing import Any

import duckdb

from pipelines.display import as_of_text, clean_text
from pipelines.query.ages import PriceAges, aged_out_note, old_prices_note
from pipelines.report.charts import CHARTS, FAMILIES, chart_html, chart_points
from pipelines.report.formatting import (
    MISSING,
    count,
    instance,
    kind,
    listed,
    number,
    plain,
    price,
    time_range,
    utc,
    value_range,
)
from pipelines.report.queries import advice_computed_at, has_advice, named_query, table_names
from pipelines.report.tables import Cell, Column, Content, col, link_cell, region_cell, table
from pipelines.verdicts import css_class, tally
from spiders.price_basis import is_real_price, price_from_word

# ── header ──────────────────────────────────────────────────────────────────────────────────────


def header(con: duckdb.DuckDBPyConnection, row_counts: dict[str, int],
           generated_at: datetime) -> dict:
    """The data's time range, sources, offers, row counts and the generation time."""
    [span] = named_query(con, "observation_span")
    source_rows = named_query(con, "sources")
    facts = [("data", time_range(span["first_observed"], span["last_observed"], span["days"])),
             ("sources", count(span["sources"])), ("offers", count(span["offers"])),
             ("observations", count(row_counts["observations"])),
             ("quarantined", count(row_counts["quarantine"])),
             ("generated", utc(generated_at))]
    sources = table(
        [col("source", "source"), col("vendor", "vendor"), col("kind", "vendor_kind"),
         col("observations", "observations", count, "num"), col("offers", "offers", count, "num"),
         col("first seen", "first_seen", utc), col("last seen", "last_seen", utc),
         Column("prices", price_from_cell), Column("reaches", reaches_cell)],
        source_rows, "No source has landed observations yet.")
    counts = table([col("table", "table"), col("rows", "rows", count, "num")],
                   [{"table": t, "rows": n} for t, n in row_counts.items()], "")
    modeled = [clean_text(r["source"]) for r in source_rows if not is_real_price(r["price_basis"])]
    templates = [clean_text(r["source"]) for r in source_rows if r["reaches_via"] == "template"]
    return {"facts": facts, "sources": count(span["sources"]), "sources_table": sources,
            "counts_table": counts, "modeled_sources": modeled, "template_sources": templates}


def price_ages(con: duckdb.DuckDBPyConnection) -> dict:
    """How old the page's prices are (sql/price_ages.sql): the line the page opens with when most
    of them (or the newest) are older than the horizon (None otherwise), how many offers the
    rule of "now" leaves out of the cheapest offers (older than the horizon; no longer listed by
    their record), the horizon and the listing lag in days."""
    [row] = named_query(con, "price_ages")
    ages = PriceAges(row["offers"], row["old_offers"], row["newest_as_of"],
                     row["newest_age_days"], row["horizon_days"])
    return {"note": old_prices_note(ages), "aged_out": count(row["old_offers"]),
            "delisted": count(row["delisted_offers"]), "horizon_days": row["horizon_days"],
            "listing_lag_days": row["listing_lag_days"], "offers": row["offers"],
            "old_count": row["old_offers"], "delisted_count": row["delisted_offers"]}


def as_of_cell(row: dict) -> Cell:
    """The date a price held and its age, "2026-11-30 (1 d)"; when it was last seen on hover."""
    return Cell(as_of_text(row.get("price_as_of"), row.get("price_age_days")), css="detail",
                title=f"last seen {utc(row.get('last_seen_at'))}")


REACHES = {"direct": "direct", "aggregator": "through an aggregator",
           "second_path": "second path (counted once)", "archive": "archive (counted once)"}


def reaches_cell(row: dict) -> Content:
    """How a source reaches its offers; a template's are in no signal, claim or index."""
    reach = row.get("reaches_via") or "direct"
    if reach == "template":
        return Cell("template: not counted", css="modeled",
                    title="a placeholder with no real operator behind it: its prices are left "
                          "out of every signal, claim and index")
    return REACHES.get(reach, clean_text(reach))


def price_from_cell(row: dict) -> Cell:
    """Where a row's price comes from: one word, the full wording on hover; a price that is not a
    real one (modeled, simulated, not stated) is tinted."""
    basis = row.get("price_basis")
    label = clean_text(row.get("price_basis_label") or "not stated")
    return Cell(price_from_word(basis), css="real-price" if is_real_price(basis) else "modeled",
                title=label)


# ── the simulated-data banner ───────────────────────────────────────────────────────────────────


def effect_text(record: dict) -> str:
    """An injected effect (truth.scenario.effects) in words."""
    name = clean_text(record.get("effect"))
    sources = record.get("sources")
    who = ", ".join(clean_text(x) for x in sources) if sources else "every source"
    if name == "dip":
        return (f"month-end dip: −{plain(record.get('size_pct'))} % over the last "
                f"{plain(record.get('days'))} local days of each month ({who})")
    if name == "drop":
        return (f"price drop: {clean_text(record.get('source'))} −{plain(record.get('pct'))} % "
                f"from {clean_text(record.get('at'))[:16].replace('T', ' ')} UTC")
    details = ", ".join(f"{clean_text(k)} {clean_text(v)}" for k, v in record.items()
                        if k != "effect" and v is not None)
    return f"{name}: {details}" if details else name


def simulated(con: duckdb.DuckDBPyConnection) -> dict | None:
    """What the banner says when the database was simulated (`gpuprices demo` or `simulate`,
    which record their scenario in truth.scenario); None for real data."""
    if "truth.scenario" not in table_names(con):
        return None
    rows = named_query(con, "demo_scenario")
    if not rows:
        return {"facts": "", "effects": []}
    row = rows[0]
    try:
        records = json.loads(row["effects"] or "[]")
    except ValueError:
        records = []
    every = f", a crawl every {row['every_hours']} h" if row.get("every_hours") else ""
    days = f" for {count(row['days'])} days" if row.get("days") else ""
    return {"facts": f"{count(row['offers'])} offers from {utc(row['start_at'])}{days}{every}",
            "effects": [effect_text(r) for r in records if isinstance(r, dict)]}


# ── price history ───────────────────────────────────────────────────────────────────────────────


def history(con: duckdb.DuckDBPyConnection, with_plotly_js: bool = True) -> dict:
    """One entry per card family with one chart per ChartSpec (None where the family has no
    offers for it), and the number of charts drawn. plotly.js comes inlined with the first chart
    when `with_plotly_js` (no chart above has brought it)."""
    points = chart_points(con)
    families, charts = [], 0
    for family in FAMILIES:
        cells = []
        for spec in CHARTS:
            line = points.get((spec.key, family))
            html = None
            if line:
                html = chart_html(family, spec, line, with_plotly_js=with_plotly_js and not charts)
                charts += 1
            cells.append({"spec": spec, "html": html})
        families.append({"name": family, "charts": cells})
    return {"families": families, "charts": charts}


# ── cheapest offers ─────────────────────────────────────────────────────────────────────────────

OFFER_COLUMNS = (
    col("card", "gpu_model", css="nw"), col("kind", "offer_kind", kind, "nw"),
    col("billing", "billing_period"),
    col("CNY / GPU-h", "price_per_gpu_hour_cny", price, "num"),
    Column("listed", listed, "num"), Column("instance", instance, "nw"),
    Column("vendor", lambda r: vendor_cell(r)), Column("region", region_cell),
    Column("as of (age)", as_of_cell, "nw"), Column("price from", price_from_cell, "nw"),
    Column("page", lambda r: link_cell(r.get("url"))),
)


def vendor_cell(row: dict) -> Cell:
    """The vendor, its offer's sku on hover: an identifier is looked up, not read, and a column
    of its own was squeezed to a few characters a line."""
    return Cell(clean_text(row.get("vendor")), css="detail",
                title=f"sku {clean_text(row.get('sku'))}")


def dated_share_text(rows: list[dict]) -> str:
    """How many of the offers shown have a real price with its date, and how many not:
    "12 of 20 prices (60 %) are real and dated; 3 real but undated; 5 modeled"."""
    if not rows:
        return ""
    bases = [r.get("price_basis") for r in rows]
    undated = sum(b == "undated" for b in bases)
    modeled = sum(not is_real_price(b) for b in bases)
    dated = len(rows) - undated - modeled
    return (f"{dated} of {len(rows)} prices ({100 * dated / len(rows):.0f} %) are real and dated; "
            f"{undated} real but undated; {modeled} modeled or simulated (not quotes)")


OUTLIER_STATUS = {"held": "held back", "confirmed": "confirmed, shown"}


def times_median(value: Any) -> str:
    """A price against its card's median: "×0.02" (a fiftieth), "×17.4"."""
    v = number(value)
    return MISSING if v is None else (f"×{v:.2g}" if v < 0.1 else f"×{v:.1f}")


OUTLIER_COLUMNS = (
    col("status", "outlier_status", lambda v: OUTLIER_STATUS.get(v, clean_text(v)), "nw"),
    col("card", "gpu_model", css="nw"), col("kind", "offer_kind", kind, "nw"),
    col("billing", "billing_period"),
    col("CNY / GPU-h", "price_per_gpu_hour_cny", price, "num"),
    col("card median", "card_median_cny_per_gpu_hour", price, "num"),
    Column("of the median", lambda r: Cell(
        times_median(r.get("times_card_median")),
        note=f"limit ×{plain(r.get('outlier_factor_limit'))}, "
             f"{count(r.get('vendors_compared'))} vendors"), "num"),
    col("vendor", "vendor"), col("sku", "sku"), col("region", "region_code"),
    col("seen", "last_seen_at", utc, "nw"), Column("page", lambda r: link_cell(r.get("url"))),
)


def cheapest(con: duckdb.DuckDBPyConnection, ages: dict) -> dict:
    """The cheapest offer per card, kind and billing period anywhere, then per region, within
    the horizon (`ages`: price_ages); and the prices held back from them as possible outliers
    (or confirmed as real since)."""
    rows = named_query(con, "cheapest_per_region")
    best: dict[tuple, dict] = {}
    for row in rows:   # ordered by price: the first row per card, kind and period is the cheapest
        best.setdefault((row["gpu_model"], row["offer_kind"], row["billing_period"]), row)
    outliers = named_query(con, "possible_outliers")
    empty = no_cheapest_offers_reason(ages)
    return {"overall": table(OFFER_COLUMNS, best.values(), empty),
            "dated_share": dated_share_text(list(best.values())),
            "by_region": table(OFFER_COLUMNS, rows, empty),
            "rows": count(len(rows)),
            "outliers": table(OUTLIER_COLUMNS, outliers,
                              "None: every judged price is within its card's limit."),
            "held": count(sum(r["outlier_status"] == "held" for r in outliers)),
            "aged_out": ages["aged_out"], "delisted": ages["delisted"],
            "horizon_days": ages["horizon_days"], "listing_lag_days": ages["listing_lag_days"]}


def no_cheapest_offers_reason(ages: dict) -> str:
    """Why the cheapest offers are empty (`ages`: price_ages): no counted offer at all, or every
    one of them left out as not "now" (older than the horizon, no longer listed by its record)
    or held back as a possible outlier, with the counts."""
    offers = ages["offers"]
    if not offers:
        return "No offers yet: the database holds no counted price (run `make run`)."
    old, delisted = ages["old_count"], ages["delisted_count"]
    held = offers - old - delisted
    reasons = [aged_out_note(old, ages["horizon_days"], delisted)] if old or delisted else []
    if held:
        reasons.append(f"{held} held back as possible outliers (below)")
    return f"No current offer among {offers} counted: {'; '.join(r for r in reasons if r)}."


# ── saved workloads ─────────────────────────────────────────────────────────────────────────────


def option_label(row: dict) -> str:
    return "best" if row.get("rank") == 1 else f"best {clean_text(row.get('kind'))}"


def workloads(con: duckdb.DuckDBPyConnection) -> dict:
    """Each saved workload's best option, then the best of each other kind, from the advisor's
    table, with the verdicts of the guides' rules beside its best option and, below, each rule's
    verdict with the numbers that decided it (optional: before the advisor has run there is
    nothing to show)."""
    from pipelines.advisor.records import verdict_lines

    if not has_advice(con):
        return {"advised": False}
    rows = named_query(con, "workload_advice")

    def rules_cell(row: dict) -> Content:
        parts = verdict_lines(row.get("verdicts")) if row.get("rank") == 1 else []
        if not parts:
            return ""
        return Cell(clean_text("; ".join(f"{rule}: {verdict}" for rule, verdict, _ in parts), 400),
                    title=clean_text(" | ".join(f"{rule}: {because}"
                                                for rule, _, because in parts), 2000))

    advice = table([
        col("workload", "workload", css="nw"),
        col("profile", "workload_spec", lambda v: clean_text(v, 200)),
        Column("option", option_label, "nw"),
        Column("configuration", lambda r: Cell(
            clean_text(r.get("configuration")),
            note=clean_text(r.get("interconnect"), 300) or None)),
        col("total CNY", "total_cost_cny", price, "num"),
        col("total USD", "total_cost_usd", price, "num"),
        col("wall hours", "wall_hours", plain, "num"),
        col("billing", "billing_period"),
        col("vendor", "vendor"), col("sku", "sku"), Column("region", region_cell),
        Column("page", lambda r: link_cell(r.get("url"))),
        Column("the guides' rules", rules_cell),
    ], rows, "Nothing yet: no saved workload has an option that fits the current offers.")
    verdicts = table([
        col("workload", "workload", css="nw"), col("rule", "rule", css="nw"),
        col("verdict", "verdict", css="nw"),
        col("because (the workload's numbers)", "because", lambda v: clean_text(v, 600)),
    ], [{"workload": r.get("workload"), "rule": rule, "verdict": verdict, "because": because}
        for r in rows if r.get("rank") == 1
        for rule, verdict, because in verdict_lines(r.get("verdicts"))],
        "Nothing yet: no saved workload has been advised.")
    return {"advised": True, "computed": utc(advice_computed_at(con)), "table": advice,
            "verdicts": verdicts}


# ── market claims ───────────────────────────────────────────────────────────────────────────────



def interval_cell(row: dict) -> Content:
    if row.get("ci_low") is None:
        return MISSING
    coverage = 100 * float(row.get("ci_coverage") or 0)
    return Cell(f"{plain(row.get('ci_low'))} – {plain(row.get('ci_high'))}",
                note=f"{coverage:.0f} %")


def verdict_cell(row: dict) -> Cell:
    """The verdict tinted, what it lacks as its hover text, the reason (with the distinct offers a
    verdict would need) under it."""
    lacking = row.get("evidence_lacking")
    return Cell(clean_text(row.get("verdict")), css=css_class(row.get("verdict")),
                title=None if lacking is None else clean_text(lacking),
                note=clean_text(row.get("reason"), 300))


def needed_cell(row: dict) -> Content:
    """The distinct offers a verdict would need ("~" for an estimate); none when it has one."""
    needed = row.get("distinct_offers_needed")
    if needed is None:
        return MISSING
    about = "~" if row.get("evidence_lacking") == "interval overlaps the range" else ""
    return Cell(f"{about}{count(needed)}", note=clean_text(row.get("evidence_lacking")))


def claims(con: duckdb.DuckDBPyConnection) -> dict:
    """Each market claim with what measured it, its verdict and what a missing verdict needs,
    and the verdicts' tally."""
    rows = named_query(con, "market_claim_rows")
    scorecard = table(
        [col("claim", "claim", lambda v: clean_text(v, 400)),
         Column("measured as", lambda r: Cell(clean_text(r.get("measure"), 400),
                                              note=clean_text(r.get("scope"), 400))),
         col("median", "median_value", plain, "num"),
         Column("interval", interval_cell, "num"),
         Column("expected", lambda r: value_range(r.get("expected_low"), r.get("expected_high")),
                "num"),
         Column("distinct offers", lambda r: Cell(
             count(r.get("distinct_offers")),
             note=f"{count(r.get('offers'))} offers, {count(r.get('vendors'))} vendors"), "num"),
         Column("verdict", verdict_cell),
         Column("needs", needed_cell, "num")],
        rows, "marts.market_claims is empty.")
    return {"summary": tally(r["verdict"] for r in rows), "table": scorecard}
