"""staging.stg_shown_observations, what a page may show: no modeled price (illustrative, mixed)
unless the run that crawled it opted in to its source; real, simulated and undescribed
observations always. Every model reads through it, so latest_prices does too."""

from __future__ import annotations

import pytest

from spiders.price_basis import CRAWL_BASES, NOT_SHOWN_BY_DEFAULT
from tests.helpers.observations import build_only, insert, obs, records


def _crawl(con, crawl_id: str, basis: str | None, opted_in: bool | None, source: str = "idc_test",
           finished: str = "2026-11-30 09:01:00+00") -> None:
    con.execute("insert into raw.crawls (crawl_id, source, mode, passed, status, offers, "
                "finished_at, price_basis, opted_in) values (?, ?, 'replay', true, 'passed', 1, "
                "?, ?, ?)", [crawl_id, source, finished, basis, opted_in])


def _shown(con) -> list[dict]:
    build_only(con, "staging.stg_shown_observations")
    return records(con, "select crawl_id, source from staging.stg_shown_observations")


@pytest.mark.parametrize("basis", CRAWL_BASES)
@pytest.mark.parametrize("opted_in", [True, False, None])
def test_a_modeled_price_is_shown_only_when_its_run_opted_in(con, basis, opted_in):
    _crawl(con, "c1", basis, opted_in)
    insert(con, [obs(9.0, crawl_id="c1")])
    shown = bool(_shown(con))
    assert shown == (bool(opted_in) or basis not in NOT_SHOWN_BY_DEFAULT)   # SQL agrees with Python


@pytest.mark.parametrize("own_basis", [None, "published", *NOT_SHOWN_BY_DEFAULT])
@pytest.mark.parametrize("crawl_basis", [None, "published", "simulated", "mixed"])
@pytest.mark.parametrize("opted_in", [True, False])
def test_an_observations_own_basis_comes_before_its_crawls(con, own_basis, crawl_basis,
                                                            opted_in):
    # own basis, else the crawl's, else the source's latest stated one (here illustrative)
    _crawl(con, "stated", "illustrative", False, finished="2026-11-30 08:01:00+00")
    _crawl(con, "c1", crawl_basis, opted_in)
    insert(con, [obs(9.0, crawl_id="c1", price_basis=own_basis)])
    basis = own_basis or crawl_basis or "illustrative"
    assert bool(_shown(con)) == (opted_in or basis not in NOT_SHOWN_BY_DEFAULT)


def test_only_the_crawls_that_can_hide_a_row_are_listed(con):
    # intermediate.int_hiding_crawls, the short list the view joins instead of every crawl
    for crawl_id, basis, opted_in in [("real", "published", None), ("sim", "simulated", False),
                                      ("named", "mixed", True), ("modeled", "mixed", False),
                                      ("re-read", None, False), ("row-stated", "published", False)]:
        _crawl(con, crawl_id, basis, opted_in)
    insert(con, [obs(9.0, crawl_id=c) for c in ("real", "sim", "named", "modeled", "re-read")]
           + [obs(8.0, crawl_id="row-stated", price_basis="undated")])
    build_only(con, "intermediate.int_hiding_crawls")
    assert sorted(r["crawl_id"] for r in records(
        con, "select crawl_id from intermediate.int_hiding_crawls")) \
        == ["modeled", "re-read", "row-stated"]


@pytest.mark.parametrize("basis", [None, *CRAWL_BASES])
def test_the_sql_hidden_list_is_the_python_one(con, basis):
    build_only(con, "intermediate.int_hiding_crawls")     # the runner stores the macros
    hidden = con.execute("select coalesce(hidden_by_default(?), false)", [basis]).fetchone()[0]
    assert hidden == (basis in NOT_SHOWN_BY_DEFAULT)


def test_an_observation_no_crawl_describes_is_shown(con):
    # whatever its source's other crawls say (every crawled, backfilled or simulated one has its
    # crawl: only a test's has none)
    _crawl(con, "c1", "illustrative", False)
    insert(con, [obs(9.0)])
    assert len(_shown(con)) == 1


def test_a_crawl_re_read_from_the_raw_archive_takes_its_sources_stated_basis(con):
    # the replayed crawl stated illustrative; the raw re-run states none
    _crawl(con, "replayed", "illustrative", False, finished="2026-11-30 09:01:00+00")
    _crawl(con, "re-read", None, False, finished="2026-11-30 10:01:00+00")
    _crawl(con, "published", "published", False, source="idc_real")
    insert(con, [obs(9.0, crawl_id="re-read"),
                 obs(7.0, crawl_id="published", source="idc_real")])
    assert [r["source"] for r in _shown(con)] == ["idc_real"]


def test_latest_prices_holds_no_modeled_price_its_run_did_not_opt_in_to(con):
    _crawl(con, "modeled", "mixed", False, source="idc_modeled")
    _crawl(con, "named", "illustrative", True, source="idc_named")
    _crawl(con, "real", "published", False, source="idc_real")
    insert(con, [obs(9.0, crawl_id="modeled", source="idc_modeled"),
                 obs(8.0, crawl_id="named", source="idc_named"),
                 obs(7.0, crawl_id="real", source="idc_real")])
    build_only(con, "marts.latest_prices", "marts.cheapest_offers")
    for table in ("marts.latest_prices", "marts.cheapest_offers"):
        assert sorted(r["source"] for r in records(con, f"select source from {table}")) \
            == ["idc_named", "idc_real"]
