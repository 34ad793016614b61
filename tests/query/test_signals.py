"""pipelines.query.signals: the one list of signal marts names built marts with the columns it
says, and each mart is narrowed by card and region as the CLI and the API narrow it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.query.errors import UnknownValueError
from pipelines.query.filters import Filter, offer_filter
from pipelines.query.rows import records
from pipelines.query.signals import (
    SIGNAL_MARTS,
    SIGNALS,
    SignalScope,
    mart_columns,
    signal_named,
    signal_query,
    signal_scope,
)

MARTS = Path(__file__).resolve().parents[2] / "dbt_like_sql" / "marts"


def test_each_signal_is_a_model_of_its_own_name():
    assert list(SIGNALS) == [s.name for s in SIGNAL_MARTS]
    assert len(SIGNALS) == len(SIGNAL_MARTS) == 6
    for signal in SIGNAL_MARTS:
        assert (MARTS / f"{signal.name}.sql").is_file(), signal.name
        assert signal.table == f"marts.{signal.name}"


@pytest.mark.parametrize("signal", SIGNAL_MARTS, ids=lambda s: s.name)
def test_the_columns_it_names_are_the_mart_s(con, signal):
    present = mart_columns(con, signal)
    assert signal.day in present
    assert [c for c in signal.columns if c not in present] == []
    assert len(set(signal.columns)) == len(signal.columns)


@pytest.mark.parametrize("signal", SIGNAL_MARTS, ids=lambda s: s.name)
@pytest.mark.parametrize("scope", [
    SignalScope(), SignalScope(models=["A100-80GB"]), SignalScope(models=[]),
    SignalScope(codes=["北京"], groups=["Beijing"]), SignalScope(codes=[], groups=[]),
], ids=["market", "card", "no card", "region", "no region"])
def test_its_latest_day_in_scope(con, signal, scope):
    present = mart_columns(con, signal)
    sql, params = signal_query(signal, present, scope, select=[signal.day, *signal.columns],
                               order=signal.order)
    rows = records(con, sql, params)
    every = records(con, *signal_query(signal, present, scope, every_day=True))
    latest = {max(r[signal.day] for r in every)} if every else set()
    assert {r[signal.day] for r in rows} == latest
    if scope.models is not None and "gpu_model" in present:
        assert {r["gpu_model"] for r in every} <= set(scope.models)
    if scope.codes is not None:
        column, values = ("region_code", scope.codes) if "region_code" in present \
            else ("region_group", scope.groups)
        assert {r[column] for r in every} <= set(values)


def test_the_region_reaches_a_mart_without_codes_by_its_group(con):
    found = offer_filter(con, region="乌兰察布")
    scope = signal_scope(con, found, by_card=False, by_region=True)
    assert scope.models is None and "Inner Mongolia" in scope.groups and "乌兰察布" in scope.codes
    regional = SIGNALS["regional_discount"]
    rows = records(con, *signal_query(regional, mart_columns(con, regional), scope))
    assert rows and {r["region_group"] for r in rows} == {"Inner Mongolia"}


def test_a_card_alone_leaves_the_regions_open(con):
    scope = signal_scope(con, offer_filter(con, card="A100"), by_card=True, by_region=False)
    assert scope.models == ["A100-40GB", "A100-80GB"] and scope.codes is scope.groups is None
    assert signal_scope(None, Filter(), by_card=False, by_region=False) == SignalScope()


def test_an_unknown_signal_lists_the_known_ones():
    with pytest.raises(UnknownValueError) as caught:
        signal_named("cheapest_offers")
    assert caught.value.field == "signal"
    assert all(name in str(caught.value) for name in SIGNALS)
    assert signal_named("month_end_dip").day == "month"
