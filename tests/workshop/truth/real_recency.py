"""The recency of "now" on real histories (`make truth-real`): how many rows of the "now" views
(the latest prices `gpuprices prices`, the API and the advisor show; the cheapest offers) are
older than the horizon, more than 30 days behind the database's newest data or their own record's
(crawled source or archive), and more than a year behind the newest data, under no recency rule,
issue 38's horizon alone and the rule of "now" (price_is_now), all on the same database, beside
the published marts.cheapest_offers as it was built. Ages count to today (UTC), as readers do."""

from __future__ import annotations

from datetime import date

import duckdb
import pandas as pd

from pipelines.warehouse.price_age import listing_lag_days, price_horizon_days, use_price_ages
from pipelines.warehouse.sql_files import sql_text

# "Behind the newest data" past this many days (issue 41's figure: 79 of 173 cheapest offers).
BEHIND_DAYS = 30
YEAR_DAYS = 365
RULES = ("all", "horizon", "now")


def view_figures(rows: pd.DataFrame, horizon: int) -> dict:
    """The recency of one view's rows (age_days, days_behind_newest, days_behind_record)."""
    return {"rows": len(rows),
            "older_than_horizon": int((rows["age_days"] > horizon).sum()),
            f"behind_newest_over_{BEHIND_DAYS}d": int((rows["days_behind_newest"]
                                                       > BEHIND_DAYS).sum()),
            "behind_newest_over_1y": int((rows["days_behind_newest"] > YEAR_DAYS).sum()),
            f"behind_own_record_over_{BEHIND_DAYS}d": int((rows["days_behind_record"]
                                                           > BEHIND_DAYS).sum()),
            "behind_own_record_over_lag": int((rows["days_behind_record"]
                                               > listing_lag_days()).sum())}


def published_cheapest(con: duckdb.DuckDBPyConnection, horizon: int) -> dict:
    """The same figures of marts.cheapest_offers as the database holds it (its build's rule)."""
    rows = con.execute(
        "with behind as (select offer_id, days_behind(last_seen_at, max(last_seen_at) over "
        "(partition by price_origin(source))) as days_behind_record from marts.latest_prices), "
        "newest as (select max(price_as_of(prices_as_of, last_seen_at)) as day "
        "from marts.latest_prices) "
        "select price_age_days(c.price_as_of, price_reference_day()) as age_days, "
        "n.day - c.price_as_of as days_behind_newest, b.days_behind_record "
        "from marts.cheapest_offers as c cross join newest as n "
        "left join marts.latest_prices as l on l.source = c.source and l.sku = c.sku "
        "and l.region_code is not distinct from c.region_code and l.vendor = c.vendor "
        "and l.gpu_model = c.gpu_model and l.offer_kind = c.offer_kind "
        "and l.billing_period = c.billing_period "
        "and l.price_per_gpu_hour_cny = c.price_per_gpu_hour_cny "
        "left join behind as b on b.offer_id = l.offer_id "
        "qualify row_number() over (partition by c.gpu_model, c.offer_kind, c.billing_period, "
        "c.country, c.region_group, c.rank order by b.days_behind_record) = 1").df()
    return view_figures(rows, horizon)


def score(con: duckdb.DuckDBPyConnection, on_day: date | None = None) -> dict:
    """Per view and rule: rows, older than the horizon, behind the newest data, behind their own
    record; and the published cheapest offers. Ages count to `on_day` (default today, UTC)."""
    day = use_price_ages(con, on_day)
    horizon = price_horizon_days()
    # the mart's offers per group, as its ranks show (its params CTE is the one home)
    [per_group] = con.execute("select coalesce(max(rank), 0) from marts.cheapest_offers"
                              ).fetchone()
    rows = con.execute(sql_text(__file__, "real_recency"),
                       {"offers_per_group": per_group}).df()
    figures: dict = {"reference_day": day.isoformat(), "horizon_days": horizon,
                     "listing_lag_days": listing_lag_days(),
                     "newest_as_of": str(rows["newest_as_of"].max()) if len(rows) else None}
    for rule in RULES:
        of_rule = rows[rows["rule"] == rule]
        figures[f"latest_prices.{rule}"] = view_figures(of_rule, horizon)
        figures[f"cheapest_offers.{rule}"] = view_figures(of_rule[of_rule["cheapest"]], horizon)
    figures["cheapest_offers.published"] = published_cheapest(con, horizon)
    return figures
