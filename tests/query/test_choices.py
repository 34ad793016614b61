"""pipelines.query.choices: kinds and periods are the defining tables' values (the parser's
periods, quarter included; normalization's offer kinds), each spelling reads as one value, and
an unknown one is refused in the words click's choices use."""

from __future__ import annotations

import click
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipelines.normalize import OFFER_KINDS
from pipelines.query.choices import (
    KIND_SPELLINGS,
    KINDS,
    PERIOD_SPELLINGS,
    PERIODS,
    Spellings,
    _spelled,
)
from pipelines.query.errors import UnknownValueError
from pipelines.query.prices import PRICE_ORDERS, SORTS
from spiders.parsing.prices import HOURS_PER_PERIOD, PriceParseError, parse_period


def test_values_are_the_defining_tables():
    assert PERIODS.values == list(HOURS_PER_PERIOD)
    assert "quarter" in PERIODS.values
    assert KINDS.values == list(OFFER_KINDS)
    assert SORTS.values == list(PRICE_ORDERS)
    assert set(PERIOD_SPELLINGS) == set(HOURS_PER_PERIOD)   # every period has other spellings
    assert set(KIND_SPELLINGS) == set(OFFER_KINDS)


@pytest.mark.parametrize(("spellings", "text", "value"), [
    (PERIODS, "month", "month"), (PERIODS, "月", "month"), (PERIODS, "包月", "month"),
    (PERIODS, "MONTHLY", "month"), (PERIODS, " hour ", "hour"),
    (PERIODS, "\uff4d\uff4f\uff4e\uff54\uff48", "month"),   # full-width "month"
    (PERIODS, "季", "quarter"), (PERIODS, "包季", "quarter"), (PERIODS, "Quarterly", "quarter"),
    (PERIODS, "quarter", "quarter"), (PERIODS, "包年", "year"), (PERIODS, "d", "day"),
    (KINDS, "竞价", "spot"), (KINDS, "On-Demand", "on_demand"), (KINDS, "预留实例", "reserved"),
    (SORTS, "价格", "price"), (SORTS, "VENDOR", "vendor"),
])
def test_each_spelling_reads_as_its_value(spellings, text, value):
    assert spellings.canonical(text) == value
    assert spellings.read(text, "x") == value


@pytest.mark.parametrize(("spellings", "text"), [
    (PERIODS, "fortnight"), (PERIODS, "minute"), (PERIODS, ""), (PERIODS, "mon"),
    (KINDS, "gratis"), (KINDS, "spot instance"), (SORTS, "random"),
])
def test_an_unknown_spelling_is_refused_with_the_known_values(spellings, text):
    assert spellings.canonical(text) is None
    with pytest.raises(UnknownValueError) as caught:
        spellings.read(text, "period")
    assert caught.value.field == "period"
    assert str(caught.value).startswith(f"period: {text!r} is not one of ")
    for value in spellings.values:
        assert repr(value) in str(caught.value)


def test_every_spelling_the_parser_reads_as_a_period_means_the_same():
    """The CLI's words and the parser's agree: a spelling the price parser reads as a period
    ("包月", "hourly", "季度") names that period, never another."""
    read = 0
    for value, others in PERIODS.table.items():
        for spelling in (value, *others):
            try:
                parsed = parse_period(spelling)
            except PriceParseError:   # "d", "w": the CLI's shorthands, no price says them
                continue
            assert parsed == value, (spelling, parsed, value)
            read += 1
    assert read >= len(PERIODS.values) * 3


@given(st.text(max_size=12))
def test_any_text_reads_as_one_value_or_as_none(text):
    value = PERIODS.canonical(text)
    if value is None:
        with pytest.raises(UnknownValueError):
            PERIODS.read(text, "period")
    else:
        assert value in PERIODS.values
        assert PERIODS.canonical(value) == value     # a value spells itself


@pytest.mark.parametrize("values", [["only"], ["a", "b", "c"]])
def test_the_message_is_click_s_with_the_other_spellings(values):
    plain = Spellings(lambda: dict.fromkeys(values, ()))
    click_words = click.Choice(values, case_sensitive=False).get_invalid_choice_message("x", None)
    assert plain.invalid_message("x") == click_words
    spelled = Spellings(lambda: {v: (f"{v}{v}",) for v in values})
    other = "; ".join(f"{v}: {v}{v}" for v in values)
    assert spelled.invalid_message("x") == f"{click_words} (other spellings: {other})"


def test_the_table_is_read_when_first_needed():
    calls = []
    spellings = Spellings(lambda: calls.append(1) or {"a": ("alpha",)})
    assert calls == []
    assert spellings.canonical("ALPHA") == "a" and spellings.values == ["a"]
    assert calls == [1]


def test_a_spelling_of_two_values_is_an_error():
    with pytest.raises(ValueError, match="spells both"):
        Spellings(lambda: {"hour": ("h",), "half": ("H",)}).canonical("h")


def test_spellings_of_a_value_the_table_lacks_are_an_error():
    with pytest.raises(ValueError, match="fortnight"):
        _spelled(HOURS_PER_PERIOD, {"fortnight": ("两周",)}, "billing period")
    assert _spelled(("a", "b"), {"b": ("β",)}, "x") == {"a": (), "b": ("β",)}
