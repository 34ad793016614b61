"""Possible outliers alert nobody until a later crawl confirms them (marts.held_observations,
over marts.price_outliers): no new low, no drop, no watch match for a price
far from its card's market seen once; the alert comes with the crawl that lists it again; a price
never confirmed is never an earlier low nor a previous price. Observations are written as
normalization writes them, without its bounds (400 CNY/h is above the A100's 140: the rule is
symmetric, and the bounds of a card with a cheaper market leave room above it)."""

from __future__ import annotations

import json

import pipelines.alerts as al
from tests.helpers.alert_histories import load, obs, outbox, rules

# An A100 80GB market in Beijing (CNY per GPU-hour), six vendors: the median is 22, and a price
# more than 8x away (below 2.75 or above 176) is a possible outlier.
MARKET = {"Alpha": 18, "Bravo": 20, "Charlie": 22, "Delta": 22, "Echo": 24, "Foxtrot": 26}
NEW_LOW = rules(drop={"enabled": False}, new_low={"min_improvement_pct": 1})
DROP = rules()                                         # drop: 10 % below the previous price


def offer(price, vendor: str, day: int) -> dict:
    return obs(price, day=day, vendor=vendor, source=f"src_{vendor.lower()}",
               sku=f"{vendor.lower()}-a100")


def crawl(day: int, **prices) -> list[dict]:
    """One crawl hour: the market as it stands plus `prices` (vendor -> price)."""
    return [offer(price, vendor, day) for vendor, price in {**MARKET, **prices}.items()]


def status(con, vendor: str) -> str:
    return con.execute("select outlier_status from marts.price_outliers where vendor = ?",
                       [vendor]).fetchone()[0]


def test_an_absurd_low_is_no_new_low_until_a_second_crawl_confirms_it(con):
    load(con, crawl(0))
    assert al.detect_alerts(con, NEW_LOW).detected == 0           # first prices
    load(con, crawl(1, Odd=1.5))                                   # 15x below the market
    assert status(con, "Odd") == "held"
    assert al.detect_alerts(con, NEW_LOW).detected == 0
    load(con, crawl(2, Odd=1.5))                                   # the same price again
    assert status(con, "Odd") == "confirmed"
    found = al.detect_alerts(con, NEW_LOW)
    assert len(found.new_keys["new_low"]) == 1
    [alert] = outbox(con, "new_low")
    payload = json.loads(alert["payload"])
    assert payload["vendor"] == "Odd" and payload["earlier_low_cny_per_gpu_hour"] == 18
    assert payload["observed_at"].startswith("2026-11-22")        # the confirming crawl


def test_a_price_never_confirmed_is_never_an_earlier_low(con):
    load(con, crawl(0))
    al.detect_alerts(con, NEW_LOW)
    load(con, crawl(1, Odd=1.5))
    load(con, crawl(2, Odd=23))                 # back to the market: 1.5 was a glitch
    assert al.detect_alerts(con, NEW_LOW).detected == 0
    load(con, crawl(3, Odd=23, Alpha=17))       # a real low, below 18, far above the glitch
    found = al.detect_alerts(con, NEW_LOW)
    assert len(found.new_keys["new_low"]) == 1
    [alert] = outbox(con, "new_low")
    assert json.loads(alert["payload"])["vendor"] == "Alpha"


def test_a_drop_to_an_absurd_price_alerts_when_confirmed_from_the_price_before(con):
    load(con, crawl(0, Odd=23))
    al.detect_alerts(con, DROP)
    load(con, crawl(1, Odd=1.5))
    assert al.detect_alerts(con, DROP).detected == 0
    load(con, crawl(2, Odd=1.5))
    assert len(al.detect_alerts(con, DROP).new_keys["drop"]) == 1
    [alert] = outbox(con, "drop")
    payload = json.loads(alert["payload"])
    assert payload["previous_price_cny_per_gpu_hour"] == 23
    assert payload["observed_at"].startswith("2026-11-22")
    assert payload["price_change_pct"] == round(100 * (1.5 - 23) / 23, 4)


def test_a_price_after_an_unconfirmed_spike_is_measured_from_the_price_before_it(con):
    load(con, crawl(0, Odd=23))
    al.detect_alerts(con, DROP)
    load(con, crawl(1, Odd=400))                # 18x the market, once
    assert al.detect_alerts(con, DROP).detected == 0
    load(con, crawl(2, Odd=22))                 # from 400 a "drop" of 94.5 %; from 23, 4.3 %
    assert al.detect_alerts(con, DROP).detected == 0
    load(con, crawl(3, Odd=400))
    load(con, crawl(4, Odd=19))                 # 13.6 % below 22: a drop
    al.detect_alerts(con, DROP)
    [alert] = outbox(con, "drop")
    assert json.loads(alert["payload"])["previous_price_cny_per_gpu_hour"] == 22


def test_two_crawls_detected_at_once_alert_once_at_the_confirming_one(con):
    load(con, crawl(0, Odd=23))
    al.detect_alerts(con, DROP)
    load(con, crawl(1, Odd=1.5))
    load(con, crawl(2, Odd=1.5))
    found = al.detect_alerts(con, DROP)
    assert len(found.new_keys["drop"]) == 1 and found.found["drop"] == 1
    [alert] = outbox(con, "drop")
    assert json.loads(alert["payload"])["observed_at"].startswith("2026-11-22")


def test_a_watch_waits_for_the_confirming_crawl(con):
    watch = rules(drop={"enabled": False}, new_low={"enabled": False},
                  watch=[{"gpu_model": "A100-80GB", "region": "北京",
                          "max_price_cny_per_gpu_hour": 5}])
    load(con, crawl(0))
    assert al.detect_alerts(con, watch).detected == 0
    load(con, crawl(1, Odd=1.5))
    assert al.detect_alerts(con, watch).detected == 0
    load(con, crawl(2, Odd=1.5))
    assert len(al.detect_alerts(con, watch).new_keys["watch"]) == 1


def test_a_confirming_price_within_the_tolerance_alerts_once_from_the_price_before(con):
    load(con, crawl(0, Odd=23))
    al.detect_alerts(con, DROP)
    load(con, crawl(1, Odd=1.5))
    assert al.detect_alerts(con, DROP).detected == 0
    load(con, crawl(2, Odd=1.52))               # 1.3 % above the held price: the same price
    found = al.detect_alerts(con, DROP)
    assert found.found["drop"] == 1 and len(found.new_keys["drop"]) == 1
    [alert] = outbox(con, "drop")
    assert json.loads(alert["payload"])["previous_price_cny_per_gpu_hour"] == 23
