"""The published index leaves out every offer of a vendor whose terms forbid using its prices in
an index (spiders/terms.csv, index_use = forbidden: vast.ai), however it reached us: its own
source, an archive's source of it, or an aggregator's offer naming it; the index then reads as
if those offers were never listed."""

from __future__ import annotations

import pytest

from spiders.terms import index_excluded_sources
from tests.helpers.index_history import Offer, connect, flat, load, publish, series_rows
from tests.helpers.observations import records

SERIES = "A100-80GB|china|on_demand|hour"
MARKET = [Offer("Alpha", "a", flat(10, 4)), Offer("Bravo", "b", flat(14, 4))]
# vast.ai's offer as its own source, an archive's source and an aggregator write it; cheap, so
# it would move the listing median if it were read
VAST = [Offer("vast.ai", f"v{n}", flat(2, 4), overrides={"source": source})
        for n, source in enumerate(("vastai", "skypilot:vastai", "primeintellect"))]


def published(offers: list[Offer]) -> tuple[list[dict], list[dict]]:
    con = connect()
    load(con, offers)
    publish(con)
    inputs = records(con, "select distinct vendor, source from intermediate.int_index_offer_days "
                          "order by all")
    return inputs, series_rows(con, SERIES)


def test_vast_ai_is_a_vendor_whose_terms_forbid_index_use():
    assert "vastai" in index_excluded_sources()


def test_a_vendor_whose_terms_forbid_index_use_is_in_no_series():
    inputs, rows = published(MARKET + VAST)
    assert inputs == [{"vendor": "Alpha", "source": "src_alpha"},
                      {"vendor": "Bravo", "source": "src_bravo"}]
    _, without = published(MARKET)
    assert [(r["index_level"], r["listing_median"], r["vendors_matched"]) for r in rows] == \
        [(r["index_level"], r["listing_median"], r["vendors_matched"]) for r in without]


def test_the_table_decides(monkeypatch):
    """With no vendor excluded, the same offers are read: the filter, not the history, drops
    them."""
    monkeypatch.setattr("spiders.terms.index_excluded_sources", frozenset)
    inputs, rows = published(MARKET + VAST)
    assert {i["source"] for i in inputs} == {"src_alpha", "src_bravo", "vastai",
                                             "skypilot:vastai", "primeintellect"}
    assert rows[0]["listing_median"] == pytest.approx(2)
