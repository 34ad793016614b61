"""Today's offers as the advisor sees them: one `Offer` per row of `marts.latest_prices`, with
what a configuration needs to know of it (card memory, price per rental, same rental under
other billing periods). `offers_from_db` and `measured_claims_from_db` are the advisor's I/O."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime

from pipelines.query.ages import max_age_days, within_age_sql
from pipelines.query.prices import aged_latest_prices_sql
from pipelines.warehouse.price_age import use_price_ages
from pipelines.warehouse.sql_files import not_held_predicate, sql_text
from spiders.parsing.prices import HOURS_PER_PERIOD


@dataclass(frozen=True)
class Offer:
    """One current offer (a row of marts.latest_prices)."""

    source: str
    vendor: str
    gpu_model: str
    gpu_count: int
    gpu_fraction: float
    offer_kind: str
    billing_period: str
    price_amount: float
    currency: str
    price_per_gpu_hour_cny: float
    region_code: str
    country: str
    price_per_gpu_hour_usd: float | None = None
    vram_gb: float | None = None
    gpu_variant: str | None = None
    province_or_state: str | None = None
    city: str | None = None
    sku: str | None = None
    available: bool | None = None
    last_seen_at: datetime | None = None
    price_as_of: date | None = None      # the date the price held (pipelines/query/ages.py)
    price_age_days: int | None = None    # days from price_as_of to the day the offers were read
    url: str | None = None
    offer_id: str | None = None
    vendor_kind: str | None = None   # hyperscaler | gpu_cloud | marketplace | idc (None: unknown)
    # where the price comes from (spiders/price_basis.py: live | captured | published | undated |
    # illustrative | mixed | simulated; None: not stated), and how its source reached the offer
    # (direct | aggregator | second_path | archive | template) and whether it counts (docs/
    # signals.md "Counted once"): what pipelines/advisor/advisable.py reads
    price_basis: str | None = None
    reaches_via: str | None = None
    counted: bool = True

    @classmethod
    def from_row(cls, row: Mapping) -> Offer:
        def num(value):
            return None if value is None else float(value)

        return cls(
            source=row["source"], vendor=row["vendor"], gpu_model=row["gpu_model"],
            gpu_count=int(row.get("gpu_count") or 1),
            gpu_fraction=float(row.get("gpu_fraction") or 1),
            offer_kind=row.get("offer_kind") or "on_demand", billing_period=row["billing_period"],
            price_amount=float(row["price_amount"]), currency=row.get("currency") or "CNY",
            price_per_gpu_hour_cny=float(row["price_per_gpu_hour_cny"]),
            price_per_gpu_hour_usd=num(row.get("price_per_gpu_hour_usd")),
            region_code=row.get("region_code") or "", country=row.get("country") or "",
            vram_gb=num(row.get("vram_gb")), gpu_variant=row.get("gpu_variant"),
            province_or_state=row.get("province_or_state"), city=row.get("city"),
            sku=row.get("sku"), available=row.get("available"),
            last_seen_at=row.get("last_seen_at"), url=row.get("url"), offer_id=row.get("offer_id"),
            vendor_kind=row.get("vendor_kind"), price_as_of=row.get("price_as_of"),
            price_age_days=row.get("price_age_days"), price_basis=row.get("price_basis"),
            reaches_via=row.get("reaches_via"),
            counted=row.get("counted") is not False)

    @property
    def region_group(self) -> str:
        """The province in China, the country elsewhere (as the signal marts group regions)."""
        if self.country == "CN":
            return self.province_or_state or "CN"
        return self.country

    @property
    def is_slice(self) -> bool:
        return self.gpu_fraction < 1

    @property
    def card_vram_gb(self) -> float:
        """VRAM of one card of the offer (of the slice, for a slice)."""
        if self.vram_gb:
            return self.vram_gb
        match = re.search(r"-(\d+)GB$", self.gpu_model)
        return float(match.group(1)) * self.gpu_fraction if match else 0.0

    @property
    def instance_price_cny(self) -> float:
        """What one rental of the offer costs per billing period, in CNY: the inverse of the
        normalization of price_per_gpu_hour_cny (so foreign currencies use the row's FX rate)."""
        return (self.price_per_gpu_hour_cny * HOURS_PER_PERIOD[self.billing_period]
                * self.gpu_count * self.gpu_fraction)

    @property
    def usd_per_cny(self) -> float | None:
        if not self.price_per_gpu_hour_usd or not self.price_per_gpu_hour_cny:
            return None
        return self.price_per_gpu_hour_usd / self.price_per_gpu_hour_cny

    @property
    def product_key(self) -> tuple:
        """Rows that are the same rental under different billing periods."""
        return (self.source, self.vendor, self.region_code, self.sku, self.gpu_model,
                self.gpu_variant, self.gpu_count, self.gpu_fraction, self.offer_kind == "spot")


def measured_claims_from_db(con) -> dict[str, dict]:
    """marts.market_claims rows by claim_id (the scorecard's measure of the guides' price
    claims), or {} where the database has no scorecard yet."""
    import duckdb

    try:
        cursor = con.execute("select * from marts.market_claims")
    except duckdb.CatalogException:   # no scorecard yet: the claims are shown unmeasured
        return {}
    names = [d[0] for d in cursor.description]
    rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    return {row["claim_id"]: row for row in rows}


def offers_from_db(con, max_age: int | str | None = None,
                   on_day: date | None = None) -> list[Offer]:
    """Every current offer of marts.latest_prices (the advisor's only I/O): not held back as a
    possible outlier, and at most `max_age` days old on `on_day` (query.ages.max_age_days: None
    the horizon, "all" however old; default today, UTC)."""
    days = max_age_days(max_age)
    use_price_ages(con, on_day)
    cursor = con.execute(sql_text(__file__, "latest_offers").format(
        aged_latest_prices=aged_latest_prices_sql(), not_held=not_held_predicate(),
        within_age=within_age_sql(days)))
    names = [d[0] for d in cursor.description]
    return [Offer.from_row(dict(zip(names, row, strict=True))) for row in cursor.fetchall()]
