"""pipelines.api: typed DataFrames from the published database, filtered exactly as the CLI
filters (the same offers, in the same order), with clear errors."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from pipelines.api import NoDataError, UnknownValueError, claims, history, prices, signals
from tests.helpers.published import as_json

FILTERS = [
    {},
    {"card": "A100"},
    {"card": "a100-80g", "region": "北京"},
    {"card": "A100 1/4"},
    {"region": "Inner Mongolia", "period": "月"},
    {"kind": "竞价"},
    {"vendor": "azure", "max_price": 10},
    {"card": "A100-80GB", "kind": "on_demand", "period": "hour", "max_price": 60},
]


def _cli_args(filters: dict) -> list[str]:
    return [a for k, v in filters.items() for a in (f"--{k.replace('_', '-')}", str(v))]


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: ",".join(f) or "none")
def test_prices_are_the_cli_s_offers_in_the_cli_s_order(data_dir, filters):
    expected = [row["offer_id"] for row in as_json(data_dir, *_cli_args(filters))]
    found = prices(**filters, data_dir=data_dir)
    assert found["offer_id"].tolist() == expected
    assert len(expected) > 0


def test_prices_columns_are_typed(data_dir):
    frame = prices(data_dir=data_dir)
    dtypes = frame.dtypes.astype(str).to_dict()
    assert dtypes["last_seen_at"] == dtypes["first_seen_at"] == "datetime64[ns, UTC]"
    assert dtypes["price_per_gpu_hour_cny"] == dtypes["price_amount"] == "float64"
    assert dtypes["gpu_fraction"] == "float64"
    assert dtypes["gpu_count"] == "Int64"
    assert dtypes["available"] == dtypes["is_tier1_city"] == "boolean"
    assert dtypes["fx_rate_date"] == "datetime64[ns]"
    assert frame["available"].isna().sum() == 1        # Azure's H100: the listing does not say
    assert frame.loc[frame["gpu_model"] == "H100-80GB", "available"].isna().all()


def test_limit_and_sort(data_dir):
    by_vendor = prices(sort="vendor", data_dir=data_dir)
    assert prices(sort="vendor", limit=3, data_dir=data_dir)["offer_id"].tolist() \
        == by_vendor["offer_id"].tolist()[:3]
    assert by_vendor["vendor"].tolist() == sorted(by_vendor["vendor"].tolist())


def test_a_filter_matching_nothing_returns_an_empty_frame_with_the_columns(data_dir):
    frame = prices(card="H800", max_price=0.01, data_dir=data_dir)
    assert frame.empty and "price_per_gpu_hour_cny" in frame.columns


@pytest.mark.parametrize(("filters", "named"), [
    ({"card": "Voodoo5"}, "A100-80GB"),              # the known cards are listed
    ({"region": "Atlantis"}, "region"),
    ({"vendor": "nobody"}, "Known:"),
    ({"kind": "gratis"}, "on_demand"),
    ({"period": "fortnight"}, "month"),
    ({"sort": "random"}, "price"),
])
def test_unknown_values_raise_with_the_known_ones(data_dir, filters, named):
    with pytest.raises(UnknownValueError, match=named):
        prices(**filters, data_dir=data_dir)


def test_no_database_yet(tmp_path):
    with pytest.raises(NoDataError, match="make run"):
        prices(data_dir=tmp_path)
    with pytest.raises(LookupError):
        claims(data_dir=tmp_path)


def test_history_is_one_typed_row_per_offer_and_local_day(data_dir):
    frame = history(card="A100-80GB", region="北京", period="hour", data_dir=data_dir)
    assert set(frame["gpu_model"]) == {"A100-80GB"}
    assert not frame.duplicated(["offer_id", "local_date"]).any()
    # the offers of the same filters in `prices`
    assert set(frame["offer_id"]) == set(prices(card="A100-80GB", region="北京", period="hour",
                                                data_dir=data_dir)["offer_id"])
    dtypes = frame.dtypes.astype(str).to_dict()
    assert dtypes["local_date"] == "datetime64[ns]"
    assert dtypes["first_observed_at"] == "datetime64[ns, UTC]"
    assert dtypes["observations"] == dtypes["gpu_count"] == "Int64"
    assert dtypes["close_available"] == "boolean"
    # Sinnet's whole card, seen twice that day: 62 then 55 CNY an hour (Beijing's local day)
    whole = frame[(frame["gpu_count"] == 1) & (frame["gpu_fraction"] == 1)
                  & (frame["source"] == "idc_sinnet_bj")].iloc[0]
    assert (whole["open_price_amount"], whole["close_price_amount"]) == (62, 55)
    assert (whole["low_price_cny_per_gpu_hour"], whole["high_price_cny_per_gpu_hour"]) == (55, 62)
    assert whole["observations"] == 2
    assert whole["local_date"] == pd.Timestamp("2026-11-30")


def test_history_days_bound_it(data_dir):
    assert history(since="2026-12-01", data_dir=data_dir).empty
    assert len(history(until="2026-11-30", data_dir=data_dir)) == len(history(data_dir=data_dir))


def test_signals_are_the_cli_s_marts_narrowed_the_same_way(data_dir):
    every = signals("spot_discount", data_dir=data_dir)
    assert not every.empty
    assert every["spot_discount_pct"].dtype == "float64"
    assert every["day"].dtype == "datetime64[ns]"
    azure = signals("spot_discount", region="US", data_dir=data_dir)
    assert set(azure["region_code"]) == {"eastus"}
    assert signals("spot_discount", card="H800", data_dir=data_dir).empty
    with pytest.raises(UnknownValueError, match="slice_to_whole_ratio"):
        signals("cheap_days", data_dir=data_dir)


def test_claims_are_the_scorecard(data_dir):
    frame = claims(data_dir=data_dir)
    assert {"claim", "verdict", "median_value"} <= set(frame.columns)
    assert frame["median_value"].dtype == "float64"


def test_the_api_loads_neither_dagster_nor_scrapy(data_dir):
    code = ("import sys; from pipelines.api import prices; "
            f"prices(data_dir={str(data_dir)!r}); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dagster', 'scrapy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.strip() == "[]"
