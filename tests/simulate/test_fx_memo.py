"""The simulation plan's ECB rates, remembered between processes (pipelines/simulate/fx_memo.py):
the same rates as the one home's lookup, none looked up again, and all of them looked up again
for another version of the bundled ECB data."""

from __future__ import annotations

import json
from datetime import date

import pytest

from pipelines.simulate import fx_memo
from spiders.parsing.currencies import fx_rate

WANTED = {("USD", "CNY", date(2026, 3, 2)), ("CNY", "CNY", date(2026, 3, 2)),
          ("XXX", "CNY", date(2026, 3, 2))}


@pytest.fixture
def memo(tmp_path, monkeypatch):
    path = tmp_path / "__pycache__" / "fx_rates.json"
    monkeypatch.setattr(fx_memo, "MEMO", path)
    return path


def test_remembered_rates_are_the_lookups_and_are_not_looked_up_again(memo, monkeypatch):
    rates = fx_memo.fx_rates(WANTED)
    assert rates == {("USD", "CNY", date(2026, 3, 2)):
                     float(fx_rate("USD", "CNY", date(2026, 3, 2)).rate),
                     ("CNY", "CNY", date(2026, 3, 2)): 1.0,
                     ("XXX", "CNY", date(2026, 3, 2)): None}     # no such currency: no rate

    def refuse(*args):
        raise AssertionError("looked up")
    monkeypatch.setattr(fx_memo, "_lookup", refuse)
    assert fx_memo.fx_rates(WANTED) == rates


def test_another_ecb_data_version_looks_every_rate_up_again(memo, monkeypatch):
    fx_memo.fx_rates(WANTED)
    stored = json.loads(memo.read_text())
    memo.write_text(json.dumps({**stored, "data": "0.0.1",
                                "rates": dict.fromkeys(stored["rates"], 99.0)}))
    assert fx_memo.fx_rates({("USD", "CNY", date(2026, 3, 2))}) != {
        ("USD", "CNY", date(2026, 3, 2)): 99.0}
