"""How old each price is, where a person or a script reads the latest prices: `gpuprices prices`
(table, csv, json) and the Python API's prices() show each price's as-of date and age, leave out
the prices older than the horizon unless --max-age / max_age widens it, say how many they left
out, and open with a line when most of what they show is older than the horizon."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from pipelines import api
from pipelines.cli.output import console
from tests.helpers.published import (
    ALIBABA,
    AZURE,
    SEEN,
    SINNET,
    ULANQAB,
    gpuprices,
    offer,
    publish,
)

OLD = SEEN - timedelta(days=200)            # far beyond the horizon (180 days)


def _seen_on(row: dict, when) -> dict:
    return {**row, "observed_at": when, "observed_hour": when, "crawl_id": f"crawl-{when:%F}"}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """One A100 80GB offer seen on SEEN (a day before the test clock's today), two A100 80GB and
    one A100 40GB offer last seen 200 days before it."""
    rows = [offer(*SINNET, "A100-80GB", "62"),
            _seen_on(offer(*ULANQAB, "A100-80GB", "46"), OLD),
            _seen_on(offer(*AZURE, "A100-80GB", "3.673", currency="USD"), OLD),
            _seen_on(offer(*ALIBABA, "A100-40GB", "30"), OLD)]
    return publish(tmp_path_factory.mktemp("ages") / "data", rows)


def _json(data_dir, *args: str):
    result = gpuprices(data_dir, "prices", *args, "--format", "json")
    return result, json.loads(result.stdout or "[]")


def test_an_old_price_is_left_out_by_default_and_counted(data_dir, monkeypatch):
    monkeypatch.setattr(console, "width", 200)
    result = gpuprices(data_dir, "prices", "--card", "A100-80GB", "--format", "table")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "光环新网 Sinnet" in text and "乌兰察布" not in text and "eastus" not in text
    assert "2026-11-30 (1 d)" in text                                     # its as-of and age
    assert "2 offers older than 180 days left out (--max-age all shows them)" in text
    assert "older than 180 days:" not in text            # what it shows is current: no warning


def test_max_age_all_brings_them_back_with_their_age_and_a_warning_first(data_dir):
    result, rows = _json(data_dir, "--card", "A100-80GB", "--max-age", "all")
    assert result.exit_code == 0, result.output
    assert [(r["vendor"], r["price_as_of"], r["price_age_days"]) for r in rows] == [
        ("Microsoft Azure", f"{OLD:%Y-%m-%d}", 201),
        ("乌兰察布某IDC", f"{OLD:%Y-%m-%d}", 201),
        ("光环新网 Sinnet", "2026-11-30", 1)]
    # the warning goes to stderr, ahead of the rows; stdout stays the JSON a script reads
    assert result.stderr.startswith("note: most of these prices are older than 180 days: the "
                                    "newest is 2026-11-30 (1 day)")
    table = gpuprices(data_dir, "prices", "--card", "A100-80GB", "--max-age", "all",
                      "--format", "table")
    assert table.stdout.startswith("most of these prices are older than 180 days")
    assert "7 mo" in table.stdout                                          # 201 days, in words


def test_a_max_age_in_days_draws_the_line_there(data_dir):
    assert len(_json(data_dir, "--card", "A100-80GB", "--max-age", "201")[1]) == 3
    assert len(_json(data_dir, "--card", "A100-80GB", "--max-age", "200")[1]) == 1


def test_nothing_current_says_how_old_the_newest_is(data_dir):
    result = gpuprices(data_dir, "prices", "--card", "A100-40GB", "--format", "table")
    assert result.exit_code == 3
    text = " ".join(result.output.split())
    assert text.startswith(f"all of these prices are older than 180 days: the newest is "
                           f"{OLD:%Y-%m-%d} (201 days)")
    assert "1 offer older than 180 days left out" in text and "--max-age all" in text


@pytest.mark.parametrize("value", ["-3", "old", "1.5"])
def test_a_max_age_that_is_not_days_is_a_usage_error(data_dir, value):
    result = gpuprices(data_dir, "prices", "--max-age", value)
    assert result.exit_code == 2 and "--max-age" in result.output


def test_the_api_has_the_same_columns_horizon_and_option(data_dir):
    frame = api.prices(card="A100-80GB", data_dir=data_dir)
    assert list(frame["vendor"]) == ["光环新网 Sinnet"]
    assert frame.attrs["aged_out"] == 2 and frame.attrs["old_prices"] is None
    assert str(frame["price_as_of"].dtype) == "datetime64[ns]"
    assert frame["price_age_days"].tolist() == [1]
    every = api.prices(card="A100-80GB", data_dir=data_dir, max_age="all")
    assert sorted(every["price_age_days"].tolist()) == [1, 201, 201]
    assert every.attrs["aged_out"] == 0
    assert every.attrs["old_prices"].startswith("most of these prices are older than 180 days")
    assert len(api.prices(card="A100-80GB", data_dir=data_dir, max_age=365)) == 3
    with pytest.raises(ValueError, match="max_age"):
        api.prices(data_dir=data_dir, max_age=-1)
