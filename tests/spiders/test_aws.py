"""AWS bulk price list (one trimmed CSV per region) and spot.js: parse the recorded files once,
check many fields. The CSVs hold rows the spider must skip (m5.large, Windows, Reserved, and in
us-east-1 Dedicated, UnusedCapacityReservation, SQL Std and an Upfront Fee row); spot.js holds
'N/A*' prices (no spot market) and an m5.large entry, which yield nothing."""

import asyncio
import csv
import functools
from decimal import Decimal

import pytest
from scrapy.http import TextResponse

from pipelines.normalize import normalize_offer
from spiders.parsing.machine import machine_specs
from spiders.vendors.aws import REGIONS, AwsSpider, storage_text
from tests.helpers.responses import file_response, snapshot_entries

PRICE_LIST = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current"
spider = AwsSpider(crawl_id="test")


def csv_entries() -> dict[str, dict]:
    return {e["file"]: e for e in snapshot_entries("aws") if e["file"].endswith(".csv")}


@functools.cache
def parsed() -> tuple[list[dict], list[dict]]:
    """The on-demand offers of every recorded CSV and the spot offers of spot.js, parsed once
    (collection needs them too: one invariants test per offer)."""
    on_demand = [o for f in sorted(csv_entries())
                 for o in spider.parse_on_demand(file_response("aws", f))]
    return on_demand, list(spider.parse_spot(file_response("aws", "spot.js")))


@pytest.fixture(scope="module")
def csv_files() -> dict[str, dict]:
    return csv_entries()


@pytest.fixture(scope="module")
def on_demand() -> list[dict]:
    return parsed()[0]


@pytest.fixture(scope="module")
def spot() -> list[dict]:
    return parsed()[1]


@pytest.fixture(scope="module")
def offers(on_demand, spot) -> list[dict]:
    return on_demand + spot


def pytest_generate_tests(metafunc):
    """The tests taking `offer` run once per recorded offer (collection needs the list)."""
    if metafunc.function.__name__ == "test_offer_invariants":
        metafunc.parametrize("offer", [*parsed()[0], *parsed()[1]],
                             ids=lambda o: f"{o['sku']}-{o['region_text']}-{o['offer_kind']}")


def by(offers, sku, region):
    return next(o for o in offers if o["sku"] == sku and o["region_text"] == region)


def csv_rows(file):
    lines = file_response("aws", file).text.splitlines()
    return list(csv.DictReader(lines[5:]))


async def _collect(agen):
    return [r async for r in agen]


def test_requests_one_price_list_per_region_and_spot_js(csv_files):
    requests = asyncio.run(_collect(AwsSpider(crawl_id="t").start()))
    assert [r.url for r in requests] == [
        *(f"{PRICE_LIST}/{region}/index.csv" for region in REGIONS),
        "https://spot-price.s3.amazonaws.com/spot.js"]
    assert {r.callback.__name__ for r in requests} == {"parse_on_demand", "parse_spot"}
    assert sorted(e["url"] for e in csv_files.values()) == sorted(r.url for r in requests[:-1])


def test_metadata_lines_precede_the_header():
    lines = file_response("aws", "ec2_us-east-1.csv").text.splitlines()
    assert lines[0] == '"FormatVersion","v1.0"' and lines[4] == '"OfferCode","AmazonEC2"'
    assert lines[5].startswith('"SKU","OfferTermCode","RateCode","TermType"')


def test_skips_windows_reserved_dedicated_and_other_rows(offers, on_demand):
    rows = csv_rows("ec2_us-east-1.csv")
    skipped = {(r["Instance Type"], r["TermType"], r["Operating System"], r["Tenancy"],
                r["CapacityStatus"], r["Pre Installed S/W"], r["Unit"]) for r in rows} - {
        (o["sku"], "OnDemand", "Linux", "Shared", "Used", "NA", "Hrs")
        for o in on_demand if o["region_text"] == "us-east-1"}
    assert ("m5.large", "OnDemand", "Linux", "Shared", "Used", "NA", "Hrs") in skipped
    assert {s[1] for s in skipped} == {"OnDemand", "Reserved"}
    assert {"Windows", "Linux"} <= {s[2] for s in skipped}
    assert "Dedicated" in {s[3] for s in skipped}
    assert "UnusedCapacityReservation" in {s[4] for s in skipped}
    assert "SQL Std" in {s[5] for s in skipped}
    assert len(rows) == 11 and len([o for o in on_demand if o["region_text"] == "us-east-1"]) == 4
    assert not any("m5" in o["sku"] for o in offers)


def test_first_on_demand_offer_fields(on_demand):
    p4d = by(on_demand, "p4d.24xlarge", "us-east-1")
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
def test_on_demand_prices_are_the_reference_catalog_values(sku, region, price, on_demand):
    assert Decimal(by(on_demand, sku, region)["price_amount"]) == Decimal(price)


@pytest.mark.parametrize("sku,region,vcpus,memory_gib,disk_gb", [
    ("p4d.24xlarge", "us-east-1", 96, 1152, 8000),        # "8 x 1000 SSD"
    ("p4de.24xlarge", "eu-central-1", 96, 1152, 8000),
    ("p5.48xlarge", "ap-northeast-2", 192, 2048, 30720),  # "8 x 3840 SSD"
    ("p5.4xlarge", "eu-west-2", 16, 256, 3840),           # "1 x 3840 SSD"
])
def test_on_demand_offers_carry_the_csv_machine(sku, region, vcpus, memory_gib, disk_gb,
                                                on_demand):
    offer = by(on_demand, sku, region)
    assert machine_specs(offer) == {"vcpus": vcpus, "memory_gib": memory_gib, "disk_gb": disk_gb}


def test_on_demand_machine_texts_keep_the_csv_wording(on_demand):
    p4d = by(on_demand, "p4d.24xlarge", "us-east-1")
    assert (p4d["vcpus_text"], p4d["memory_text"], p4d["disk_text"]) == (
        "96", "1152 GiB", "8 x 1000 GB SSD")


def test_spot_offers_state_no_machine(spot):
    # spot.js lists prices only: no spec is carried over from the CSV
    assert all(machine_specs(o) == {"vcpus": None, "memory_gib": None, "disk_gb": None}
               for o in spot)


@pytest.mark.parametrize("storage, text", [
    ("8 x 1000 SSD", "8 x 1000 GB SSD"), ("2 x 1900 NVMe SSD", "2 x 1900 GB NVMe SSD"),
    ("1 x 3.8 TB NVMe SSD", "1 x 3.8 TB NVMe SSD"), ("EBS only", None), ("", None), (None, None),
])
def test_storage_text_adds_the_gb_the_price_list_leaves_out(storage, text):
    assert storage_text(storage) == text


def test_cards_and_counts_per_instance_type(offers):
    seen = {(o["sku"], o["gpu_text"], o["gpu_count"]) for o in offers}
    assert seen == {("p4d.24xlarge", "A100 40GB SXM4", 8), ("p4de.24xlarge", "A100 80GB SXM4", 8),
                    ("p5.48xlarge", "H100 80GB SXM5", 8), ("p5.4xlarge", "H100 80GB SXM5", 1)}


@pytest.mark.parametrize("sku,region,price", [
    ("p4d.24xlarge", "us-east-1", "2.4655"),      # cheapest of four AZs
    ("p5.48xlarge", "us-east-1", "10.2397"),      # the Atlanta Local Zone
    ("p4de.24xlarge", "eu-central-1", "8.0274"),
    ("p4d.24xlarge", "ca-central-1", "4.5461"),   # a region with spot but no on-demand file
])
def test_spot_is_the_region_minimum(sku, region, price, spot):
    offer = by(spot, sku, region)
    assert offer["offer_kind"] == "spot" and Decimal(offer["price_amount"]) == Decimal(price)
    assert offer["url"] == "https://spot-price.s3.amazonaws.com/spot.js"


def test_no_spot_market_is_skipped(spot):
    # 'N/A*' in spot.js: p5.4xlarge everywhere; p5.48xlarge in ca-central-1, ap-northeast-2 and
    # ap-southeast-3.
    text = file_response("aws", "spot.js").text
    assert text.count('"N/A*"') > 20
    spot_keys = {(o["sku"], o["region_text"]) for o in spot}
    assert not any(sku == "p5.4xlarge" for sku, _ in spot_keys)
    assert not {("p5.48xlarge", "ca-central-1"), ("p5.48xlarge", "ap-northeast-2")} & spot_keys
    assert "ap-southeast-3" not in {r for _, r in spot_keys}


def test_spot_is_below_on_demand_where_both_exist(on_demand, spot):
    od = {(o["sku"], o["region_text"]): Decimal(o["price_amount"]) for o in on_demand}
    pairs = [(Decimal(o["price_amount"]), od[(o["sku"], o["region_text"])])
             for o in spot if (o["sku"], o["region_text"]) in od]
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


def test_offer_invariants(offer):
    assert Decimal(offer["price_amount"]) > 0
    assert offer["currency"] == "USD" and offer["billing_period"] == "hour"
    assert offer["gpu_count"] in (1, 8)
    assert len(offer["raw_ref"]) == 64
    row = normalize_offer(dict(offer))   # every target offer normalizes, none is quarantined
    assert row["gpu_model"] in ("A100-40GB", "A100-80GB", "H100-80GB")
    assert row["gpu_variant"] == "SXM"


def test_offer_counts(on_demand, spot):
    assert len(on_demand) == 25
    assert len(spot) == 25
    assert len({o["region_text"] for o in on_demand}) == len(REGIONS) == 8
    assert len({o["region_text"] for o in spot}) == 14


def test_offers_are_unique(offers):
    keys = [(o["sku"], o["region_text"], o["offer_kind"]) for o in offers]
    assert len(keys) == len(set(keys))
