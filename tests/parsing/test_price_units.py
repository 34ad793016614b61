"""Units that say what a price is for (spiders/parsing/price_units.py, read by prices.py): per
card-hour ("元/卡时", "CNY/Card/Hour", "卡·时"), a card named in the unit ("RMB/V100·HOUR"), per
machine ("CNY/Machine/Day"); and a row naming several cards at one price (gpu_models). The
normalizer's use of them (the unit's card must be the row's, a machine price needs its card
count) is in tests/pipelines/test_normalize_units.py."""

from __future__ import annotations

from decimal import Decimal as D

import pytest

from spiders.parsing.gpu_models import card_alternatives
from spiders.parsing.prices import PriceParseError, is_per_card, parse_price

# text, default period -> (amount, currency, period, per_card, per_machine, unit_card)
UNITS = [
    # per card-hour, the unit naming the card: CIBR's fee plan
    ("1.00 RMB/V100·HOUR", None, (D("1.00"), "CNY", "hour", True, False, "v100")),
    ("1.00 RMB/V100-hour", None, (D("1.00"), "CNY", "hour", True, False, "v100")),
    ("2 元/A100·时", None, (D(2), "CNY", "hour", True, False, "a100")),
    ("0.5 元/4090·小时", None, (D("0.5"), "CNY", "hour", True, False, "4090")),
    ("3 元/RTX 4090/时", None, (D(3), "CNY", "hour", True, False, "rtx4090")),
    ("$1.2 per H100 hour", None, (D("1.2"), "USD", "hour", True, False, "h100")),
    # per card-hour, the card from the row
    ("9.00 元/卡时", None, (D("9.00"), "CNY", "hour", True, False, None)),
    ("2.40 CNY/Card/Hour", None, (D("2.40"), "CNY", "hour", True, False, None)),
    ("¥2.1/卡·时", None, (D("2.1"), "CNY", "hour", True, False, None)),
    ("¥ 5.00 卡·时", "hour", (D("5.00"), "CNY", "hour", True, False, None)),   # SRILS: no "/"
    ("1.50 RMB (per Card per Hour)", "hour", (D("1.50"), "CNY", "hour", True, False, None)),
    # per machine
    ("720.00 CNY/Machine/Day", None, (D("720.00"), "CNY", "day", False, True, None)),
    ("1,000 元/台/月", None, (D(1000), "CNY", "month", False, True, None)),
    ("$20 per node per day", None, (D(20), "USD", "day", False, True, None)),
    ("¥5000/server/month", None, (D(5000), "CNY", "month", False, True, None)),
    # neither
    ("¥64/时", None, (D(64), "CNY", "hour", False, False, None)),
]


@pytest.mark.parametrize(("text", "period", "expected"), UNITS)
def test_units(text, period, expected):
    got = parse_price(text, default_period=period)
    assert (got.amount, got.currency, got.period, got.per_card, got.per_machine,
            got.unit_card) == expected


@pytest.mark.parametrize(("text", "reason"), [
    ("1.00 RMB/V100·HOUR/Machine", "both a per-card and a per-machine"),
    ("720 CNY/Machine/Day/Card", "both a per-card and a per-machine"),
    ("1 RMB/V100·HOUR, 2 RMB/A100·HOUR", "units naming several cards"),
    ("1.00 RMB/V100·fortnight", "unrecognized billing period"),
    ("1.00 RMB/V100", "unrecognized billing period"),             # a card, but no period
    ("720.00 CNY/Machine/Fortnight", "unrecognized billing period"),
])
def test_units_unhappy(text, reason):
    with pytest.raises(PriceParseError, match=reason):
        parse_price(text)


@pytest.mark.parametrize(("header", "expected"), [
    ("GPU (元/卡时)", True), ("卡·时", True), ("CNY/Card/Hour", True),
    ("CNY/Machine/Day", False), ("单价（元）", False),
])
def test_headers_and_unit_cells(header, expected):
    assert is_per_card(header) is expected


# a row's card text -> the cards it names at one price (one offer each), or [] (not such a list)
ALTERNATIVES = [
    ("A100、A800", ["A100", "A800"]),
    ("A100 / A800", ["A100", "A800"]),
    ("A100 and A800", ["A100", "A800"]),
    ("A100或A800", ["A100", "A800"]),
    ("V100, A100, H800", ["V100", "A100", "H800"]),
    ("V100", []),                                           # one card
    ("A100 40G/80G", []),                                   # one card, two sizes
    ("H100 SXM/PCIe", []),                                  # one card, two forms
    ("A100/A100 80G", []),                                  # one family twice
    ("GPUs other than 2080Ti, V100, A100 and A800", []),    # a class defined by exclusion
    ("除A100、A800以外的GPU", []),
    ("A800 / 8卡整机", []),                                  # a part that is no card
    ("GPU80G", []),
]


@pytest.mark.parametrize(("text", "cards"), ALTERNATIVES)
def test_card_alternatives(text, cards):
    assert card_alternatives(text) == cards
