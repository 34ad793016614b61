"""intermediate.int_price_changes: changes of the LISTED price (or availability), CNY beside it;
an exchange-rate move alone is not a price change; an incremental build equals a full one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from tests.helpers.observations import build_only, insert, obs, records

T0 = datetime(2026, 11, 10, 9, tzinfo=UTC)
US_EAST = {"source": "cloud_test", "vendor": "Cloud", "country": "US",
           "region_code": "us-east-1", "province_or_state": "Virginia", "city": None,
           "is_tier1_city": False}


def usd(amount: str, rate: str, hours_later: int = 0, **overrides) -> dict:
    """A USD offer listed at `amount` per GPU-hour, converted to CNY at `rate`."""
    return obs(amount, currency="USD", price_per_gpu_hour_usd=Decimal(amount),
               price_per_gpu_hour_cny=Decimal(amount) * Decimal(rate),
               observed_at=T0 + timedelta(hours=hours_later), **US_EAST, **overrides)


def cny(amount: str, hours_later: int = 0, **overrides) -> dict:
    return obs(amount, observed_at=T0 + timedelta(hours=hours_later), **overrides)


def changes(con) -> list[dict]:
    return records(con, "select * from intermediate.int_price_changes order by observed_at")


@pytest.mark.parametrize(("rows", "expected"), [
    # a CNY offer cut from 50 to 45: -10 % as listed and in CNY
    ([cny("50"), cny("45", 24)],
     [{"change_kind": "price", "currency": "CNY", "previous_price_amount": Decimal("50"),
       "price_amount": Decimal("45"), "price_change_pct": -10.0,
       "price_change_pct_cny": -10.0,
       "price_change_cny_per_gpu_hour": Decimal("-5")}]),
    # a USD offer whose CNY price falls 3 % with the rate: no change at all
    ([usd("2", "7"), usd("2", "6.79", 24), usd("2", "7.1", 48)], []),
    # a USD cut of 5 % while the rate rises 2 %: -5 % as listed, -3.1 % in CNY beside it
    ([usd("2", "7"), usd("1.9", "7.14", 24)],
     [{"change_kind": "price", "currency": "USD", "previous_price_amount": Decimal("2"),
       "price_amount": Decimal("1.9"), "price_change_pct": -5.0,
       "price_change_pct_cny": -3.1,
       "price_change_cny_per_gpu_hour": Decimal("-0.434")}]),
    # stock runs out at an unchanged price; the rate also moved: availability only
    ([usd("2", "7"), usd("2", "6.9", 24, available=False)],
     [{"change_kind": "availability", "currency": "USD", "previous_price_amount": Decimal("2"),
       "price_amount": Decimal("2"), "price_change_pct": 0.0,
       "price_change_pct_cny": -1.4286,
       "price_change_cny_per_gpu_hour": Decimal("-0.2")}]),
], ids=["cny-cut", "fx-only", "usd-cut-with-fx", "availability"])
def test_changes_are_measured_in_the_listed_currency(con, rows, expected):
    insert(con, rows)
    build_only(con, "intermediate.int_price_changes")
    keys = list(expected[0]) if expected else []
    assert [{k: row[k] for k in keys} for row in changes(con)] == expected


def test_incremental_changes_equal_a_full_rebuild(con):
    # the day before the rebuild ends at 2 USD; the new day starts with an FX-only move, then a cut
    insert(con, [usd("2", "7"), usd("2.1", "7", 5), usd("2", "7", 10)], crawl_id="c-1")
    build_only(con, "intermediate.int_price_changes")
    insert(con, [usd("2", "6.8", 24), usd("1.8", "6.8", 30)], crawl_id="c-2")
    hows = build_only(con, "intermediate.int_price_changes")
    assert hows["intermediate.int_price_changes"] == "incremental from 2026-11-11"
    incremental = changes(con)
    build_only(con, "intermediate.int_price_changes", full=True)
    assert changes(con) == incremental
    assert [(r["previous_price_amount"], r["price_amount"]) for r in incremental] == [
        (Decimal("2"), Decimal("2.1")), (Decimal("2.1"), Decimal("2")),
        (Decimal("2"), Decimal("1.8"))]
