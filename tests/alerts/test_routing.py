"""Alerts people can route and trust: channels by Apprise tag, templates users override (a bad
one fails at load), distinct titles for distinct offers, an older outbox migrated, and
`gpuprices alerts test`, all against JSON webhook receivers on 127.0.0.1."""

from __future__ import annotations

import pytest

import pipelines.alerts as al
from tests.helpers.alert_histories import channels, load, obs, outbox, rules
from tests.helpers.published import gpuprices
from tests.helpers.receivers import Receiver, free_port


@pytest.fixture
def second_receiver():
    r = Receiver()
    yield r
    r.stop()


def _one_drop(con, **rule_sections) -> None:
    load(con, [obs(100, day=0)])
    al.detect_alerts(con, rules(**rule_sections))
    load(con, [obs(88, day=1)])
    al.detect_alerts(con, rules(**rule_sections))


# ---------------------------------------------------------------------------------- routing

def test_tags_in_the_env_var_and_in_an_apprise_config_file(tmp_path):
    assert al.split_entries("ops=json://a.test/x,ops,Buyers=json://b.test/ json://c.test/") == \
        [(("ops",), "json://a.test/x"), (("ops", "buyers"), "json://b.test/"),
         ((), "json://c.test/")]
    config = tmp_path / "apprise.txt"
    config.write_text("buyers=json://127.0.0.1:9/hook\n", encoding="utf-8")
    [tagged, plain] = al.load_channels({al.NOTIFY_URLS_ENV: "json://127.0.0.1:8/x",
                                        al.NOTIFY_CONFIG_ENV: str(config)})[::-1]
    assert (tagged.tags, plain.tags) == ({"buyers"}, frozenset())


def test_an_alert_routed_to_one_of_two_channels_reaches_only_that_one(con, receiver,
                                                                      second_receiver):
    drop = {"min_drop_pct": 10, "channels": ["buyers"]}
    _one_drop(con, drop=drop)
    chs = channels(f"ops={receiver.url}", f"buyers={second_receiver.url}")
    result = al.deliver_pending(con, chs, rules(drop=drop).delivery, sleep=lambda s: None)
    assert (result.delivered, len(receiver.posts), len(second_receiver.posts)) == (1, 0, 1)
    [alert] = outbox(con)
    assert (alert["status"], alert["route"]) == ("sent", ["buyers"])


def test_a_rule_without_channels_goes_to_the_default(con, receiver, second_receiver):
    _one_drop(con)
    chs = channels(f"ops={receiver.url}", second_receiver.url)      # untagged: the default
    al.deliver_pending(con, chs, rules().delivery, sleep=lambda s: None)
    assert (len(receiver.posts), len(second_receiver.posts)) == (0, 1)
    # [delivery] default_channels sends untagged rules to tagged URLs instead.
    settings = rules(delivery={"attempts": 1, "default_channels": ["ops"]}).delivery
    con.execute("update alerts.outbox set status = 'pending', delivered_to = []")
    al.deliver_pending(con, chs, settings, sleep=lambda s: None)
    assert (len(receiver.posts), len(second_receiver.posts)) == (1, 1)


def test_a_route_no_channel_carries_stays_pending_until_one_does(con, receiver):
    drop = {"min_drop_pct": 10, "channels": ["buyers"]}
    _one_drop(con, drop=drop)
    result = al.deliver_pending(con, channels(receiver.url), rules(drop=drop).delivery)
    [alert] = outbox(con)
    assert (result.unrouted, alert["status"], len(receiver.posts)) == (1, "pending", 0)
    assert "no notification URL tagged buyers" in alert["last_error"]
    al.deliver_pending(con, channels(f"buyers,ops={receiver.url}"), rules(drop=drop).delivery)
    assert outbox(con)[0]["status"] == "sent" and len(receiver.posts) == 1


def test_an_outbox_from_before_routing_is_migrated_and_its_rows_delivered(con, receiver):
    con.execute("create schema alerts")
    con.execute("""create table alerts.outbox (alert_key varchar primary key, rule varchar not null,
                   title varchar not null, body varchar not null, payload json not null,
                   created_at timestamptz not null, status varchar not null,
                   attempts integer not null default 0, last_error varchar, sent_at timestamptz,
                   delivered_to varchar[] not null default [])""")
    con.execute("insert into alerts.outbox (alert_key, rule, title, body, payload, created_at, "
                "status) values ('old', 'drop', 't', 'b', '{}', now(), 'failed')")
    al.ensure_outbox(con)
    al.ensure_outbox(con)                                   # idempotent
    result = al.deliver_pending(con, channels(receiver.url), rules().delivery)
    [alert] = outbox(con)
    assert (result.delivered, alert["status"], alert["route"]) == (1, "sent", None)


# -------------------------------------------------------------------------------- templates

def test_titles_of_different_offers_never_match(con):
    day0 = [obs(100, day=0, sku=sku, offer_kind=kind, billing_period=period)
            for sku, kind, period in (("a", "on_demand", "hour"), ("b", "on_demand", "hour"),
                                      ("a", "spot", "hour"), ("a", "on_demand", "month"))]
    load(con, day0)
    al.detect_alerts(con, rules())
    load(con, [obs(88, day=1, sku=r["sku"], offer_kind=r["offer_kind"],
                   billing_period=r["billing_period"]) for r in day0])
    al.detect_alerts(con, rules())
    titles = [a["title"] for a in outbox(con)]
    assert len(titles) == 4 and len(set(titles)) == 4, titles


def test_user_templates_override_the_defaults(con, tmp_path):
    folder = tmp_path / "alert_templates"
    folder.mkdir()
    (folder / "drop.title.j2").write_text("{{ row.vendor }} {{ row.sku }}: {{ price_cny }} "
                                          "({{ change_pct }} %)", encoding="utf-8")
    rules_file = tmp_path / "rules.toml"
    rules_file.write_text('[templates]\ndir = "alert_templates"\n[new_low]\nenabled = false\n'
                          '[month_end_dip]\nenabled = false\n', encoding="utf-8")
    loaded = al.load_rules(rules_file)
    load(con, [obs(100, day=0)])
    al.detect_alerts(con, loaded)
    load(con, [obs(88, day=1)])
    al.detect_alerts(con, loaded)
    [alert] = outbox(con)
    assert alert["title"].endswith("a100-80g-1x: 88.00 (-12.0 %)")
    assert "Was: 100.00 CNY per hour" in alert["body"]          # the default body


@pytest.mark.parametrize(("name", "text", "message"), [
    ("drop.title.j2", "{{ row.vendor ", r"drop.title.j2:1: unexpected end of template"),
    ("drop.body.j2", "line\n{{ no_such_name }}", r"unknown name\(s\) no_such_name"),
    ("dorp.title.j2", "x", r"not a template name this version knows"),
])
def test_a_bad_template_fails_when_the_rules_load(tmp_path, name, text, message):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / name).write_text(text, encoding="utf-8")
    rules_file = tmp_path / "rules.toml"
    rules_file.write_text('[templates]\ndir = "t"\n', encoding="utf-8")
    with pytest.raises(al.AlertConfigError, match=message) as err:
        al.load_rules(rules_file)
    assert str(rules_file) in str(err.value) and "templates.dir" in str(err.value)


# ----------------------------------------------------------------------- gpuprices alerts test

def test_alerts_test_reaches_every_channel_and_reports_a_dead_one(tmp_path, receiver,
                                                                  monkeypatch):
    dead = f"json://127.0.0.1:{free_port()}/hook"
    monkeypatch.setenv(al.NOTIFY_URLS_ENV, f"ops={receiver.url} buyers={dead}")
    result = gpuprices(tmp_path, "alerts", "test", "--channel", "ops")
    assert result.exit_code == 0, result.output
    assert f"json://127.0.0.1:{receiver.port} [ops]: sent" in result.output
    [post] = receiver.posts
    assert post["json"]["title"] == f"gpuprices test notification to json://127.0.0.1:{receiver.port}"

    result = gpuprices(tmp_path, "alerts", "test")
    assert result.exit_code == 1, result.output
    assert "[buyers]: failed" in result.output and "1 of 2 channels failed" in result.output
    assert len(receiver.posts) == 2


def test_alerts_test_without_a_channel_is_no_data(tmp_path, receiver, monkeypatch):
    monkeypatch.delenv(al.NOTIFY_URLS_ENV, raising=False)
    monkeypatch.delenv(al.NOTIFY_CONFIG_ENV, raising=False)
    result = gpuprices(tmp_path, "alerts", "test")
    assert result.exit_code == 3 and "no notification channel configured" in result.output
    monkeypatch.setenv(al.NOTIFY_URLS_ENV, receiver.url)
    result = gpuprices(tmp_path, "alerts", "test", "--channel", "ops")
    assert result.exit_code == 3 and "tagged 'ops'" in result.output and not receiver.posts
