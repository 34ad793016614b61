"""Alerts delivered for real on loopback: through Apprise to a JSON webhook receiver
(http.server) or an SMTP server (aiosmtpd), both on 127.0.0.1; failures, retries and what is
never logged. Backoff waits are recorded instead of slept.
"""

from __future__ import annotations

import json
import logging
from email.header import decode_header, make_header

import duckdb
import pytest

import pipelines.alerts as al
from tests.helpers.alert_histories import channels, load, obs, outbox, rules
from tests.helpers.receivers import Receiver, free_port

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


def test_one_channel_down_is_partial_and_the_retry_goes_only_to_it(con, receiver):
    load(con, [obs(100, day=0)])
    al.detect_alerts(con, rules())
    load(con, [obs(88, day=1)])
    al.detect_alerts(con, rules())
    port = free_port()
    chs = channels(receiver.url, f"json://127.0.0.1:{port}/")
    result = al.deliver_pending(con, chs, rules().delivery, sleep=lambda s: None)
    [alert] = outbox(con)
    assert (alert["status"], result.partial, len(receiver.posts)) == ("partial", 1, 1)
    per_channel = {v["channel"]: v["status"] for v in json.loads(alert["channel_status"]).values()}
    assert per_channel == {f"json://127.0.0.1:{receiver.port}": "sent",
                           f"json://127.0.0.1:{port}": "failed"}
    up = Receiver(port)
    try:
        al.deliver_pending(con, chs, rules().delivery, sleep=lambda s: None)
    finally:
        up.stop()
    [alert] = outbox(con)
    assert alert["status"] == "sent"
    assert len(receiver.posts) == 1 and len(up.posts) == 1      # the retry reached only the other
    assert {v["status"] for v in json.loads(alert["channel_status"]).values()} == {"sent"}


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
