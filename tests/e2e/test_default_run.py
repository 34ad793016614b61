"""The default run, as a new user makes it (`gpuprices run`, nothing opted in): no opt-in source
is crawled, each is named with its reason as not selected (not failed), the run exits 0, and no
page, feed or table a user reads holds an illustrative, mixed or template price. The run is the
session's `default_run` (tests/conftest.py)."""

from __future__ import annotations

import csv
import json

import pytest

from spiders.default_sources import opt_in_reason
from spiders.price_basis import NOT_SHOWN_BY_DEFAULT, REAL_PRICE_BASES
from spiders.registry import source_names
from tests.helpers.runs import gpuprices, query

OPT_IN = {s: why for s in source_names() if (why := opt_in_reason(s))}
# a dated public price, or nothing: an undated real price is not shown by default either
SHOWN = set(REAL_PRICE_BASES)


@pytest.fixture
def run(default_run):
    assert default_run.returncode == 0, default_run.stdout + default_run.stderr
    return default_run


def test_the_bundled_snapshots_have_opt_in_sources_to_leave_out():
    # the rule reads the manifests: the templates and the guessed endpoint are opt-in whatever
    # their prices become (the day every snapshot is real, this file tests the reasons only)
    assert {"idc_guian", "idc_nanjing", "idc_northwest", "idc_sinnet_bj", "idc_ulanqab",
            "gpugeek_cn"} <= set(OPT_IN)


def test_no_opt_in_source_is_crawled_and_each_is_named_with_its_reason(run):
    crawls = {s: (status, failures, offers) for s, status, failures, offers in query(
        run.data_dir, "select source, status, failures, offers from raw.crawls")}
    for source, why in OPT_IN.items():
        status, failures, offers = crawls[source]
        assert (status, offers) == ("skipped", 0)
        assert failures[0].startswith(why)
        assert f"not crawled, {why}: " in run.stdout
        assert source in run.stdout.split(f"not crawled, {why}: ")[1].splitlines()[0]
    assert not query(run.data_dir, "select * from raw.offers where source in "
                     f"({', '.join(repr(s) for s in OPT_IN)})")
    # out of the sources table: not selected, not failed
    assert "FAILED" not in run.stdout


@pytest.mark.parametrize("table", ["marts.latest_prices", "marts.cheapest_offers"])
def test_the_prices_tables_hold_only_real_prices(run, table):
    rows = query(run.data_dir, f"select source, price_basis from {table}")
    assert rows
    assert {basis for _, basis in rows} <= SHOWN
    assert not {source for source, _ in rows} & set(OPT_IN)


def test_every_output_draws_on_real_prices_only(run):
    """Claims' evidence, the index and the advisor's input read the same shown observations."""
    shown = query(run.data_dir, "select distinct o.source, coalesce(o.price_basis, "
                  "c.price_basis) from staging.stg_shown_observations as o "
                  "join raw.crawls as c using (crawl_id)")
    assert shown and {basis for _, basis in shown} <= SHOWN
    assert not {basis for _, basis in shown} & set(NOT_SHOWN_BY_DEFAULT)
    real_offers = {r[0] for r in query(run.data_dir, "select offer_id from marts.latest_prices")}
    evidence = query(run.data_dir, "select unnest(offer_ids) from marts.market_claim_evidence")
    assert {r[0] for r in evidence} <= real_offers
    # the index reads stg_observations too: its daily offers are the shown ones
    index_offers = query(run.data_dir, "select distinct offer_id from "
                         "intermediate.int_offer_local_daily")
    assert {r[0] for r in index_offers} <= real_offers
    alerts = query(run.data_dir, "select payload::varchar from alerts.outbox")
    assert not any(source in json.dumps(payload) for (payload,) in alerts for source in OPT_IN)


def test_the_feed_and_the_cli_show_no_opt_in_source(run, tmp_path):
    with (run.data_dir / "feeds" / "latest_prices.csv").open(encoding="utf-8") as feed:
        rows = list(csv.DictReader(feed))
    assert rows and {r["price_basis"] for r in rows} <= SHOWN
    copy = run.copy_to(tmp_path)
    listed = gpuprices(copy, "prices", "--format", "csv")
    assert listed.returncode == 0, listed.stderr
    assert not {r["source"] for r in csv.DictReader(listed.stdout.splitlines())} & set(OPT_IN)
    advice = gpuprices(copy, "advise", "--params", "7B", "--task", "inference",
                       "--hours-per-day", "8", "--days", "30", "--format", "json")
    assert advice.returncode in (0, 3), advice.stderr
    assert not any(f'"{source}"' in advice.stdout for source in OPT_IN)
    report = (run.data_dir / "report" / "index.html").read_text(encoding="utf-8")
    # no source whose prices are all illustrative; the banner, when there is one, names the
    # sources whose prices are not real and dated (an undated real price included)
    assert "modeled snapshot: illustrative prices" not in report
    assert not [s for s in OPT_IN if s.startswith(("idc_", "gpugeek")) and s in report]
