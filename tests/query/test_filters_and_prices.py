"""pipelines.query.filters and .prices: the filters read text against the data or refuse it with
the known values (UnknownValueError, naming the field); the latest-prices query sorts as its
sort order says, the one order `gpuprices prices` and the API both use."""

from __future__ import annotations

from decimal import Decimal

import pytest

from pipelines.query.errors import UnknownValueError
from pipelines.query.filters import Filter, offer_filter
from pipelines.query.prices import (
    PRICE_ORDERS,
    latest_prices_query,
    price_history_query,
    price_order,
)
from pipelines.query.rows import records


@pytest.mark.parametrize(("filters", "field", "named"), [
    ({"card": "Voodoo5"}, "card", "A100-80GB"),
    ({"region": "Atlantis"}, "region", "`gpuprices prices --format csv` lists them"),
    ({"vendor": "nobody"}, "vendor", "Known: "),
    ({"kind": "gratis"}, "kind", "'on_demand'"),
    ({"period": "fortnight"}, "period", "'quarter'"),
    ({"card": "A100", "region": "Atlantis"}, "region", "unknown region 'Atlantis'"),
])
def test_unknown_text_is_refused_naming_its_field_and_the_known_values(con, filters, field,
                                                                      named):
    with pytest.raises(UnknownValueError) as caught:
        offer_filter(con, **filters)
    assert caught.value.field == field
    assert named in caught.value.message and str(caught.value) == caught.value.message


def test_the_filters_are_predicates_with_their_notes_in_order(con):
    found = offer_filter(con, card="A100-80GB 1/4", region="北京", kind="按需", period="小时",
                         vendor="sinnet", max_price=100)
    assert found.where[0] == "gpu_model in (?)" and found.where[1] == "gpu_fraction = ?"
    assert found.where[-3:] == ["offer_kind = ?", "billing_period = ?",
                                "price_per_gpu_hour_cny <= ?"]
    assert found.params[:2] == ["A100-80GB", Decimal("0.25")]
    assert found.params[-3:] == ["on_demand", "hour", 100.0]
    assert [note.split()[0] for note in found.notes] == ["card", "region", "vendor"]
    rows = records(con, f"select sku from marts.latest_prices where {found.sql}", found.params)
    assert rows == [{"sku": "A100-80GB 1x0.25 on_demand hour"}]


def test_no_filter_matches_everything():
    assert Filter().sql == "true"
    assert offer_filter(None).where == []     # nothing read: the database is not asked


@pytest.mark.parametrize("sort", list(PRICE_ORDERS))
def test_the_latest_prices_are_in_the_sort_order(con, sort):
    query = latest_prices_query(con, sort=sort, include_held=True)
    rows = records(con, query.sql, query.params)
    keys = [c.strip() for c in PRICE_ORDERS[sort].split(",")] + ["offer_id"]
    assert len(rows) == 14
    assert rows == sorted(rows, key=lambda r: tuple(r[k] for k in keys))
    limited = latest_prices_query(con, sort=sort, include_held=True, limit=3)
    assert records(con, limited.sql, limited.params) == rows[:3]


def test_held_prices_are_counted_as_they_are_left_out(con):
    query = latest_prices_query(con, card="A100")
    assert query.held == 0     # the hand-made market holds nothing back (tests/cli: held ones)
    everything = latest_prices_query(con, card="A100", include_held=True)
    assert len(query.found.where) == len(everything.found.where) + 1   # the held predicate


def test_an_unknown_sort_is_refused_before_the_database_is_read():
    with pytest.raises(UnknownValueError, match="sort: 'random' is not one of price, vendor") \
            as caught:
        latest_prices_query(None, sort="random")
    assert caught.value.field == "sort"
    assert price_order("vendor") == f"{PRICE_ORDERS['vendor']}, offer_id"


@pytest.mark.parametrize(("since", "until", "days"), [
    (None, None, 1), ("2026-11-30", None, 1), (None, "2026-11-29", 0), ("2026-12-01", None, 0),
])
def test_the_history_is_bounded_by_its_days(con, since, until, days):
    found = offer_filter(con, card="A100-80GB", vendor="sinnet", period="month")
    rows = records(con, *price_history_query(found, since, until))
    assert len(rows) == days
    assert all(r["offer_id"] == rows[0]["offer_id"] for r in rows)
