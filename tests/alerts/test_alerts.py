"""Price alerts detected on small hand-made histories: the drop rule, new lows, watches,
month-end dips and saved workloads getting cheaper.

Each test fills a DuckDB's `observations` (and `raw.crawls`, as the loader does), builds every SQL
model of the project as the pipeline does and runs detection into `alerts.outbox`; delivery is
in test_delivery.py, the rules file and the Dagster asset in test_rules_and_asset.py.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import duckdb
import pytest

import pipelines.alerts as al
from pipelines.alerts.rules import watch_region_filter
from tests.helpers.alert_histories import DAY1, channels, load, obs, outbox, rules
from tests.helpers.observations import SHANGHAI

# ---------------------------------------------------------------------------------- drop rule

def test_twelve_percent_drop_alerts_once_and_posts_once(con, receiver):
    r = rules()
    load(con, [obs(100, day=0)])
    assert al.detect_alerts(con, r).detected == 0
    load(con, [obs(88, day=1)])
    first = al.detect_alerts(con, r)
    second = al.detect_alerts(con, r)
    assert len(first.new_keys["drop"]) == 1 and second.detected == 0
    [alert] = outbox(con)
    assert alert["rule"] == "drop" and alert["status"] == "pending"
    assert alert["alert_key"].startswith("drop:") and "2026-11-21T09:00:00" in alert["alert_key"]
    # The human text: card, vendor, region, CNY and USD, the link, the drop.
    for text in ("A100-80GB", "Test IDC", "北京 (Beijing, CN)", "88.00 CNY", "12.57 USD",
                 "100.00 CNY", "-12.0 %", "https://idc_test.example.test/prices"):
        assert text in alert["title"] + alert["body"], text
    assert json.loads(alert["payload"])["previous_price_cny_per_gpu_hour"] == 100.0

    chs = channels(receiver.url)
    assert al.deliver_pending(con, chs, r.delivery).delivered == 1
    assert al.deliver_pending(con, chs, r.delivery).delivered == 0
    assert len(receiver.posts) == 1
    post = receiver.posts[0]
    assert post["path"] == "/hook" and post["json"]["title"] == alert["title"]
    assert "https://idc_test.example.test/prices" in post["json"]["message"]
    [sent] = outbox(con)
    assert (sent["status"], sent["attempts"], sent["last_error"]) == ("sent", 1, None)
    assert sent["sent_at"] is not None and sent["delivered_to"] == [chs[0].id]


def test_one_percent_wobble_does_not_alert(con):
    load(con, [obs(100, day=0)])
    al.detect_alerts(con, rules())
    load(con, [obs(99, day=1)])
    assert al.detect_alerts(con, rules()).detected == 0
    assert con.execute("select count(*) from intermediate.int_price_changes").fetchone()[0] == 1


def test_missing_observation_then_same_price_does_not_alert(con):
    other = {"sku": "h800-1x", "gpu_model": "H800-80GB"}
    load(con, [obs(100, day=0), obs(200, day=0, **other)])
    al.detect_alerts(con, rules())
    load(con, [obs(200, day=1, **other)])            # the A100 offer was not seen on day 1
    load(con, [obs(100, day=2), obs(150, day=2, **other)])
    found = al.detect_alerts(con, rules())
    # Only the H800's real 25 % drop alerts; the A100 is back at its old price.
    assert [json.loads(a["payload"])["gpu_model"] for a in outbox(con)] == ["H800-80GB"]
    assert len(found.new_keys["drop"]) == 1


def test_price_that_recovers_and_drops_again_alerts_again(con):
    load(con, [obs(100, day=0)])
    al.detect_alerts(con, rules())
    for day, price in ((1, 88), (2, 100), (3, 88)):
        load(con, [obs(price, day=day)])
        al.detect_alerts(con, rules())
    assert [a["alert_key"][-25:] for a in outbox(con)] == \
        ["2026-11-21T09:00:00+00:00", "2026-11-23T09:00:00+00:00"]


def test_drop_below_trailing_median(con):
    r = rules(drop={"min_drop_pct": 10, "min_below_median_pct": 5, "median_days": 7})
    load(con, [obs(100 + (day % 2), day=day) for day in range(7)])   # 100, 101, 100, ...
    al.detect_alerts(con, r)
    load(con, [obs(95, day=7)])      # 5 % below the last close and the median of 7 closes
    found = al.detect_alerts(con, r)
    [alert] = outbox(con)
    payload = json.loads(alert["payload"])
    assert len(found.new_keys["drop"]) == 1 and payload["tests_met"] == ["median"]
    assert payload["median_price_cny_per_gpu_hour"] == 100.0 and payload["median_days"] == 7
    assert "Trailing 7-day median of daily closes: 100.00 CNY" in alert["body"]
    assert "5.0 % below it" in alert["body"]


def test_exchange_rate_moves_are_no_drop_and_no_new_low(con):
    r = rules(new_low={"min_improvement_pct": 1})
    def usd(amount: str, rate: str, day: int) -> dict:
        return obs(float(amount), day=day, currency="USD", sku="us-1x",
                   price_per_gpu_hour_usd=Decimal(amount),
                   price_per_gpu_hour_cny=Decimal(amount) * Decimal(rate))
    load(con, [usd("2", "7", 0)])
    al.detect_alerts(con, r)
    load(con, [usd("2", "6", 1)])          # 14 % cheaper in CNY, the same 2 USD as listed
    assert al.detect_alerts(con, r).detected == 0
    load(con, [usd("1.7", "6", 2)])        # a real 15 % cut, as listed
    found = al.detect_alerts(con, r)
    assert len(found.new_keys["drop"]) == 1 and len(found.new_keys["new_low"]) == 1
    [drop] = outbox(con, "drop")
    assert "-15.0 %" in drop["title"]
    assert "Was: 2.00 USD per hour as listed (12.00 CNY per GPU-hour)" in drop["body"]
    assert "(-15.0 % as listed, -15.0 % in CNY)" in drop["body"]


def test_median_test_needs_enough_history(con):
    r = rules(drop={"min_below_median_pct": 5, "median_min_days": 3})
    load(con, [obs(100, day=0), obs(100, day=1)])
    al.detect_alerts(con, r)
    load(con, [obs(95, day=2)])      # 5 % below, but only 2 days of history
    assert al.detect_alerts(con, r).detected == 0


def test_dedupe_holds_without_the_watermark(con):
    load(con, [obs(100, day=0)])
    al.detect_alerts(con, rules())
    load(con, [obs(88, day=1)])
    al.detect_alerts(con, rules())
    con.execute("delete from alerts.state")
    again = al.detect_alerts(con, rules())
    assert again.new_observations == 2 and again.found["drop"] == 1 and again.detected == 0
    assert len(outbox(con)) == 1


def test_watermark_skips_seen_observations_but_not_late_crawls(con):
    load(con, [obs(100, day=0), obs(100, day=0, sku="late")])
    al.detect_alerts(con, rules())
    load(con, [obs(88, day=2)])
    al.detect_alerts(con, rules())
    con.execute("delete from alerts.outbox")
    # Already looked at: the watermark keeps the day-2 drop from being detected again ...
    assert al.detect_alerts(con, rules()).new_observations == 0
    # ... while a crawl landing now with older observations (day 1) is still looked at.
    load(con, [obs(80, day=1, sku="late", crawl_id="late-crawl")])
    found = al.detect_alerts(con, rules())
    assert found.new_observations == 1 and len(found.new_keys["drop"]) == 1


# ----------------------------------------------------------------------------- other rules

def test_new_low_alerts_once(con):
    r = rules(drop={"enabled": False}, new_low={"min_improvement_pct": 1})
    shanghai = {**SHANGHAI, "sku": "sh"}
    load(con, [obs(100, day=0), obs(60, day=0, **shanghai)])
    assert al.detect_alerts(con, r).detected == 0      # a first price is no "new" low
    load(con, [obs(100, day=1), obs(90, day=1, sku="b"), obs(60, day=1, **shanghai)])
    found = al.detect_alerts(con, r)
    load(con, [obs(95, day=2), obs(90, day=2, sku="b"), obs(59.8, day=2, **shanghai)])
    later = al.detect_alerts(con, r)                   # 90 again; Shanghai only 0.3 % lower
    assert len(found.new_keys["new_low"]) == 1 and later.detected == 0
    [alert] = outbox(con, "new_low")
    assert alert["alert_key"] == "new_low:A100-80GB:on_demand:Beijing:90.000000"
    assert "New low for A100-80GB on_demand in Beijing: 90.00 CNY/GPU-h" in alert["title"]
    assert "Earlier low: 100.00 CNY" in alert["body"]


@pytest.mark.parametrize("region", ["北京", "Beijing", "beijing", "北京市"])
def test_watch_matches_a_region_in_chinese_or_english(con, region):
    r = rules(drop={"enabled": False}, new_low={"enabled": False},
              watch=[{"gpu_model": "A100-80GB", "region": region, "offer_kind": "on_demand",
                      "max_price_cny_per_gpu_hour": 60}])
    load(con, [obs(50, sku="bj-cheap"), obs(70, sku="bj-dear"),
               obs(40, sku="sh-cheap", **SHANGHAI), obs(30, sku="bj-spot", offer_kind="spot"),
               obs(20, sku="bj-h800", gpu_model="H800-80GB"),
               obs(45, sku="bj-gone", available=False)])
    found = al.detect_alerts(con, r)
    assert len(found.new_keys["watch"]) == 1
    [alert] = outbox(con, "watch")
    assert json.loads(alert["payload"])["sku"] == "bj-cheap"
    assert "50.00 CNY" in alert["body"] and "7.14 USD" in alert["body"]


def test_watch_alerts_again_only_after_going_above_the_ceiling(con):
    r = rules(drop={"enabled": False}, new_low={"enabled": False},
              watch=[{"gpu_model": "A100-80GB", "region": "Beijing",
                      "max_price_cny_per_gpu_hour": 60}])
    counts = []
    for day, price in enumerate((50, 55, 70, 50)):
        load(con, [obs(price, day=day)])
        counts.append(al.detect_alerts(con, r).detected)
    assert counts == [1, 0, 0, 1]


def test_watch_region_spellings_resolve_to_one_place():
    assert watch_region_filter("北京") == watch_region_filter("Beijing") == (
        "province_or_state", "Beijing")
    assert watch_region_filter("江苏") == watch_region_filter("Jiangsu") == (
        "province_or_state", "Jiangsu")
    assert watch_region_filter("内蒙古")[1] == "Inner Mongolia"
    assert watch_region_filter("US") == ("country", "US")


def test_month_end_dip_alerts_once_for_the_latest_complete_month(con):
    # 3 offers, 10 % cheaper in the last 5 days of September and October, back on the 1st; the
    # data run to Nov 7, so October is the latest complete month (a recurring dip over 2 months).
    r = al.parse_rules({"drop": {"enabled": False}, "new_low": {"enabled": False}}, "t")
    rows, first = [], datetime(2026, 9, 1, 9, tzinfo=UTC)
    for d in range(68):
        at = first + timedelta(days=d)
        last_days = (at + timedelta(days=5)).month != at.month
        rows += [obs(90 if last_days else 100, observed_at=at, sku=sku) for sku in "abc"]
    load(con, rows)
    found = al.detect_alerts(con, r)
    assert al.detect_alerts(con, r).detected == 0
    [alert] = outbox(con, "month_end_dip")
    assert found.new_keys["month_end_dip"] == [alert["alert_key"]]
    assert alert["alert_key"] == "month_end_dip:idc_test:A100-80GB:SXM:北京:on_demand:2026-10"
    assert "100.00 CNY / 14.29 USD" in alert["body"] and "90.00 CNY" in alert["body"]
    assert "Dip: 10.0 % below the line" in alert["body"]
    assert "a recurring dip of 10.0 % over 2 months" in alert["body"]
    assert "6 of 6 offer-months" in alert["body"] and "own noise is 0.25 %" in alert["body"]


# ------------------------------------------------------------------------- saved workloads

def advised(con: duckdb.DuckDBPyConnection, cost_cny: float, hour: int,
            workload: str = "13b-lora") -> datetime:
    """One advisor run whose best option for `workload` costs `cost_cny`, appended to the
    history as the advisor asset does; returns the run's computed_at."""
    from pipelines.defs.advisor import append_history

    computed_at = DAY1 + timedelta(hours=hour)
    append_history(con, [{
        "workload": workload, "total_cost_cny": Decimal(str(cost_cny)),
        "total_cost_usd": Decimal(str(round(cost_cny / 7, 2))),
        "configuration": "1/2 A100-80GB SXM (40 GB)", "kind": "slice",
        "gpu_model": "A100-80GB", "offer_kind": "on_demand", "billing_period": "hour",
        "vendor": "Test IDC", "source": "idc_test", "offer_id": f"offer-{hour}",
        "sku": "a100-80g-half", "region_code": "北京", "region_group": "Beijing",
        "url": "https://idc_test.example.test/prices"}], computed_at)
    return computed_at


def test_saved_workload_cheaper_alerts_once_per_advisor_run(con):
    r = rules(workload_cheaper={"min_drop_pct": 10})
    assert al.detect_alerts(con, r).found["workload_cheaper"] == 0   # no history table yet
    advised(con, 1000, hour=0)
    assert al.detect_alerts(con, r).detected == 0                     # nothing to compare with
    latest = advised(con, 850, hour=1)                                # 15 % cheaper
    first = al.detect_alerts(con, r)
    assert first.new_keys["workload_cheaper"] == [
        f"workload_cheaper:13b-lora:{latest.astimezone(UTC).isoformat()}"]
    assert al.detect_alerts(con, r).detected == 0                     # a re-run: same key
    [alert] = outbox(con, "workload_cheaper")
    for text in ("13b-lora", "15.0 % cheaper", "850.00 CNY", "1,000.00 CNY", "Test IDC",
                 "1/2 A100-80GB SXM (40 GB)", "offer-1", "https://idc_test.example.test/prices"):
        assert text in alert["title"] + alert["body"], text
    advised(con, 807.5, hour=2)                                       # 5 % below 850: no alert
    assert al.detect_alerts(con, r).detected == 0
    assert len(outbox(con, "workload_cheaper")) == 1
    assert al.detect_alerts(con, rules(workload_cheaper={"enabled": False})).found[
        "workload_cheaper"] == 0
