"""fx_rate remembers its lookups between processes (spiders/parsing/currencies.py FX_MEMO): the
same rates and ECB days as the bundled data gives, refusals remembered as refusals, nothing looked
up again from the memo, and everything looked up again for another version of the ECB data or a
damaged entry."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal

import pytest

from spiders.parsing import currencies

DAY = date(2026, 3, 1)      # a Sunday: the rate comes from the Friday before


@pytest.fixture
def memo(tmp_path, monkeypatch):
    path = tmp_path / "__pycache__" / "fx_rates.json"
    monkeypatch.setattr(currencies, "FX_MEMO", path)
    currencies._memo.cache_clear()
    monkeypatch.setattr(currencies, "_unsaved", set())
    yield path
    currencies._memo.cache_clear()


def _next_process():
    currencies._save_memo()
    currencies._memo.cache_clear()


def _refuse(*args):
    raise AssertionError("looked up in the ECB data")


def test_a_remembered_rate_is_the_lookup_and_is_not_looked_up_again(memo, monkeypatch):
    looked_up = currencies._ecb_rate("USD", "CNY", DAY)
    assert currencies.fx_rate("USD", "CNY", DAY) == looked_up
    assert looked_up.rate_date < DAY                                  # the ECB's last weekday
    _next_process()
    monkeypatch.setattr(currencies, "_ecb_rate", _refuse)
    assert currencies.fx_rate("USD", "CNY", DAY) == looked_up
    assert isinstance(currencies.fx_rate("USD", "CNY", DAY).rate, Decimal)


def test_a_refusal_is_remembered_as_a_refusal(memo, monkeypatch):
    with pytest.raises(currencies.FxRateError, match="data starts"):
        currencies.fx_rate("USD", "CNY", date(1950, 1, 2))
    _next_process()
    monkeypatch.setattr(currencies, "_ecb_rate", _refuse)
    with pytest.raises(currencies.FxRateError, match="data starts"):
        currencies.fx_rate("USD", "CNY", date(1950, 1, 2))


@pytest.mark.parametrize("damage", [
    lambda stored: {**stored, "data": "0.0.1"},                              # another ECB data
    lambda stored: {**stored, "rates": dict.fromkeys(stored["rates"], 99)},  # not a [rate, day]
    lambda stored: [],                                                       # not a memo at all
])
def test_another_data_version_or_a_damaged_memo_is_looked_up_again(memo, damage):
    expected = currencies.fx_rate("EUR", "CNY", DAY)
    _next_process()
    stored = json.loads(memo.read_text())
    memo.write_text(json.dumps(damage(stored)))
    currencies._memo.cache_clear()
    assert currencies.fx_rate("EUR", "CNY", DAY) == expected


def test_processes_that_save_add_to_each_other(memo):
    currencies.fx_rate("USD", "CNY", DAY)
    _next_process()
    currencies.fx_rate("EUR", "USD", DAY)
    _next_process()
    assert set(json.loads(memo.read_text())["rates"]) == {
        f"USD CNY {DAY}", f"EUR USD {DAY}"}


def test_a_lookup_forgotten_before_exit_is_not_saved_and_breaks_nothing(memo):
    currencies.fx_rate("USD", "CNY", DAY)
    currencies._memo.cache_clear()            # the memo read again: the lookup is not in it
    currencies._save_memo()
    assert not memo.exists()
    assert not currencies._unsaved
