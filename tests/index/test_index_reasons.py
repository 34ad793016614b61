"""Every empty answer of `gpuprices index` names its real reason (pipelines/index/absence.py):
curated tables that never enter the index, a single day that has not closed, filters that match
no series, a database without observations; never "first day tomorrow" where that is not why."""

from __future__ import annotations

import duckdb
import pytest

from pipelines.index.absence import NO_OBSERVATIONS, why_empty
from pipelines.warehouse.db import ensure_schema
from tests.helpers.index_history import Offer, flat, publish
from tests.helpers.observations import build, insert
from tests.helpers.published import gpuprices

CURATED_CRAWL = ("insert into raw.crawls (crawl_id, source, mode, passed, status, offers, "
                 "calendar_signal) values ('curated-1', 'src_curated', 'archive', true, "
                 "'passed', 5, false)")


def database(root, offers: list[Offer], curated: bool = False) -> duckdb.DuckDBPyConnection:
    root.mkdir(exist_ok=True)
    con = duckdb.connect(str(root / "prices.db"))
    ensure_schema(con)
    rows = [row for offer in offers for row in offer.rows()]
    if rows:
        insert(con, rows)
    if curated:
        con.execute(CURATED_CRAWL)
    build(con, [])
    publish(con)
    return con


def test_a_database_of_curated_tables_only_says_they_never_enter_the_index(tmp_path):
    curated = [Offer(v, v.lower(), flat(10, 5), overrides={"crawl_id": "curated-1",
                                                            "source": "src_curated"})
               for v in ("Alpha", "Bravo")]
    database(tmp_path / "data", curated, curated=True).close()
    result = gpuprices(tmp_path / "data", "index")
    assert result.exit_code == 3
    text = " ".join(result.output.split())
    assert "tomorrow" not in text
    assert "none of the 10 observation(s) can enter the index" in text
    assert "10 observation(s) from 1 source(s) come from curated tables" in text
    assert "carry no calendar and never enter the index" in text


def test_a_single_open_day_says_it_is_published_once_a_later_day_lands(tmp_path):
    database(tmp_path / "data", [Offer("Alpha", "a", [10]), Offer("Bravo", "b", [11])]).close()
    result = gpuprices(tmp_path / "data", "index")
    assert result.exit_code == 3
    text = " ".join(result.output.split())
    assert "one day per market (china 2026-10-01)" in text
    assert "a day is published once a later day's crawl has landed" in text


@pytest.mark.parametrize("offers, expected", [
    ([], NO_OBSERVATIONS),
    # a MIG slice only: in no series, and the answer says so
    ([Offer("Alpha", "a", flat(10, 3), overrides={"gpu_fraction": 0.5})],
     "3 observation(s) from 1 source(s) are MIG slices or vGPU shares"),
    # a euro price only
    ([Offer("Alpha", "a", flat(10, 3), overrides={"currency": "EUR"})],
     "3 observation(s) from 1 source(s) are listed in a currency other than CNY or USD"),
])
def test_why_empty_names_what_was_left_out(tmp_path, offers, expected):
    con = database(tmp_path / "data", offers)
    assert expected in why_empty(con)


def test_filters_matching_no_series_say_so_not_that_nothing_is_published(tmp_path):
    offers = [Offer(v, v.lower(), flat(10, 4)) for v in ("Alpha", "Bravo")]
    database(tmp_path / "data", offers).close()
    result = gpuprices(tmp_path / "data", "index", "--market", "world")
    assert result.exit_code == 3
    assert "no published series matches these filters (1 series are published" in \
        " ".join(result.output.split())
    since = gpuprices(tmp_path / "data", "index", "--since", "2026-12-01")
    assert since.exit_code == 3
    assert "their last published day is 2026-10-03" in " ".join(since.output.split())
