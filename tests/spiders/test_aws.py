"""AWS bulk price list (one trimmed CSV per region) and spot.js: parse the recorded files once,
check many fields. The CSVs hold rows the spider must skip (m5.large, Windows, Reserved, and in
us-east-1 Dedicated, UnusedCapacityReservation, SQL Std and an Upfront Fee row); spot.js holds
'N/A*' prices (no spot market) and an m5.large entry, which yield nothing."""

import asyncio
import csv
from decimal import Decimal

import pytest
from scrapy.http import TextResponse

from pipelines.normalize import normalize_offer
from spiders.vendors.aws import REGIONS, AwsSpider
from tests.conftest import file_response, snapshot_entries

PRICE_LIST = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current"
spider = AwsSpider(crawl_id="test")
CSV_FILES = {e["file"]: e for e in snapshot_entries("aws") if e["file"].endswith(".csv")}
ON_DEMAND = [o for f in sorted(CSV_FILES) for o in spider.parse_on_demand(file_response("aws", f))]
SPOT = list(spider.parse_spot(file_response("aws", "spot.js")))
OFFERS = ON_DEMAND + SPOT


def by(offers, sku, region):
    return next(o for o in offers if o["sku"] == sku and o["region_text"] == region)


def csv_rows(file):
    lines = file_response("aws", file).text.splitlines()
    return list(csv.DictReader(lines[5:]))


async def _collect(agen):
    return [r async for r in agen]


def test_requests_one_price_list_per_region_and_spot_js():
    requests = asyncio.run(_collect(AwsSpider(crawl_id="t").start()))
    assert [r.url for r in requests] == [
        *(f"{PRICE_LIST}/{region}/index.csv" for region in REGIONS),
        "https://spot-price.s3.amazonaws.com/spot.js"]
    assert {r.callback.__name__ for r in requests} == {"parse_on_demand", "parse_spot"}
    assert sorted(e["url"] for e in CSV_FILES.values()) == sorted(r.url for r in requests[:-1])


def test_metadata_lines_precede_the_header():
    lines = file_response("aws", "ec2_us-east-1.csv").text.splitlines()
    assert lines[0] == '"FormatVersion","v1.0"' and lines[4] == '"OfferCode","AmazonEC2"'
    assert lines[5].startswith('"SKU","OfferTermCode","RateCode","TermType"')


def test_skips_windows_reserved_dedicated_and_other_rows():
    rows = csv_rows("ec2_us-east-1.csv")
    skipped = {(r["Instance Type"], r["TermType"], r["Operating System"], r["Tenancy"],
                r["CapacityStatus"], r["Pre Installed S/W"], r["Unit"]) for r in rows} - {
        (o["sku"], "OnDemand", "Linux", "Shared", "Used", "NA", "Hrs")
        for o in ON_DEMAND if o["region_text"] == "us-east-1"}
    assert ("m5.large", "OnDemand", "Linux", "Shared", "Used", "NA", "Hrs") in skipped
    assert {s[1] for s in skipped} == {"OnDemand", "Reserved"}
    assert {"Windows", "Linux"} <= {s[2] for s in skipped}
    assert "Dedicated" in {s[3] for s in skipped}
    assert "UnusedCapacityReservation" in {s[4] for s in skipped}
    assert "SQL Std" in {s[5] for s in skipped}
    assert len(rows) == 11 and len([o for o in ON_DEMAND if o["region_text"] == "us-east-1"]) == 4
    assert not any("m5" in o["sku"] for o in OFFERS)


def test_first_on_demand_offer_fields():
    p4d = by(ON_DEMAND, "p4d.24xlarge", "us-east-1")
    assert p4d["gpu_text"] == "A100 40GB SXM4"
    assert p4d["gpu_count"] == 8
    assert p4d["offer_kind"] == "on_demand"
    assert Decimal(p4d["price_amount"]) == Decimal("21.957642")
    assert p4d["currency"] == "USD"
    assert p4d["billing_period"] == "hour"
    assert p4d["observed_at"] == "2026-11-30T09:00:00Z"
    assert p4d["url"] == f"{PRICE_LIST}/us-east-1/index.csv"
    assert p4d["vendor_data"]["Location"] == "US East (N. Virginia)"
    assert p4d["vendor_data"]["GPU"] == "8"


@pytest.mark.parametrize("sku,region,price", [
    ("p4de.24xlarge", "us-east-1", "27.44705"),
    ("p5.48xlarge", "us-east-1", "55.04"),
    ("p5.4xlarge", "us-east-1", "6.88"),
    ("p4d.24xlarge", "ap-northeast-2", "30.41028"),
    ("p5.48xlarge", "ap-northeast-2", "75.9552"),
    ("p4de.24xlarge", "eu-central-1", "34.29122"),
    ("p5.4xlarge", "eu-west-2", "8.944"),
])
def test_on_demand_prices_are_the_reference_catalog_values(sku, region, price):
    assert Decimal(by(ON_DEMAND, sku, region)["price_amount"]) == Decimal(price)


def test_cards_and_counts_per_instance_type():
    seen = {(o["sku"], o["gpu_text"], o["gpu_count"]) for o in OFFERS}
    assert seen == {("p4d.24xlarge", "A100 40GB SXM4", 8), ("p4de.24xlarge", "A100 80GB SXM4", 8),
                    ("p5.48xlarge", "H100 80GB SXM5", 8), ("p5.4xlarge", "H100 80GB SXM5", 1)}


@pytest.mark.parametrize("sku,region,price", [
    ("p4d.24xlarge", "us-east-1", "2.4655"),      # cheapest of four AZs
    ("p5.48xlarge", "us-east-1", "10.2397"),      # the Atlanta Local Zone
    ("p4de.24xlarge", "eu-central-1", "8.0274"),
    ("p4d.24xlarge", "ca-central-1", "4.5461"),   # a region with spot but no on-demand file
])
def test_spot_is_the_region_minimum(sku, region, price):
    offer = by(SPOT, sku, region)
    assert offer["offer_kind"] == "spot" and Decimal(offer["price_amount"]) == Decimal(price)
    assert offer["url"] == "https://spot-price.s3.amazonaws.com/spot.js"


def test_no_spot_market_is_skipped():
    # 'N/A*' in spot.js: p5.4xlarge everywhere; p5.48xlarge in ca-central-1, ap-northeast-2 and
    # ap-southeast-3.
    text = file_response("aws", "spot.js").text
    assert text.count('"N/A*"') > 20
    spot_keys = {(o["sku"], o["region_text"]) for o in SPOT}
    assert not any(sku == "p5.4xlarge" for sku, _ in spot_keys)
    assert not {("p5.48xlarge", "ca-central-1"), ("p5.48xlarge", "ap-northeast-2")} & spot_keys
    assert "ap-southeast-3" not in {r for _, r in spot_keys}


def test_spot_is_below_on_demand_where_both_exist():
    od = {(o["sku"], o["region_text"]): Decimal(o["price_amount"]) for o in ON_DEMAND}
    pairs = [(Decimal(o["price_amount"]), od[(o["sku"], o["region_text"])])
             for o in SPOT if (o["sku"], o["region_text"]) in od]
    assert len(pairs) == 17 and all(spot < on_demand for spot, on_demand in pairs)


def test_missing_csv_header_is_loud():
    response = TextResponse(url="https://pricing.us-east-1.amazonaws.com/x/index.csv",
                            body=b'"FormatVersion","v1.0"\n<html>maintenance</html>\n')
    with pytest.raises(ValueError, match="aws: no CSV header"):
        list(spider.parse_on_demand(response))


def test_spot_js_without_callback_wrapper_is_loud():
    response = TextResponse(url="https://spot-price.s3.amazonaws.com/spot.js",
                            body=b"<Error>AccessDenied</Error>")
    with pytest.raises(ValueError, match="callback"):
        list(spider.parse_spot(response))


@pytest.mark.parametrize("offer", OFFERS,
                         ids=lambda o: f"{o['sku']}-{o['region_text']}-{o['offer_kind']}")
def test_offer_invariants(offer):
    assert Decimal(offer["price_amount"]) > 0
    assert offer["currency"] == "USD" and offer["billing_period"] == "hour"
    assert offer["gpu_count"] in (1, 8)
    assert len(offer["raw_ref"]) == 64
    row = normalize_offer(dict(offer))   # every target offer normalizes, none is quarantined
    assert row["gpu_model"] in ("A100-40GB", "A100-80GB", "H100-80GB")
    assert row["gpu_variant"] == "SXM"


def test_offer_counts():
    assert len(ON_DEMAND) == 25
    assert len(SPOT) == 25
    assert len({o["region_text"] for o in ON_DEMAND}) == len(REGIONS) == 8
    assert len({o["region_text"] for o in SPOT}) == 14


def test_offers_are_unique():
    keys = [(o["sku"], o["region_text"], o["offer_kind"]) for o in OFFERS]
    assert len(keys) == len(set(keys))
