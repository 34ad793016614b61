"""Where a price comes from: each crawl records its basis (live, or its replayed snapshot's
summary), the latest crawl of a source that states one decides the source's, and each offer in
marts.latest_prices carries its own latest observation's (its snapshot entry's, or live)."""

from __future__ import annotations

import json
from datetime import date

import pytest

from pipelines.defs.ingest import record_crawl
from pipelines.resources import CrawlResult
from pipelines.warehouse.db import transaction
from spiders.price_basis import (
    CRAWL_BASES,
    PRICE_FROM_WORDS,
    REAL_PRICE_BASES,
    crawl_price_basis,
)
from tests.helpers.observations import DAY, build_only, insert, obs, records

VERDICT = {"started_at": "2026-11-30T09:00:00Z", "finished_at": "2026-11-30T09:01:00Z"}


def _crawl(con, crawl_id: str, basis: str | None, finished: str, passed: bool = True,
           as_of: str | None = None, source: str = "idc_test", mode: str = "replay") -> None:
    con.execute("insert into raw.crawls (crawl_id, source, mode, passed, status, offers, "
                "finished_at, price_basis, prices_as_of) values (?, ?, ?, ?, ?, 1, ?, ?, ?)",
                [crawl_id, source, mode, passed, "passed" if passed else "failed", finished,
                 basis, as_of])


def _basis(con) -> dict[str, dict]:
    build_only(con, "intermediate.int_source_price_basis")
    return {r.pop("source"): r for r in records(
        con, "select * from intermediate.int_source_price_basis")}


@pytest.mark.parametrize("basis, as_of, label, real", [
    ("live", None, "live", True),
    ("captured", "2026-10-04", "replayed capture of 2026-10-04", True),
    ("published", "2026-05-13", "published prices as of 2026-05-13, replayed", True),
    ("published", None, "published prices, replayed", True),
    # a real public price no one could date: never dated, never counted as a dated real price
    ("undated", None, "published prices, date unknown, replayed", False),
    ("mixed", "2025-11-11", "modeled snapshot: part published as of 2025-11-11, part illustrative",
     False),
    ("illustrative", None, "modeled snapshot: illustrative prices", False),
    ("simulated", None, "simulated", False),
])
def test_each_basis_in_words_and_whether_it_is_a_real_price(con, basis, as_of, label, real):
    _crawl(con, "c1", basis, "2026-11-30 09:01:00+00", as_of=as_of)
    row = _basis(con)["idc_test"]
    assert (row["price_basis"], row["price_basis_label"], row["is_real_price"]) == \
        (basis, label, real)
    assert real == (basis in REAL_PRICE_BASES)     # the SQL and the Python agree


def test_every_crawl_basis_has_its_words(con):
    assert set(CRAWL_BASES) == {"live", "captured", "published", "undated", "illustrative",
                                "mixed", "simulated"}
    assert set(PRICE_FROM_WORDS) == set(CRAWL_BASES)
    for i, basis in enumerate(CRAWL_BASES):
        _crawl(con, f"c{i}", basis, "2026-11-30 09:01:00+00", source=f"s{i}")
    labels = {r["price_basis"]: r["price_basis_label"] for r in _basis(con).values()}
    assert None not in labels.values() and len(set(labels.values())) == len(CRAWL_BASES)


def test_the_latest_passing_crawl_that_states_a_basis_decides(con):
    _crawl(con, "old", "illustrative", "2026-11-29 09:01:00+00")
    _crawl(con, "live", "live", "2026-11-30 09:01:00+00", mode="live")
    _crawl(con, "failed", "illustrative", "2026-11-30 10:01:00+00", passed=False)
    _crawl(con, "from-raw", None, "2026-11-30 11:01:00+00", mode="raw")   # an earlier crawl's bytes
    _crawl(con, "other", "published", "2026-11-28 09:01:00+00", source="idc_b",
           as_of="2026-11-01")
    basis = _basis(con)
    assert {s: r["price_basis"] for s, r in basis.items()} == {"idc_test": "live",
                                                              "idc_b": "published"}
    assert str(basis["idc_b"]["prices_as_of"]) == "2026-11-01"


def test_latest_prices_carries_its_sources_basis_and_says_when_none_is_stated(con):
    _crawl(con, "c1", "illustrative", "2026-11-30 09:01:00+00")
    insert(con, [obs(62), obs(12000, billing_period="month"), obs(9, source="idc_quiet")])
    build_only(con, "marts.latest_prices", "marts.cheapest_offers")
    rows = records(con, "select source, price_basis, prices_as_of, price_basis_label "
                        "from marts.latest_prices order by source, price_basis_label")
    assert {tuple(r.values()) for r in rows} == {
        ("idc_test", "illustrative", None, "modeled snapshot: illustrative prices"),
        ("idc_quiet", None, None, "not stated")}
    cheapest = records(con, "select distinct source, price_basis_label from marts.cheapest_offers")
    assert {(r["source"], r["price_basis_label"]) for r in cheapest} == {
        ("idc_test", "modeled snapshot: illustrative prices"), ("idc_quiet", "not stated")}


def test_each_offer_carries_its_own_observations_basis_not_its_sources(con):
    """A mixed source: one offer read from a published entry, one from an illustrative one, one
    from a row written before observations carried a basis (its source's, as before)."""
    _crawl(con, "c1", "mixed", "2026-11-30 09:01:00+00", as_of="2026-09-20")
    later = DAY.replace(hour=11)
    insert(con, [
        obs(62, sku="real", price_basis="published", prices_as_of=date(2026, 9, 20)),
        obs(63, sku="modeled", price_basis="illustrative", prices_as_of=None),
        obs(64, sku="legacy"),
        # an offer whose day ends on an undated answer: its earlier published one does not count
        obs(65, sku="later", price_basis="published", prices_as_of=date(2026, 9, 20)),
        obs(66, sku="later", observed_at=later, price_basis="undated", prices_as_of=None),
    ])
    build_only(con, "marts.latest_prices")
    got = {r["sku"]: (r["price_basis"], r["prices_as_of"], r["price_basis_label"])
           for r in records(con, "select sku, price_basis, prices_as_of::varchar as prices_as_of,"
                                 " price_basis_label from marts.latest_prices")}
    assert got == {
        "real": ("published", "2026-09-20", "published prices as of 2026-09-20, replayed"),
        "modeled": ("illustrative", None, "modeled snapshot: illustrative prices"),
        "legacy": ("mixed", "2026-09-20",
                   "modeled snapshot: part published as of 2026-09-20, part illustrative"),
        "later": ("undated", None, "published prices, date unknown, replayed"),
    }


def test_a_crawl_records_its_basis_from_its_mode_and_manifest(con, tmp_path):
    snapshots = tmp_path / "snapshots"
    (snapshots / "idc_x").mkdir(parents=True)
    (snapshots / "idc_x" / "manifest.json").write_text(json.dumps(
        {"price_basis": "published", "prices_as_of": "2026-05-13"}), encoding="utf-8")
    items = tmp_path / "items.jsonl"
    items.write_text("", encoding="utf-8")
    for crawl_id, mode in (("r1", "replay"), ("l1", "live"), ("a1", "raw")):
        with transaction(con):
            record_crawl(con, CrawlResult("idc_x", crawl_id, False, 0, ["too few"], items,
                                          VERDICT), "run-1", mode, snapshots)
    got = con.execute("select crawl_id, price_basis, prices_as_of::varchar from raw.crawls "
                      "order by crawl_id").fetchall()
    assert got == [("a1", None, None), ("l1", "live", None), ("r1", "published", "2026-05-13")]
    assert crawl_price_basis("replay", snapshots, "no_manifest") == (None, None)
