"""Prices inside markup (issue 25 item 5): read as the text a browser shows. Inline tags vanish so
their text joins ("<b>$2.99</b>/hr" is "$2.99/hr"), block elements and <br> part text with a
space, comments and scripts are not shown, entities are decoded."""

from __future__ import annotations

import itertools
from decimal import Decimal as D

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spiders.parsing.prices import (
    PriceParseError,
    displayed_text,
    is_per_card,
    parse_period,
    parse_price,
)


@pytest.mark.parametrize(("markup", "shown"), [
    ("<b>$2.99</b>/hr", "$2.99/hr"),
    ('<span class="price">¥</span><em>12.5</em>/<small>小时</small>', "¥12.5/小时"),
    ("&yen;12.5&nbsp;/&nbsp;h", "¥12.5 / h"),
    ("&#165;12.5/h", "¥12.5/h"), ("&#xA5;12.5/h", "¥12.5/h"),
    ("¥1<br>2/时", "¥1 2/时"), ("¥1<br/>2", "¥1 2"),
    ("<div>¥12</div><div>/时</div>", "¥12 /时"),
    ("¥12<!-- was ¥15 -->/时", "¥12/时"),
    ("<script>var p = 3;</script>¥2<style>b{}</style>/时", "¥2/时"),
    ("<p>a</p>b", "a b"), ("a<td>b</td>c", "a b c"), ("<i>a</i>b", "ab"),
    ("AT&T $2", "AT&T $2"),                  # no entity: left as written
    ("< $2/hr", "< $2/hr"),                  # no tag
    ("", ""),
])
def test_displayed_text(markup, shown):
    assert " ".join(displayed_text(markup).split()) == shown   # whitespace runs show as one


# markup, default_currency -> (amount, currency, period, per_card)
MARKUP = [
    ("<b>$2.99</b>/hr", None, (D("2.99"), "USD", "hour", False)),
    ('<span class="price">¥</span><em>12.5</em>/<small>小时</small>', None,
     (D("12.5"), "CNY", "hour", False)),
    ("&yen;12.5&nbsp;/&nbsp;h", None, (D("12.5"), "CNY", "hour", False)),
    ("&#165;12.5/h", None, (D("12.5"), "CNY", "hour", False)),
    ("&euro;1.10/h", None, (D("1.10"), "EUR", "hour", False)),
    ("&pound;3.40/day", None, (D("3.40"), "GBP", "day", False)),
    ("99&cent;/hr", "USD", (D("0.99"), "USD", "hour", False)),
    ("<strong>429</strong> <i>cents</i>/hr", "USD", (D("4.29"), "USD", "hour", False)),
    ("2720<sub>厘</sub>/时", None, (D("2.72"), "CNY", "hour", False)),
    ("12.5&#20803;/&#23567;&#26102;", None, (D("12.5"), "CNY", "hour", False)),   # 元/小时
    ("<b>1</b><b>2</b>.<b>5</b>元/时", None, (D("12.5"), "CNY", "hour", False)),
    ('<span>$2.79</span> <span class="u">/ GPU / hr</span>', None,
     (D("2.79"), "USD", "hour", True)),
    ("<td>¥8000</td><td>/卡/月</td>", None, (D(8000), "CNY", "month", True)),
    ("¥12<!-- was ¥15 -->/时", None, (D(12), "CNY", "hour", False)),
    ("<div>¥62/时</div><div>含税</div>", None, (D(62), "CNY", "hour", False)),
    ("<P>$2.49<BR>/hr</P>", None, (D("2.49"), "USD", "hour", False)),
    ("<html><body><b>$2</b>/hr</body></html>", None, (D(2), "USD", "hour", False)),
]


@pytest.mark.parametrize(("markup", "default", "expected"), MARKUP)
def test_price_inside_markup(markup, default, expected):
    got = parse_price(markup, default_currency=default)
    assert (got.amount, got.currency, got.period, got.per_card) == expected


def test_markup_range_and_pair():
    got = parse_price("<b>20</b>-<b>30</b>元/<small>小时</small>", range_end="low")
    assert (got.amount, got.price_low, got.price_high, got.period) == (D(20), D(20), D(30), "hour")
    got = parse_price("<span>原价</span><em>¥3.2</em> <span>现价</span><em>¥2.1</em>/时")
    assert (got.list_amount, got.amount, got.period) == (D("3.2"), D("2.1"), "hour")


@pytest.mark.parametrize(("markup", "reason"), [
    ("<del>$3</del> <b>$2.49</b>/hr", "two prices"),        # struck-through: html_table's job
    ("<li>$2/hr</li><li>$3/hr</li>", "two prices"),
    ("¥1<br>2/时", "two prices"),                            # a line break is no digit joiner
    ("<div>1</div><div>2</div>元/时", "two prices"),
    ("<b>¥2/时</b><b>¥3/时</b><b>¥4/时</b>", "3 numbers"),
    ("<b></b>", "no price given"), ('<img src="x.png">', "no price given"),
    ("<b>¥</b>/时", "no amount"),
    ("<script>¥3/时</script>", "no price given"),             # a browser shows none of it
    ("<b>面议</b>", "negotiable"), ("<span>售罄</span>", "sold out"),
    ("&euro;5&#20998;/h", "sub-unit of CNY"),                # €5分
    ("<b>$2</b>/<i>fortnight</i>", "unrecognized billing period"),
])
def test_markup_unhappy(markup, reason):
    with pytest.raises(PriceParseError) as err:
        parse_price(markup)
    assert reason in str(err.value), str(err.value)


def test_period_and_per_card_read_through_markup():
    assert parse_period("/<small>小时</small>") == "hour"
    assert parse_period("per&nbsp;hour") == "hour"
    assert is_per_card("<th>单卡<br>价格</th>") and not is_per_card("<th>整机价格</th>")


PRICES = ["$2.99/hr", "¥12.5/小时", "2720厘/时", "$2.79 / GPU / hr", "1,299元/月", "3.5万元/年",
          "原价¥3.2 现价¥2.1/时", "20-30元/小时", "€1.10/h excl. VAT", "¥8000/月 3个月起",
          "48.00 元/小时起", "429 cents/hr", "50p/hr", "¢99/hr", "HK$3.1/小时", "¥2.1/卡·时"]
INLINE = ["b", "i", "em", "strong", "span", "small", "sub", "sup", "u", "a", "font", "code"]


@st.composite
def wrapped(draw, text: str) -> str:
    """`text` cut at random places, some pieces in inline tags (with attributes, nested), some
    characters written as numeric entities."""
    cuts = sorted(draw(st.sets(st.integers(0, len(text)), max_size=6)) | {0, len(text)})
    out = []
    for start, end in itertools.pairwise(cuts):
        piece = "".join(f"&#{ord(ch)};" if draw(st.booleans()) and ch != " " else ch
                        for ch in text[start:end])
        for tag in draw(st.lists(st.sampled_from(INLINE), max_size=2)):
            attr = draw(st.sampled_from(["", ' class="price"', " style='color:red'"]))
            piece = f"<{tag}{attr}>{piece}</{tag}>"
        out.append(piece + draw(st.sampled_from(["", "<!-- x 9 -->", "<wbr>"])))
    return "".join(out)


@settings(max_examples=400, deadline=None)
@given(data=st.data(), text=st.sampled_from(PRICES))
def test_inline_tags_and_entities_never_change_the_parse(data, text):
    markup = data.draw(wrapped(text))
    assert parse_price(markup, default_currency="USD", range_end="high") == parse_price(
        text, default_currency="USD", range_end="high"), markup


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(
    [*"<>/&;#!-=\"' abpdivbrscript¥$元0123456789.时hr", "<b>", "</b>", "<br>", "&yen;"]),
    max_size=40).map("".join))
def test_only_price_parse_errors_on_markup_like_text(text):
    try:
        got = parse_price(text, default_currency="USD")
    except PriceParseError as err:
        assert str(err)
    else:
        assert got.amount is None or got.amount > 0


@pytest.mark.parametrize("markup", [
    "<b>" * 100_000 + "$2/hr",               # deeper than libxml2 nests: its text is dropped
    "<b>1</b>" * 125_000,                      # 1 MB that joins into one huge number
    "<!--" + "x" * 1_000_000,                  # an unclosed comment shows nothing
    "\x00\x08<b>\ud800$2</b>/hr\ufffe",        # characters lxml refuses are no price either
])
def test_hostile_markup_raises_or_parses_never_crashes(markup):
    try:
        got = parse_price(markup)
    except PriceParseError as err:
        assert str(err)
    else:
        assert (got.amount, got.currency, got.period) == (D(2), "USD", "hour")
