"""Counted once: an offer that reaches the pipeline directly and through an aggregator (or a second
path) counts once in the cheapest offers, the market claims and the signals; an aggregator's offer
of a vendor no direct source reads still counts. latest_prices and price_history keep every row,
with reaches_via and counted. The rule's one home is staging.stg_observations (`counted`)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from scrapy.http import TextResponse

from pipelines.backfill.archives import ARCHIVES
from pipelines.backfill.items import source_name
from pipelines.backfill.vendors import vendor_of
from pipelines.warehouse.sql_models import load_models
from spiders.layout import SQL_DIR
from spiders.registry import source_names, spider_class
from tests.helpers.observations import (
    BEIJING,
    DAY,
    EXTERNAL,
    ULANQAB,
    approx,
    build,
    obs,
    records,
)

AGGREGATOR = {"source": "primeintellect", "reaches_via": "aggregator"}


def direct_and_aggregated(price: float, aggregated_price: float, **offer) -> list[dict]:
    """The same offer read by its vendor's own source and by the aggregator (another region
    code and SKU, as an aggregator writes them; the same vendor, card, count, kind, country)."""
    return [obs(price, **offer),
            obs(aggregated_price, **{**offer, **AGGREGATOR, "region_code": "agg-dc-1",
                                     "sku": f"agg:{offer.get('sku', 'x')}"})]


def vendors(prices, markup: float = 0, **overrides) -> list[dict]:
    """One offer per price, each at its own vendor and direct source, and each also through the
    aggregator at that price plus `markup`."""
    return [row for i, p in enumerate(prices)
            for row in direct_and_aggregated(p, p + markup, vendor=f"Vendor {i}",
                                             source=f"idc_{i}", sku=f"s{i}", **overrides)]


def test_cheapest_offers_count_the_direct_offer_once_and_keep_the_only_view(con):
    build(con, [*direct_and_aggregated(20, 15, vendor="RunPod", source="runpod", sku="h100"),
                obs(18, vendor="Hyperstack", sku="n3", **AGGREGATOR)])   # not crawled directly
    rows = records(con, "select rank, vendor, source, price_per_gpu_hour_cny "
                        "from marts.cheapest_offers order by rank")
    assert [(r["rank"], r["vendor"], r["source"], float(r["price_per_gpu_hour_cny"]))
            for r in rows] == [(1, "Hyperstack", "primeintellect", 18.0),
                               (2, "RunPod", "runpod", 20.0)]


def test_latest_prices_and_price_history_keep_every_row_and_say_which_counts(con):
    build(con, [*direct_and_aggregated(20, 15, vendor="RunPod", source="runpod", sku="h100"),
                obs(18, vendor="Hyperstack", sku="n3", **AGGREGATOR)])
    for table in ("marts.latest_prices", "marts.price_history"):
        rows = records(con, f"select vendor, source, reaches_via, counted from {table} "
                            "order by vendor, source")
        assert rows == [
            {"vendor": "Hyperstack", "source": "primeintellect", "reaches_via": "aggregator",
             "counted": True},
            {"vendor": "RunPod", "source": "primeintellect", "reaches_via": "aggregator",
             "counted": False},
            {"vendor": "RunPod", "source": "runpod", "reaches_via": "direct", "counted": True},
        ], table


@pytest.mark.parametrize("differs, counted", [
    ({}, False),                                       # the like-for-like offer: left out
    ({"gpu_variant": None}, False),                    # a variant one side does not state
    ({"gpu_count": 8}, True),                          # another instance: counts
    ({"gpu_variant": "PCIe"}, True),                   # another card variant
    ({"offer_kind": "spot"}, True),
    ({"billing_period": "month"}, True),
    ({"country": "CA"}, True),                         # another country
    ({"vendor": "Lambda"}, True),                      # another vendor
    ({"observed_at": DAY + timedelta(days=1)}, True),  # another day: the direct one was not seen
])
def test_the_like_for_like_key(con, differs, counted):
    offer = {"vendor": "RunPod", "source": "runpod", "sku": "h100", "country": "US",
             "region_code": "us-tx-3", "province_or_state": None, "city": None,
             "is_tier1_city": False}
    direct, aggregated = direct_and_aggregated(20, 15, **offer)
    build(con, [direct, {**aggregated, **differs}])
    assert records(con, "select counted from staging.stg_observations "
                        "where source = 'primeintellect'") == [{"counted": counted}]


def test_a_second_path_counts_once_too(con):
    build(con, [obs(60, vendor="Tencent", source="tencent_cn", sku="GN7"),
                obs(60, vendor="Tencent", source="tencent_cn_list", sku="GN7 list",
                    reaches_via="second_path")])
    assert records(con, "select source, counted from marts.latest_prices order by source") == [
        {"source": "tencent_cn", "counted": True},
        {"source": "tencent_cn_list", "counted": False}]


def test_a_template_never_counts_and_never_blocks_a_real_offer(con):
    """A placeholder source (no real operator: `template = true`) lands its rows, shown in
    latest_prices, but counts in no signal, claim or index, and a real offer of the same line the
    same day still counts."""
    template = {"source": "idc_template", "vendor": "template (no public price page found)",
                "reaches_via": "template"}
    rows = [obs(p, **template, sku=f"t{i}") for i, p in enumerate([60, 61, 62, 63, 64])]
    rows += [obs(45, **template, sku="nm", **ULANQAB),
             obs(70, vendor="template (no public price page found)", source="idc_real", sku="r")]
    build(con, rows)
    shown = records(con, "select source, counted, count(*) as n from marts.latest_prices "
                         "group by all order by source")
    assert shown == [{"source": "idc_real", "counted": True, "n": 1},
                     {"source": "idc_template", "counted": False, "n": 6}]
    assert records(con, "select distinct source from marts.cheapest_offers") == [
        {"source": "idc_real"}]
    claim = records(con, "select distinct_offers from marts.market_claims "
                         "where claim_id = 'a100_80gb_beijing_hourly'")
    assert claim == [{"distinct_offers": 1}]
    # the template's Inner Mongolia price (25 % below) pairs with nothing; the real offer's
    # Beijing is the whole reference, never its own: no row, its reason in marts.held_pairs
    assert records(con, "select region_group, vendors, offers from marts.regional_discount") == []
    assert records(con, "select vendor, region_group, held_reason from marts.held_pairs") == [
        {"vendor": "template (no public price page found)", "region_group": "Beijing",
         "held_reason": "the region is the reference itself: no other region of the reference"}]


def test_a_template_does_not_vote_on_the_market_a_price_is_judged_against(con):
    """Invented template prices far above the market must not make a real low price an outlier."""
    rows = [obs(p, vendor=f"Vendor {i}", source=f"idc_{i}", sku=f"r{i}")
            for i, p in enumerate([18, 20, 22])]
    rows += [obs(200, vendor=f"template {i}", source=f"idc_template_{i}", sku=f"t{i}",
                 reaches_via="template") for i in range(5)]
    rows.append(obs(2.8, vendor="Cheap marketplace", source="idc_cheap", sku="c"))
    build(con, rows)
    [cheap] = records(con, "select card_median_cny_per_gpu_hour, vendors_compared, "
                           "outlier_status from marts.price_outliers where source = 'idc_cheap'")
    # the market: the four counted vendors (18, 20, 22, 2.8: the median of their logs is
    # sqrt(18 x 20)), not the five templates at 200 (with them: 200, and 2.8 held at 1/71)
    assert cheap == {"card_median_cny_per_gpu_hour": approx(360 ** 0.5), "vendors_compared": 4,
                     "outlier_status": "ok"}


def test_configured_templates_declare_themselves():
    templates = [n for n in source_names() if spider_class(n).is_template]
    assert templates, "the configured templates (idc_tables.toml template = true)"
    response = TextResponse(url="https://template.example/", body=b"<table></table>")
    for name in templates:
        assert spider_class(name).reaches_via == "template", name
        offer = spider_class(name)(crawl_id="t").offer(response, sku="x")
        assert offer["reaches_via"] == "template", name


def test_no_source_on_a_placeholder_host_counts():
    """A source whose pages are on an `.example` host (or any reserved name) is a named template,
    whose offers count in no signal, claim or index: no invented operator passes for a real one."""
    from urllib.parse import urlsplit

    from tests.spiders.test_manifests import SNAPSHOT_DIR
    placeholder = ("example", "invalid", "test", "localhost")
    on_placeholders = []
    for name in source_names():
        manifest = json.loads((SNAPSHOT_DIR / name / "manifest.json").read_text("utf-8"))
        urls = [*getattr(spider_class(name), "start_urls", []),
                *(e["url"] for e in manifest["entries"])]
        hosts = {urlsplit(u).hostname or "" for u in urls}
        if any(h.rsplit(".", 1)[-1] in placeholder for h in hosts):
            on_placeholders.append(name)
            spider = spider_class(name)
            assert spider.is_template and spider.reaches_via == "template", (name, hosts)
            assert spider.vendor.startswith("template"), name     # named so on every page
    assert on_placeholders, "the bundled templates are on .example hosts"


def test_market_claims_count_offers_and_vendors_once(con):
    # the aggregator lists each vendor's offer 1 CNY dearer: 11 units if its twins counted
    rows = [*vendors([60, 62, 64, 66, 68], markup=1),
            obs(70, vendor="Only via aggregator", sku="only", **AGGREGATOR)]
    build(con, rows)
    claim = records(con, "select * from marts.market_claims "
                         "where claim_id = 'a100_80gb_beijing_hourly'")[0]
    assert (claim["distinct_offers"], claim["vendors"]) == (6, 6)
    assert claim["median_value"] == 65.0          # 60, 62, 64, 66, 68, 70
    units = records(con, "select vendor, offers, offer_ids from marts.market_claim_evidence "
                         "where claim_id = 'a100_80gb_beijing_hourly' order by vendor")
    expected = sorted([r["offer_id"]] for r in rows
                      if r["source"] != "primeintellect" or r["vendor"] == "Only via aggregator")
    assert sorted(u["offer_ids"] for u in units) == expected
    assert {u["offers"] for u in units} == {1}


def test_spot_discount_pairs_each_offer_once(con):
    rows = []
    for i, share in enumerate([18, 20, 21, 22, 19]):
        place = {"vendor": f"Vendor {i}", "source": f"idc_{i}"}
        rows += direct_and_aggregated(50, 50, sku="od", **place)
        rows += direct_and_aggregated(50 * share / 100, 50 * share / 100, sku="spot",
                                      offer_kind="spot", **place)
    build(con, rows)
    pairs = records(con, "select source, vendor from marts.spot_discount order by vendor")
    assert pairs == [{"source": f"idc_{i}", "vendor": f"Vendor {i}"} for i in range(5)]
    claim = records(con, "select distinct_offers, vendors from marts.market_claims "
                         "where claim_id = 'spot_share_of_regular'")[0]
    assert (claim["distinct_offers"], claim["vendors"]) == (5, 5)


def test_regional_discount_counts_the_direct_offer_once(con):
    rows = []
    for i in range(3):
        place = {"vendor": f"Vendor {i}", "source": f"idc_{i}"}
        rows += direct_and_aggregated(60, 60, sku="bj", **place, **BEIJING)
        rows += direct_and_aggregated(45, 45, sku="nm", **place, **ULANQAB)
    build(con, rows)
    row = records(con, "select vendors, offers, distinct_offers, discount_pct "
                       "from marts.regional_discount where region_group = 'Inner Mongolia'")
    # 3 Inner Mongolia offers against 3 Beijing ones: 12 if the aggregator's twins counted
    assert row == [{"vendors": 3, "offers": 6, "distinct_offers": 6, "discount_pct": 25.0}]
    counted_ids = {r["offer_id"] for r in records(
        con, "select offer_id from marts.latest_prices where counted")}
    paired = records(con, "select region_offer_ids, reference_offer_ids "
                          "from intermediate.int_regional_pairs")
    assert {i for p in paired for i in p["region_offer_ids"] + (p["reference_offer_ids"] or [])} \
        <= counted_ids


def test_every_model_that_counts_offers_reads_only_counted_rows():
    """A model reading the daily series or the observations filters on `counted`, except the
    ones that show every row (or, like the price changes and source reads, follow one offer or
    source through time)."""
    shows_every_row = {"marts.latest_prices", "marts.price_history", "marts.price_outliers",
                       "intermediate.int_price_changes", "intermediate.int_source_month_reads",
                       # the report's charts' points (the views marts.card_history and
                       # marts.chart_points), moved from pipelines/report/sql as they were
                       "intermediate.int_card_line_days", "intermediate.int_chart_line_days",
                       # each offer's last closes, which the price changes follow it with
                       "intermediate.int_offer_closes",
                       # when each source looked, whatever it counted
                       "intermediate.int_source_days"}
    series = {"staging.stg_observations", "intermediate.int_offer_daily",
              "intermediate.int_offer_local_daily"}
    for model in load_models(SQL_DIR, EXTERNAL):
        if model.table in series or model.table in shows_every_row:
            continue
        if series & set(model.reads):
            assert "counted" in model.sql, f"{model.table} reads {series & set(model.reads)}"


def test_every_source_declares_how_it_reaches_its_offers():
    """The registry is the one place a source's reach comes from; a second path names a
    registered direct source of the same vendor."""
    for name in source_names():
        spider = spider_class(name)
        assert spider.reaches_via in ("direct", "aggregator", "second_path", "archive",
                                      "template"), name
        assert (spider.reaches_via == "template") == spider.is_template, name
        if spider.reaches_via == "second_path":
            direct = spider_class(spider.second_path_of)
            assert direct.reaches_via == "direct" and direct.vendor == spider.vendor, name
        else:
            assert spider.second_path_of is None, name
    assert spider_class("primeintellect").reaches_via == "aggregator"


def test_a_direct_observation_loaded_later_the_same_day_is_counted_once_incrementally(con):
    """The aggregator's twin is loaded first; the vendor's own offer comes in a later crawl of
    the same day. The incremental build then leaves the twin out, as a full rebuild does."""
    from tests.helpers.observations import build_only, insert

    direct, twin = direct_and_aggregated(20, 15, vendor="RunPod", source="runpod", sku="h100")
    spot, spot_twin = direct_and_aggregated(5, 5, vendor="RunPod", source="runpod", sku="h100 s",
                                            offer_kind="spot")
    tables = ("marts.cheapest_offers", "marts.latest_prices", "marts.spot_discount",
              "marts.market_claim_evidence", "marts.price_history", "intermediate.int_offer_daily")
    insert(con, [twin, spot_twin], crawl_id="aggregator-09")
    build_only(con, *tables)
    assert [r["source"] for r in records(con, "select source from marts.cheapest_offers")] == [
        "primeintellect", "primeintellect"]
    insert(con, [{**direct, "observed_at": DAY + timedelta(hours=2)},
                 {**spot, "observed_at": DAY + timedelta(hours=2)}], crawl_id="runpod-11")
    how = build_only(con, *tables)
    assert how["intermediate.int_offer_daily"] == "incremental from 2026-11-30", how
    assert how["marts.latest_prices"].startswith("incremental"), how
    incremental = {t: records(con, f"select * from {t} order by all") for t in tables}
    assert {r["source"] for r in incremental["marts.cheapest_offers"]} == {"runpod"}
    assert [r["source"] for r in incremental["marts.spot_discount"]] == ["runpod"]
    assert {(r["source"], r["counted"]) for r in incremental["marts.latest_prices"]} == {
        ("runpod", True), ("primeintellect", False)}
    build_only(con, *tables, full=True)
    assert {t: records(con, f"select * from {t} order by all") for t in tables} == incremental


def archived(archive: str, cloud: str, price: float, **offer) -> dict:
    """The offer as a backfill of `archive` lands it: the source and vendor its cloud's name
    resolves to (spiders/parsing/vendor_aliases.csv), reached via the archive."""
    vendor = vendor_of(cloud)
    return obs(price, **{"region_code": "US", **offer,
                         "source": source_name(ARCHIVES[archive], cloud), "vendor": vendor.vendor,
                         "vendor_kind": vendor.vendor_kind, "reaches_via": "archive",
                         "sku": f"{cloud} GPU"})


@pytest.mark.parametrize("crawled, cloud_gpus, full_stack", [
    ("runpod", "RunPod", "RunPod.io"),
    ("gcp", "Google Cloud Platform (GCP)", "GCP"),
    ("lambda_cloud", "Lambda Cloud", "Lambda"),
])
def test_a_crawl_and_two_archives_under_three_spellings_count_once(con, crawled, cloud_gpus,
                                                                    full_stack):
    """The same offer (card, count, kind, country, day) from our crawled source and from the
    cloud-gpus and full-stack archives, each spelling the vendor its own way: one vendor, one
    counted offer (the crawl's), and the archives' rows are shown, not counted."""
    spider = spider_class(crawled)
    offer = {"gpu_model": "H100-80GB", "country": "US", "province_or_state": None, "city": None,
             "is_tier1_city": False}
    build(con, [obs(20, **offer, source=crawled, vendor=spider.vendor,
                    vendor_kind=spider.vendor_kind, sku="h100", region_code="us-east-1"),
                archived("cloud-gpus", cloud_gpus, 19, **offer),
                archived("full-stack", full_stack, 21, **offer)])
    rows = records(con, "select source, vendor, counted from marts.latest_prices order by source")
    assert rows == [{"source": f"cloud-gpus:{crawled}", "vendor": spider.vendor, "counted": False},
                    {"source": f"full-stack:{crawled}", "vendor": spider.vendor, "counted": False},
                    {"source": crawled, "vendor": spider.vendor, "counted": True}]
    assert records(con, "select source from marts.cheapest_offers") == [{"source": crawled}]


def test_two_spellings_of_a_vendor_we_do_not_crawl_are_one_vendor(con):
    """DataCrunch as cloud-gpus ("DataCrunch.io") and full-stack ("Datacrunch") write it: one
    vendor in the market claims, not two."""
    build(con, [archived("cloud-gpus", "DataCrunch.io", 60, **BEIJING),
                archived("full-stack", "Datacrunch", 62, **BEIJING),
                obs(64, vendor="Other IDC", source="idc_other", sku="o")])
    assert records(con, "select distinct vendor from marts.latest_prices order by 1") == [
        {"vendor": "DataCrunch"}, {"vendor": "Other IDC"}]
    claim = records(con, "select vendors from marts.market_claims "
                         "where claim_id = 'a100_80gb_beijing_hourly'")
    assert claim == [{"vendors": 2}]
