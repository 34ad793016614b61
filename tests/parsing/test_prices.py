"""Price strings as vendors write them -> exact Decimal amount, ISO currency, billing period."""

from __future__ import annotations

from decimal import Decimal as D

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spiders.parsing.prices import (
    HOURS_PER_PERIOD,
    ParsedPrice,
    PriceParseError,
    parse_period,
    parse_price,
    per_hour,
)

# text, default_currency, default_period -> ParsedPrice(amount, currency, period, ...); the classes
# with their own tables (ranges, per-card markers, units, tax, minimum terms) follow.
PRICES = [
    ("¥1.98/时", None, None, ParsedPrice(D("1.98"), "CNY", "hour")),
    ("¥1.98/小时", None, None, ParsedPrice(D("1.98"), "CNY", "hour")),
    ("1.98元/时", None, None, ParsedPrice(D("1.98"), "CNY", "hour")),
    ("1,299元/月", None, None, ParsedPrice(D("1299"), "CNY", "month")),
    ("￥8000/卡/月", None, None, ParsedPrice(D("8000"), "CNY", "month", per_card=True)),
    ("￥６２.００／时", None, None, ParsedPrice(D("62.00"), "CNY", "hour")),   # full-width
    ("$2.49/hr", None, None, ParsedPrice(D("2.49"), "USD", "hour")),
    ("$2.93391 / 1 hour", None, None, ParsedPrice(D("2.93391"), "USD", "hour")),  # Google's pages
    ("$2.79 / GPU / hr", None, None, ParsedPrice(D("2.79"), "USD", "hour", per_card=True)),
    ("0.35 USD per hour", None, None, ParsedPrice(D("0.35"), "USD", "hour")),
    ("48.00 元/小时起", None, None, ParsedPrice(D("48"), "CNY", "hour", is_starting_price=True)),
    ("48元起/小时", None, None, ParsedPrice(D("48"), "CNY", "hour", is_starting_price=True)),
    ("from $2/hr", None, None, ParsedPrice(D("2"), "USD", "hour", is_starting_price=True)),
    ("2.1万/月", None, None, ParsedPrice(D("21000"), "CNY", "month")),
    ("2.1万/月", "CNY", None, ParsedPrice(D("21000"), "CNY", "month")),
    ("3.5万元/年", None, None, ParsedPrice(D("35000"), "CNY", "year")),
    ("价格：3.5万元/年", None, None, ParsedPrice(D("35000"), "CNY", "year")),
    ("3.5万元一年", None, None, ParsedPrice(D("35000"), "CNY", "year")),
    ("8千元/月", None, None, ParsedPrice(D("8000"), "CNY", "month")),
    ("$2k/mo", None, None, ParsedPrice(D("2000"), "USD", "month")),
    ("原价¥3.2 现价¥2.1", None, None, ParsedPrice(D("2.1"), "CNY", None, list_amount=D("3.2"))),
    ("原价¥3.2/时 现价¥2.1/时", None, None,
     ParsedPrice(D("2.1"), "CNY", "hour", list_amount=D("3.2"))),
    ("现价¥2.1 原价¥3.2", None, "hour",
     ParsedPrice(D("2.1"), "CNY", "hour", list_amount=D("3.2"))),
    ("原价 ¥3.20 ¥2.10/时", None, None,
     ParsedPrice(D("2.10"), "CNY", "hour", list_amount=D("3.20"))),
    ("was $3.00 now $2.49/hr", None, None,
     ParsedPrice(D("2.49"), "USD", "hour", list_amount=D("3.00"))),
    ("RMB 7.20 / hour", None, None, ParsedPrice(D("7.20"), "CNY", "hour")),
    ("1,234.5 CNY", None, None, ParsedPrice(D("1234.5"), "CNY", None)),
    ("1,234.5 CNY", None, "month", ParsedPrice(D("1234.5"), "CNY", "month")),
    ("€1.10/h", None, None, ParsedPrice(D("1.10"), "EUR", "hour")),
    ("0,35 €/h", None, None, ParsedPrice(D("0.35"), "EUR", "hour")),
    ("1.234,50 € / month", None, None, ParsedPrice(D("1234.50"), "EUR", "month")),
    ("HK$3.1/小时", None, None, ParsedPrice(D("3.1"), "HKD", "hour")),
    ("US$1.25 per GPU per hour", None, None, ParsedPrice(D("1.25"), "USD", "hour", per_card=True)),
    ("$0.125/hr", None, None, ParsedPrice(D("0.125"), "USD", "hour")),   # not 125
    ("$2 an hour", None, None, ParsedPrice(D("2"), "USD", "hour")),
    ("$1,299.00 monthly", None, None, ParsedPrice(D("1299"), "USD", "month")),
    ("£3.40/day", None, None, ParsedPrice(D("3.40"), "GBP", "day")),
    ("¥99/周", None, None, ParsedPrice(D("99"), "CNY", "week")),
    ("¥45/天", None, None, ParsedPrice(D("45"), "CNY", "day")),
    ("¥45/日", None, None, ParsedPrice(D("45"), "CNY", "day")),
    ("8000元包月", None, None, ParsedPrice(D("8000"), "CNY", "month")),
    ("包月 8000元", None, None, ParsedPrice(D("8000"), "CNY", "month")),
    ("每小时 ¥2.5", None, None, ParsedPrice(D("2.5"), "CNY", "hour")),
    ("按月计费：1299元", None, None, ParsedPrice(D("1299"), "CNY", "month")),
    ("Price per hour: $2.49", None, None, ParsedPrice(D("2.49"), "USD", "hour")),
    ("限时特惠 ¥200/月", None, None, ParsedPrice(D("200"), "CNY", "month")),   # 限时 is no period
    ("¥2.1/卡时", None, None, ParsedPrice(D("2.1"), "CNY", "hour", per_card=True)),
    ("¥2.1/时 售罄", None, None, ParsedPrice(D("2.1"), "CNY", "hour")),   # availability is separate
    ("2.72", "CNY", "hour", ParsedPrice(D("2.72"), "CNY", "hour")),
    ("每小时 2.72", None, None, ParsedPrice(D("2.72"), "CNY", "hour")),   # Chinese unit -> CNY
    ("2.72/时", "USD", None, ParsedPrice(D("2.72"), "USD", "hour")),      # a default wins
    ("2.72", "USD", None, ParsedPrice(D("2.72"), "USD", None)),
    ("  62  ", "CNY", "hour", ParsedPrice(D("62"), "CNY", "hour")),
    ("¥300/h", "JPY", None, ParsedPrice(D("300"), "JPY", "hour")),   # JPY source passes a default
    ("¥300/h", "USD", None, ParsedPrice(D("300"), "CNY", "hour")),   # USD is no reading of ¥
    ("¥3元/时", "JPY", None, ParsedPrice(D("3"), "CNY", "hour")),    # 元 says CNY
    ("300円/h", None, None, ParsedPrice(D("300"), "JPY", "hour")),
    ("¥8000/卡", None, "month", ParsedPrice(D("8000"), "CNY", "month", per_card=True)),  # no period
    ("¥2/台 包月", None, None, ParsedPrice(D("2"), "CNY", "month", per_machine=True)),
    ("$3.1/h", "HKD", None, ParsedPrice(D("3.1"), "HKD", "hour")),   # a bare $ of a HKD source
    ("$3.1/h", "CNY", None, ParsedPrice(D("3.1"), "USD", "hour")),
    ("5 zł/h", None, None, ParsedPrice(D("5"), "PLN", "hour")),
]


@pytest.mark.parametrize(("text", "currency", "period", "expected"), PRICES)
def test_parse_price(text, currency, period, expected):
    got = parse_price(text, default_currency=currency, default_period=period)
    assert got == expected   # Decimal equality: exact value (trailing zeros aside)
    assert type(got.amount) is D


NOT_PRICES = [
    ("面议", "negotiable"),
    ("价格面议", "negotiable"),
    ("联系客服", "contact sales"),
    ("联系客服 4001234567", "contact sales"),   # a phone number is no price
    ("--", "no price given"),
    ("—", "no price given"),
    ("售罄", "sold out"),
    ("暂无", "no price given"),
    ("N/A", "no price given"),
    ("", "no price given"),
    ("   ", "no price given"),
    ("免费", "free"),
    ("一万二/月", "Chinese numerals"),
    ("0", "zero"),
    ("0.00", "zero"),
    ("¥0.00/时", "zero"),
    ("-2", "negative"),
    ("¥-2.5/时", "negative"),
    ("-¥2.5/时", "negative"),
    ("¥2 ¥3", "two prices"),
    ("¥2/时 $1/hr", "two prices"),
    ("A100 ¥2/时", "two prices"),
    ("1 2 3", "3 numbers"),
    ("400-123-4567", "3 numbers"),
    ("30-20元/时", "upper end"),
    ("原价¥2 现价¥3", "original price below"),
    ("原价¥3.2", "only an original"),
    ("¥2/fortnight", "unrecognized billing period"),
    ("$2 / 2 hours", "unrecognized billing period"),  # a count other than one is refused
    ("300円/時間", "unrecognized billing period"),   # Japanese 時間, not a silent default
    ("每小时 ¥200/月", "conflicting periods"),
    ("¥0.01/分钟", "per minute"),
    ("$0.0001/sec", "per second"),
    ("€5 RMB", "mixed currencies"),
    ("€5 EUR $", "conflicts"),
    ("¥5$", "both ¥ and $"),
    ("2.72", "no currency"),
    ("10 kr/h", "unsupported currency"),
    ("1,23,4 元", "malformed"),
    ("1.2.3元", "malformed"),
]


@pytest.mark.parametrize(("text", "reason"), NOT_PRICES)
def test_not_a_price_raises_with_reason(text, reason):
    with pytest.raises(PriceParseError) as err:
        parse_price(text)
    assert reason in str(err.value)


def test_reason_names_the_text():
    with pytest.raises(PriceParseError, match=r"not a price: 面议 \(negotiable\)"):
        parse_price("面议")


@pytest.mark.parametrize(("kwargs", "reason"), [
    ({"default_currency": "XYZ"}, "default currency"), ({"default_period": "fortnight"}, "period")])
def test_bad_defaults_are_rejected(kwargs, reason):
    with pytest.raises(PriceParseError, match=reason):
        parse_price("2.72", **kwargs)


PERIODS = [
    ("时", "hour"), ("小时", "hour"), ("/时", "hour"), ("/小时", "hour"), ("每小时", "hour"),
    ("/h", "hour"), ("h", "hour"), ("hr", "hour"), ("/hr", "hour"), ("per hour", "hour"),
    ("Hourly", "hour"), ("卡时", "hour"), ("/GPU/hr", "hour"),
    ("天", "day"), ("日", "day"), ("/day", "day"), ("day", "day"), ("daily", "day"),
    ("周", "week"), ("/week", "week"), ("wk", "week"),
    ("月", "month"), ("包月", "month"), ("/卡/月", "month"), ("mo", "month"), ("/mo", "month"),
    ("month", "month"), ("per month", "month"), ("月付", "month"), ("个月", "month"),
    ("年", "year"), ("包年", "year"), ("yr", "year"), ("/year", "year"), ("annually", "year"),
    (" ／小时 ", "hour"),
]


@pytest.mark.parametrize(("text", "period"), PERIODS)
def test_parse_period(text, period):
    assert parse_period(text) == period


@pytest.mark.parametrize("text", ["", "foo", "分钟", "per minute", "秒", "2", "hours of fun"])
def test_parse_period_rejects(text):
    with pytest.raises(PriceParseError):
        parse_period(text)


@pytest.mark.parametrize(("amount", "period", "hourly"), [
    (D("2.5"), "hour", D("2.5")), (D("48"), "day", D("2")), (D("168"), "week", D("1")),
    (D("7300"), "month", D("10")), (D("2190"), "quarter", D("1")), (D("8760"), "year", D("1")),
    (D("1"), "month", D(1) / 730)])
def test_per_hour(amount, period, hourly):
    assert abs(per_hour(amount, period) - hourly) < D("1e-25")


def test_per_hour_unknown_period():
    with pytest.raises(PriceParseError):
        per_hour(D(1), "fortnight")


def test_month_is_730_hours_and_a_quarter_three_months():
    assert HOURS_PER_PERIOD == {"hour": 1, "day": 24, "week": 168, "month": 730, "quarter": 2190,
                                "year": 8760}


# --- properties -------------------------------------------------------------------------------

# Decimal amounts in [0.01, 10^6) with 0, 1 or 2 decimals, written as the vendor would.
AMOUNTS = st.sampled_from([0, 1, 2]).flatmap(
    lambda places: st.integers(min_value=1, max_value=10 ** (6 + places) - 1).map(
        lambda n: D(n).scaleb(-places)))
# (format template, currency, period); {a} = the amount, {g} = with thousands separators.
SPELLINGS = [
    ("¥{a}/小时", "CNY", "hour"), ("￥{a}/时", "CNY", "hour"), ("{a}元/天", "CNY", "day"),
    ("{g}元/月", "CNY", "month"), ("¥{a}/卡/月", "CNY", "month"), ("{a} 元/周", "CNY", "week"),
    ("RMB {a} / hour", "CNY", "hour"), ("{g} CNY per month", "CNY", "month"),
    ("{a}元包年", "CNY", "year"), ("人民币{a}元/年", "CNY", "year"),
    ("${a}/hr", "USD", "hour"), ("US${g}/mo", "USD", "month"), ("{a} USD per hour", "USD", "hour"),
    ("${g} monthly", "USD", "month"), ("€{a}/h", "EUR", "hour"), ("{a} EUR/day", "EUR", "day"),
    ("HK${a}/小时", "HKD", "hour"), ("£{a} per week", "GBP", "week"),
    ("{a}美元/月", "USD", "month"),
]


@settings(max_examples=300, deadline=None)
@given(amount=AMOUNTS, spelling=st.sampled_from(SPELLINGS))
def test_round_trip(amount, spelling):
    template, currency, period = spelling
    text = template.format(a=amount, g=f"{amount:,}")
    got = parse_price(text)
    assert (got.amount, got.currency, got.period) == (amount, currency, period), text
    assert got.list_amount is None and not got.is_range
    assert got.tax_included is None and got.min_term_hours is None


@settings(max_examples=200, deadline=None)
@given(amount=AMOUNTS, unit=st.sampled_from([("万", 10_000), ("千", 1_000)]),
       period=st.sampled_from([("/月", "month"), ("/年", "year")]))
def test_round_trip_chinese_multipliers(amount, unit, period):
    text = f"{amount / unit[1]}{unit[0]}元{period[0]}"
    got = parse_price(text)
    assert (got.amount, got.currency, got.period) == (amount, "CNY", period[1]), text




@settings(max_examples=500, deadline=None)
@given(text=st.text(), currency=st.sampled_from([None, "CNY", "USD", "JPY"]),
       period=st.sampled_from([None, "hour", "month"]))
def test_only_price_parse_errors_on_arbitrary_text(text, currency, period):
    try:
        got = parse_price(text, default_currency=currency, default_period=period)
    except PriceParseError as err:
        assert str(err)   # always a reason
    else:
        assert got.currency and got.period in (None, *HOURS_PER_PERIOD)
        # a price, or a range whose listed end nobody declared: never one end silently
        assert got.amount > 0 if got.amount is not None else got.price_high > got.price_low > 0


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="0123456789.,-~ ¥$元万千/时月年天hrmo起原价现", max_size=25))
def test_only_price_parse_errors_on_price_like_text(text):
    try:
        got = parse_price(text, default_currency="CNY")
    except PriceParseError:
        return
    assert (got.amount is None) == got.is_range   # no declared end: no amount
    assert not got.is_range or got.price_high > got.price_low > 0
    assert got.amount is None or got.amount > 0
    assert got.list_amount is None or got.list_amount >= got.amount


@settings(max_examples=300, deadline=None)
@given(amount=AMOUNTS, period=st.sampled_from(sorted(HOURS_PER_PERIOD)))
def test_per_hour_times_hours_is_amount(amount, period):
    assert per_hour(amount, period) * HOURS_PER_PERIOD[period] == amount
