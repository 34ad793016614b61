"""Price alerts end to end on small hand-made histories, delivered for real on loopback.

Each test fills a DuckDB's `observations` (and `raw.crawls`, as the loader does), builds every SQL
model of the project as the pipeline does, runs detection into `alerts.outbox` and delivers
through Apprise to a JSON webhook receiver (http.server) or an SMTP server (aiosmtpd), both on
127.0.0.1. Backoff waits are recorded instead of slept.
"""

from __future__ import annotations

import email
import functools
import hashlib
import json
import logging
import socket
import threading
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from email.header import decode_header, make_header
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from aiosmtpd.controller import Controller
from dagster_duckdb import DuckDBResource

import pipelines.alerts as al
from pipelines.alerts.rules import watch_region_filter
from pipelines.defs.alerts import price_alerts
from pipelines.warehouse.db import ensure_schema
from pipelines.warehouse.sql_models import load_models, run_model
from spiders.layout import SQL_DIR

EXTERNAL = {"observations", "quarantine"}
HOURS = {"hour": 1, "day": 24, "week": 168, "month": 730, "year": 8760}
DAY1 = datetime(2026, 11, 20, 9, tzinfo=UTC)
BEIJING = {"region_code": "北京", "country": "CN", "province_or_state": "Beijing",
           "city": "Beijing", "is_tier1_city": True}
SHANGHAI = {"region_code": "上海", "country": "CN", "province_or_state": "Shanghai",
            "city": "Shanghai", "is_tier1_city": True}
NO_BACKOFF = {"delivery": {"attempts": 3, "backoff_seconds": 0.5}}


# ---------------------------------------------------------------------------------- histories

def obs(price: float, day: int = 0, **overrides) -> dict:
    """One observation `day` days after DAY1: `price` is CNY per billing_period as listed."""
    row = {"observed_at": DAY1 + timedelta(days=day), "source": "idc_test",
           "vendor": "Test IDC", "vendor_kind": "idc", **BEIJING, "gpu_model": "A100-80GB",
           "gpu_variant": "SXM", "gpu_count": 1, "gpu_fraction": Decimal("1"),
           "offer_kind": "on_demand", "billing_period": "hour", "currency": "CNY",
           "available": True, "sku": "a100-80g-1x"}
    row.update(overrides)
    row["gpu_fraction"] = Decimal(str(row["gpu_fraction"]))
    row.setdefault("crawl_id", f"{row['source']}-{row['observed_at']:%Y%m%d%H}")
    row.setdefault("vram_gb", Decimal("80") * row["gpu_fraction"])
    row["price_amount"] = Decimal(str(price))
    per_gpu_hour = (row["price_amount"] / HOURS[row["billing_period"]]
                    / (row["gpu_count"] * row["gpu_fraction"]))
    row.setdefault("price_per_gpu_hour_cny", round(per_gpu_hour, 6))
    row.setdefault("price_per_gpu_hour_usd", round(row["price_per_gpu_hour_cny"] / 7, 6))
    row.setdefault("fx_rate_date", row["observed_at"].date())
    row.setdefault("observed_hour", row["observed_at"].replace(minute=0, second=0))
    key = "|".join(str(row[k]) for k in ("source", "region_code", "sku", "offer_kind",
                                          "billing_period"))
    row.setdefault("offer_id", hashlib.sha256(key.encode()).hexdigest()[:16])
    row.setdefault("url", f"https://{row['source']}.example.test/prices")
    row.setdefault("raw_ref", f"raw/{row['offer_id']}")
    return row


def load(con: duckdb.DuckDBPyConnection, rows: list[dict]) -> None:
    """Land observations as the pipeline does (a raw.crawls row per crawl, normalized now), then
    build every SQL model in dependency order (incremental models incrementally)."""
    columns = list(rows[0])
    con.executemany(f"insert into observations ({', '.join(columns)}) "
                    f"values ({', '.join('?' for _ in columns)})",
                    [[row[c] for c in columns] for row in rows])
    for crawl_id, source in {(r["crawl_id"], r["source"]) for r in rows}:
        con.execute("insert into raw.crawls (crawl_id, source, mode, passed, offers, "
                    "normalized_at, status) values (?, ?, 'replay', true, 1, now(), 'passed') "
                    "on conflict do nothing", [crawl_id, source])
    for model in models():
        run_model(con, model)


@functools.cache
def models():
    return load_models(SQL_DIR, EXTERNAL)   # parsed once: sqlglot is the slow part


def rules(**sections) -> al.AlertRules:
    """Only the drop rule (10 %) unless `sections` switch others on; tiny backoff."""
    return al.parse_rules({"drop": {"min_drop_pct": 10}, "new_low": {"enabled": False},
                           "month_end_dip": {"enabled": False}, **NO_BACKOFF, **sections},
                          "test rules")


def outbox(con: duckdb.DuckDBPyConnection, rule: str | None = None) -> list[dict]:
    cursor = con.execute("select * from alerts.outbox where ? is null or rule = ? "
                         "order by created_at, alert_key", [rule, rule])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


# ------------------------------------------------------------------------------ loopback servers

def free_port() -> int:
    """A port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Receiver:
    """A JSON webhook on 127.0.0.1 recording every POST."""

    def __init__(self, port: int = 0):
        posts = self.posts = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                posts.append({"path": self.path, "json": json.loads(body)})
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"json://127.0.0.1:{self.port}/hook"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.stop()


class Mailbox:
    def __init__(self):
        self.messages: list[email.message.Message] = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(email.message_from_bytes(envelope.content))
        return "250 OK"


@pytest.fixture
def smtp_server():
    mailbox = Mailbox()
    controller = Controller(mailbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    yield controller, mailbox
    controller.stop()


def channels(*urls: str) -> list[al.Channel]:
    return al.load_channels({al.NOTIFY_URLS_ENV: " ".join(urls)})


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
    # data run to Nov 7, so October is the latest complete month (6 offer-months, p = 1/64).
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
    assert "6 of 6 offer-months" in alert["body"] and "p = 0.0156" in alert["body"]


# ---------------------------------------------------------------------------------- delivery

def test_dead_endpoint_fails_then_the_next_run_delivers(con):
    load(con, [obs(100, day=0)])
    al.detect_alerts(con, rules())
    load(con, [obs(88, day=1)])
    al.detect_alerts(con, rules())
    port = free_port()
    chs = channels(f"json://127.0.0.1:{port}/hook")
    waits: list[float] = []
    result = al.deliver_pending(con, chs, rules().delivery, sleep=waits.append)
    [alert] = outbox(con)
    assert (result.delivered, result.failed, result.pending) == (0, 1, 1)
    assert (alert["status"], alert["attempts"]) == ("failed", 3)
    assert f"json://127.0.0.1:{port}" in alert["last_error"]
    assert "connection" in alert["last_error"].lower()
    assert waits == [0.5, 1.0]                      # backoff doubles between attempts

    up = Receiver(port)                             # the endpoint comes back on the same port
    try:
        result = al.deliver_pending(con, chs, rules().delivery, sleep=waits.append)
    finally:
        up.stop()
    [alert] = outbox(con)
    assert (result.delivered, result.pending) == (1, 0) and len(up.posts) == 1
    assert (alert["status"], alert["attempts"], alert["last_error"]) == ("sent", 4, None)


def test_a_channel_down_is_not_waited_for_again_in_the_same_run(con):
    load(con, [obs(100, day=0), obs(100, day=0, sku="b")])
    al.detect_alerts(con, rules())
    load(con, [obs(88, day=1), obs(80, day=1, sku="b")])
    al.detect_alerts(con, rules())
    waits: list[float] = []
    al.deliver_pending(con, channels(f"json://127.0.0.1:{free_port()}/"), rules().delivery,
                       sleep=waits.append)
    first, second = outbox(con)
    assert (first["status"], first["attempts"]) == ("failed", 3) and len(waits) == 2
    assert (second["status"], second["attempts"]) == ("pending", 0)
    assert "not tried" in second["last_error"]


def test_one_channel_failing_does_not_resend_to_the_other(con, receiver):
    load(con, [obs(100, day=0)])
    al.detect_alerts(con, rules())
    load(con, [obs(88, day=1)])
    al.detect_alerts(con, rules())
    port = free_port()
    chs = channels(receiver.url, f"json://127.0.0.1:{port}/")
    al.deliver_pending(con, chs, rules().delivery, sleep=lambda s: None)
    assert outbox(con)[0]["status"] == "failed" and len(receiver.posts) == 1
    up = Receiver(port)
    try:
        al.deliver_pending(con, chs, rules().delivery, sleep=lambda s: None)
    finally:
        up.stop()
    assert outbox(con)[0]["status"] == "sent"
    assert len(receiver.posts) == 1 and len(up.posts) == 1


def test_email_arrives_with_the_title_as_subject(con, smtp_server):
    controller, mailbox = smtp_server
    load(con, [obs(100, day=0)])
    al.detect_alerts(con, rules())
    load(con, [obs(88, day=1)])
    al.detect_alerts(con, rules())
    url = (f"mailto://127.0.0.1:{controller.port}?from=alerts@gpuprices.test"
           "&to=buyer@example.test&mode=insecure")
    result = al.deliver_pending(con, channels(url), rules().delivery)
    [alert] = outbox(con)
    assert result.delivered == 1 and alert["status"] == "sent"
    [message] = mailbox.messages
    assert str(make_header(decode_header(message["Subject"]))) == alert["title"]
    assert message["To"] == "buyer@example.test"
    text = next(p for p in message.walk() if p.get_content_type() == "text/plain")
    assert "https://idc_test.example.test/prices" in text.get_payload(decode=True).decode()


def test_no_urls_leaves_alerts_pending(con):
    load(con, [obs(100, day=0)])
    al.detect_alerts(con, rules())
    load(con, [obs(88, day=1)])
    al.detect_alerts(con, rules())
    assert al.load_channels({}) == []
    result = al.deliver_pending(con, [], rules().delivery)
    assert (result.delivered, result.failed, result.pending) == (0, 0, 1)
    assert "no notification URLs configured" in result.note
    assert outbox(con)[0]["status"] == "pending"


def test_url_credentials_are_never_logged_or_stored(con, caplog):
    load(con, [obs(100, day=0)])
    al.detect_alerts(con, rules())
    load(con, [obs(88, day=1)])
    al.detect_alerts(con, rules())
    port = free_port()
    secret_url = f"json://alice:s3cretPass@127.0.0.1:{port}/t0kenPath123?apikey=abcdef987"
    [channel] = channels(secret_url)
    assert channel.label == f"json://127.0.0.1:{port}"
    with caplog.at_level(logging.DEBUG):
        al.deliver_pending(con, [channel], rules().delivery, sleep=lambda s: None)
    stored = json.dumps(outbox(con), default=str) + caplog.text
    assert outbox(con)[0]["status"] == "failed"
    for secret in ("s3cretPass", "t0kenPath123", "abcdef987", "alice"):
        assert secret not in stored, secret
    # Token-in-host schemes show only their scheme.
    [ding] = channels("dingtalk://0123456789abcdeftokentoken/")
    assert ding.label == "dingtalk://…" and "0123456789abcdef" not in repr(ding)


def test_notify_urls_split_on_whitespace_and_commas():
    assert al.split_urls("json://a.test/x, mailto://h.test?to=a@x.test,b@y.test\n"
                         "  json://b.test/") == \
        ["json://a.test/x", "mailto://h.test?to=a@x.test,b@y.test", "json://b.test/"]
    with pytest.raises(al.NotifyConfigError, match=r"entry 2 \(scheme 'nosuchscheme'\)") as err:
        channels("json://a.test/", "nosuchscheme://secret-token/")
    assert "secret-token" not in str(err.value)


def test_notify_config_file(tmp_path, receiver):
    config = tmp_path / "apprise.yml"
    config.write_text(f"urls:\n  - {receiver.url}\n", encoding="utf-8")
    [channel] = al.load_channels({al.NOTIFY_CONFIG_ENV: str(config)})
    assert al.send(channel, "hello", "from a config file") is None
    assert receiver.posts[0]["json"]["title"] == "hello"
    with pytest.raises(al.NotifyConfigError, match="no such file"):
        al.load_channels({al.NOTIFY_CONFIG_ENV: str(tmp_path / "missing.yml")})


def test_notify_run_failure_sends_now_and_records(con, receiver):
    chs = channels(receiver.url)
    notice = al.notify_run_failure("gpuprices run failed", "run 1234: step x failed", con=con,
                                   channels=chs)
    again = al.notify_run_failure("gpuprices run failed", "run 1234: step x failed", con=con,
                                  channels=chs)
    assert (notice.status, notice.recorded, again.status) == ("sent", True, "duplicate")
    assert len(receiver.posts) == 1
    assert receiver.posts[0]["json"]["type"] == "failure"
    [row] = outbox(con, "run_failure")
    assert row["status"] == "sent" and row["body"] == "run 1234: step x failed"


def test_notify_run_failure_uses_the_working_database(data_dir, receiver, monkeypatch):
    monkeypatch.setenv(al.NOTIFY_URLS_ENV, receiver.url)
    notice = al.notify_run_failure("run failed", "details")
    assert notice.status == "sent" and notice.recorded
    with duckdb.connect(str(data_dir / ".work" / "prices.db"), read_only=True) as db:
        assert db.execute("select rule, status from alerts.outbox").fetchall() == \
            [("run_failure", "sent")]


# ------------------------------------------------------------------------------------- config

def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rules.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("text, message", [
    ("[drop]\nmin_drop_pc = 10\n", "drop.min_drop_pc: unknown key"),
    ("[drop]\nmin_drop_pct = 'ten'\n", "drop.min_drop_pct: must be a number, got 'ten'"),
    ("[drop]\nmin_drop_pct = 150\n", "drop.min_drop_pct: must be a number > 0 and < 100"),
    ("[drop]\nenabled = 1\n", "drop.enabled: must be true or false, got 1"),
    ("[drop]\nmedian_days = 2.5\n", "drop.median_days: must be a whole number, got 2.5"),
    ("drop = 5\n", "drop: must be a table, got 5"),
    ("[drop]\nrequire = 'both'\n", "drop.require: 'both' is not one of any, all"),
    ("[drop]\ngpu_models = []\n", "drop: set min_drop_pct and/or min_below_median_pct"),
    ("[new_low]\ngpu_models = ['A100']\n", "new_low.gpu_models[0]: 'A100' is not one of"),
    ("[delivery]\nattempts = 0\n", "delivery.attempts: must be a whole number >= 1 and < 11"),
    ("[[watch]]\ngpu_model = 'A100-80GB'\nregion = '北京'\n",
     "watch[0].max_price_cny_per_gpu_hour: missing (required)"),
    ("[[watch]]\ngpu_model = 'A100-80GB'\nregion = 'Atlantis'\nmax_price_cny_per_gpu_hour = 9\n",
     "watch[0].region: unknown region 'Atlantis'"),
    ("[[watch]]\nregion = '北京'\nmax_price_cny_per_gpu_hour = 9\n",
     "watch[0].gpu_model: missing (required"),
    ("[[watch]]\ngpu_model = 'A100-80GB'\nregion = '北京'\nmax_price_cny_per_gpu_hour = 9\n"
     "offer_kind = 'preemptible'\n", "watch[0].offer_kind: 'preemptible' is not one of"),
    ("[alerts]\n", "alerts: unknown key"),
    ("[drop\n", "not valid TOML"),
])
def test_config_errors_name_the_key(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(al.AlertConfigError) as err:
        al.load_rules(path)
    assert str(err.value).startswith(f"{path}: ")
    assert message in str(err.value)


def test_rules_file_from_the_environment(tmp_path):
    path = write(tmp_path, "[drop]\nmin_drop_pct = 25\n")
    assert al.load_rules(env={al.CONFIG_ENV: str(path)}).drop.min_drop_pct == 25
    with pytest.raises(al.AlertConfigError, match="no such alert rules file"):
        al.load_rules(env={al.CONFIG_ENV: str(tmp_path / "nope.toml")})


def test_the_default_rules_file_is_valid():
    r = al.load_rules(al.DEFAULT_CONFIG)
    assert r.drop.enabled and r.drop.min_drop_pct == 10 and r.delivery.attempts == 3
    assert {w.region_value for w in r.watch} == {"Beijing", "Jiangsu"}


# ------------------------------------------------------------------------------------ Dagster

def work_db(tmp_path: Path) -> Path:
    """A working database whose last load holds a 12 % drop, detection already run once."""
    database = tmp_path / "work.db"
    with duckdb.connect(str(database)) as db:
        ensure_schema(db)
        load(db, [obs(100, day=0)])
        al.detect_alerts(db, rules())
        load(db, [obs(88, day=1)])
    return database


def materialize(database: Path, **kwargs) -> dg.ExecuteInProcessResult:
    return dg.materialize([price_alerts], resources={"duckdb": DuckDBResource(
        database=str(database))}, **kwargs)


def metadata(result: dg.ExecuteInProcessResult) -> dict:
    [materialization] = result.asset_materializations_for_node("alerts__price_alerts")
    return {k: v.value for k, v in materialization.metadata.items()}


def failure_message(result: dg.ExecuteInProcessResult) -> str:
    [event] = result.get_step_failure_events()
    return event.step_failure_data.user_failure_data.description


def test_asset_detects_delivers_and_reports(tmp_path, receiver, monkeypatch):
    database = work_db(tmp_path)
    monkeypatch.setenv(al.CONFIG_ENV, str(write(tmp_path, "[delivery]\nbackoff_seconds = 0\n")))
    monkeypatch.setenv(al.NOTIFY_URLS_ENV, receiver.url)
    result = materialize(database)
    assert result.success
    meta = metadata(result)
    # The default rules: the 12 % drop is also a new low for the card in Beijing.
    assert (meta["detected"], meta["delivered"], meta["failed"], meta["pending"]) == (2, 2, 0, 0)
    assert meta["detected_by_rule"] == {"drop": 1, "new_low": 1, "month_end_dip": 0, "watch": 0,
                                        "workload_cheaper": 0}   # no advisor history here
    assert sorted(p["json"]["title"].split(":")[0] for p in receiver.posts) == \
        ["New low for A100-80GB on_demand in Beijing", "Price drop -12.0 %"]
    assert price_alerts.key == dg.AssetKey(["alerts", "price_alerts"])
    assert {k.to_user_string() for k in price_alerts.dependency_keys} == {
        "marts/latest_prices", "marts/month_end_dip", "intermediate/int_price_changes",
        "intermediate/int_offer_daily", "advisor/workload_advice"}


def test_asset_without_urls_keeps_alerts_pending(tmp_path, monkeypatch):
    database = work_db(tmp_path)
    monkeypatch.setenv(al.CONFIG_ENV, str(write(tmp_path, "")))
    monkeypatch.delenv(al.NOTIFY_URLS_ENV, raising=False)
    monkeypatch.delenv(al.NOTIFY_CONFIG_ENV, raising=False)
    result = materialize(database)
    meta = metadata(result)
    assert result.success and (meta["detected"], meta["delivered"], meta["pending"]) == (2, 0, 2)
    assert "no notification URLs configured" in meta["delivery"]


def test_asset_with_a_bad_url_fails_and_keeps_the_alerts(tmp_path, monkeypatch):
    database = work_db(tmp_path)
    monkeypatch.setenv(al.CONFIG_ENV, str(write(tmp_path, "")))
    monkeypatch.setenv(al.NOTIFY_URLS_ENV, "nosuchscheme://s3cret-t0ken/")
    result = materialize(database, raise_on_error=False)
    assert not result.success
    message = failure_message(result)
    assert "entry 1 (scheme 'nosuchscheme')" in message and "2 new alerts wait" in message
    assert "s3cret-t0ken" not in message
    with duckdb.connect(str(database), read_only=True) as db:
        assert db.execute("select count(*) from alerts.outbox where status = 'pending'"
                          ).fetchone()[0] == 2


def test_asset_with_a_bad_rules_file_fails_naming_the_key(tmp_path, monkeypatch):
    database = work_db(tmp_path)
    monkeypatch.setenv(al.CONFIG_ENV, str(write(tmp_path, "[new_low]\nmin_improvment_pct = 1\n")))
    result = materialize(database, raise_on_error=False)
    assert not result.success
    assert "new_low.min_improvment_pct: unknown key" in failure_message(result)


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


def test_workload_cheaper_threshold_is_validated(tmp_path):
    with pytest.raises(al.AlertConfigError, match=r"workload_cheaper\.min_drop_pct: must be"):
        al.load_rules(write(tmp_path, "[workload_cheaper]\nmin_drop_pct = 0\n"))
    assert al.load_rules(al.DEFAULT_CONFIG).workload_cheaper.min_drop_pct == 10
