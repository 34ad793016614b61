"""AWS bulk price list (one trimmed CSV per region) and spot.json: parse the recorded files once,
check many fields. The CSVs hold rows the spider must skip (m5.large, Windows, Reserved, and in
us-east-1 Dedicated, UnusedCapacityReservation, SQL Std and an Upfront Fee row); spot.json holds
'N/A*' and '0' prices (no spot market) and an m5.large entry, which yield nothing. With AWS keys,
spot comes from EC2 DescribeSpotPriceHistory per region instead: botocore serializes and signs
the request, Scrapy sends it (replayed here), botocore's parser reads the recorded XML, and the
recorded bodies are checked element by element against botocore's EC2 model."""

import asyncio
import csv
import functools
import re
from decimal import Decimal

import pytest
from scrapy.http import TextResponse

from pipelines.normalize import normalize_offer
from spiders.parsing.machine import machine_specs
from spiders.replay_server import request_key
from spiders.vendors.aws import (
    EC2_URL,
    REGIONS,
    SPOT_REGIONS,
    SPOT_URL,
    AwsSpider,
    elements_unknown_to_model,
    parse_spot_history,
    region_code,
    spot_feed,
    spot_price,
    storage_text,
)
from tests.helpers.crawl import run_crawl
from tests.helpers.responses import file_response, snapshot_entries

PRICE_LIST = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current"
spider = AwsSpider(crawl_id="test")


def csv_entries() -> dict[str, dict]:
    return {e["file"]: e for e in snapshot_entries("aws") if e["file"].endswith(".csv")}


@pytest.fixture(scope="module")
def csv_files() -> dict[str, dict]:
    return csv_entries()


@pytest.fixture(scope="module")
def on_demand() -> list[dict]:
    """The on-demand offers of every recorded CSV."""
    return [o for f in sorted(csv_entries())
            for o in spider.parse_on_demand(file_response("aws", f))]


@pytest.fixture(scope="module")
def spot() -> list[dict]:
    """The spot offers of spot.json."""
    return list(spider.parse_spot(file_response("aws", "spot.json")))


@pytest.fixture(scope="module")
def offers(on_demand, spot) -> list[dict]:
    return on_demand + spot


def by(offers, sku, region):
    return next(o for o in offers if o["sku"] == sku and o["region_text"] == region)


def csv_rows(file):
    lines = file_response("aws", file).text.splitlines()
    return list(csv.DictReader(lines[5:]))


async def _collect(agen):
    return [r async for r in agen]


def test_requests_one_price_list_per_region_and_spot_json(csv_files, monkeypatch):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name, raising=False)
    requests = asyncio.run(_collect(AwsSpider(crawl_id="t").start()))
    assert [r.url for r in requests] == [
        *(f"{PRICE_LIST}/{region}/index.csv" for region in REGIONS),
        "https://website.spot.ec2.aws.a2z.com/spot.json"]
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
    # spot.json lists prices only: no spec is carried over from the CSV
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
    assert offer["url"] == "https://website.spot.ec2.aws.a2z.com/spot.json"


def test_no_spot_market_is_skipped(spot):
    # 'N/A*' in spot.json: p5.4xlarge everywhere but us-east-1, where it is '0'; p5.48xlarge in
    # ca-central-1, ap-northeast-2 and ap-southeast-3.
    text = file_response("aws", "spot.json").text
    assert text.count('"N/A*"') > 20 and text.count('"USD":"0"') == 1
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


def test_spot_feed_neither_json_nor_callback_is_loud():
    response = TextResponse(url=SPOT_URL, body=b"<Error>AccessDenied</Error>")
    with pytest.raises(ValueError, match="neither JSON nor a callback"):
        list(spider.parse_spot(response))


def test_every_offer_is_an_hourly_usd_price_of_a_target_sxm_card(offers):
    for offer in offers:
        assert offer["currency"] == "USD" and offer["billing_period"] == "hour"
        assert offer["gpu_count"] in (1, 8)
        row = normalize_offer(dict(offer))
        assert row["gpu_model"] in ("A100-40GB", "A100-80GB", "H100-80GB")
        assert row["gpu_variant"] == "SXM"


def test_offer_counts(on_demand, spot):
    assert len(on_demand) == 25
    assert len(spot) == 25
    assert len({o["region_text"] for o in on_demand}) == len(REGIONS) == 8
    assert len({o["region_text"] for o in spot}) == 14


# --- spot.json: plain JSON or the legacy callback wrapper; what counts as no price ---

FEED = ('{"vers":0.01,"config":{"rate":"perhr","valueColumns":["linux","mswin"],'
        '"currencies":["USD"],"regions":[{"region":"%s","footnotes":{},"instanceTypes":'
        '[{"type":"gpuCurrentGen","sizes":[{"size":"p4d.24xlarge","valueColumns":'
        '[{"name":"linux","prices":{"USD":%s}},{"name":"mswin","prices":{"USD":"N/A*"}}]}]}]}]}}')


@pytest.mark.parametrize("body", [
    FEED % ("us-east-1", '"3.5"'),                                     # spot.json
    "callback(" + FEED % ("us-east-1", '"3.5"') + ");",                # spot.js
    "/*\n * Licensed under MIT\n */\ncallback(" + FEED % ("us-east-1", '"3.5"') + ")",  # ligoj
    "\ufeff" + FEED % ("us-east-1", '"3.5"') + "\n",
])
def test_spot_feed_reads_plain_json_and_the_callback_wrapper(body):
    response = TextResponse(url=SPOT_URL, body=body.encode(), encoding="utf-8")
    [offer] = spider.parse_spot(response)
    assert (offer["sku"], offer["region_text"], offer["price_amount"]) == (
        "p4d.24xlarge", "us-east-1", "3.5")


@pytest.mark.parametrize("text, price", [
    ("2.4655", Decimal("2.4655")), ("10", Decimal("10")), (" 0.5 ", Decimal("0.5")),
    ("N/A*", None), ("0", None), ("0.0000", None), (0, None), ("", None), (None, None),
    ("-1", None), ("$2", None),
])
def test_spot_price_no_price_forms(text, price):
    assert spot_price(text) == price


@pytest.mark.parametrize("usd", ['"N/A*"', '"0"', "0", '"0.0000"'])
def test_spot_feed_without_price_yields_nothing(usd):
    response = TextResponse(url=SPOT_URL, body=(FEED % ("us-east-1", usd)).encode())
    assert list(spider.parse_spot(response)) == []


@pytest.mark.parametrize("legacy, code", [
    ("us-east", "us-east-1"), ("us-west", "us-west-1"), ("eu-ireland", "eu-west-1"),
    ("apac-sin", "ap-southeast-1"), ("apac-syd", "ap-southeast-2"),
    ("apac-tokyo", "ap-northeast-1"), ("eu-central-1", "eu-central-1"), ("us-west-2", "us-west-2"),
])
def test_legacy_region_names_are_mapped(legacy, code):
    assert region_code(legacy) == code
    body = (FEED % (legacy, '"1.2"')).encode()
    [offer] = spider.parse_spot(TextResponse(url=SPOT_URL, body=body))
    assert offer["region_text"] == code and offer["vendor_data"]["feed_region"] == legacy


def test_spot_feed_with_no_regions_yields_nothing():
    body = b'{"vers":0.01,"config":{"rate":"perhr","regions":[]}}'
    assert list(spider.parse_spot(TextResponse(url=SPOT_URL, body=body))) == []
    assert spot_feed('callback({"config": {"regions": []}});') == {"config": {"regions": []}}


# --- keyed path: EC2 DescribeSpotPriceHistory, botocore-signed, Scrapy-sent ---

FAKE_KEY_ID = "AKIDEXAMPLE"
FAKE_SECRET = "not.a.real.secret/fake.key.for.tests"   # dots: no real secret has them
START = "2026-11-30T09:00:00Z"                          # the recorded bodies' StartTime


def ec2_entries() -> list[dict]:
    return [e for e in snapshot_entries("aws") if e["file"].startswith("ec2_spot_")]


@pytest.fixture
def aws_keys(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", FAKE_KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", FAKE_SECRET)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)


def keyed_requests():
    return asyncio.run(_collect(AwsSpider(crawl_id="t", spot_start_time=START).start()))


def test_keys_switch_spot_to_describe_spot_price_history(aws_keys):
    requests = keyed_requests()
    assert [r.url for r in requests] == [
        *(f"{PRICE_LIST}/{region}/index.csv" for region in REGIONS),
        *(EC2_URL.format(region) for region in SPOT_REGIONS)]
    ec2 = requests[len(REGIONS):]
    assert {r.method for r in ec2} == {"POST"} and len(SPOT_REGIONS) == 15
    assert {r.callback.__name__ for r in ec2} == {"parse_spot_history"}
    assert "AWS_ACCESS_KEY_ID" in AwsSpider.path_note() or AwsSpider.keyed()


def test_keyed_request_is_serialized_and_signed_by_botocore(aws_keys):
    request = keyed_requests()[len(REGIONS) + SPOT_REGIONS.index("us-east-1")]
    assert request.body.decode() == (
        "Action=DescribeSpotPriceHistory&Version=2016-11-15"
        "&StartTime=2026-11-30T09%3A00%3A00Z&EndTime=2026-11-30T09%3A00%3A00Z"
        "&InstanceType.1=p4d.24xlarge&InstanceType.2=p4de.24xlarge&InstanceType.3=p5.48xlarge"
        "&InstanceType.4=p5.4xlarge&ProductDescription.1=Linux%2FUNIX")
    auth = request.headers[b"Authorization"].decode()
    assert auth.startswith(f"AWS4-HMAC-SHA256 Credential={FAKE_KEY_ID}/")
    assert "/us-east-1/ec2/aws4_request" in auth
    assert "SignedHeaders=content-type;host;x-amz-date" in auth
    assert request.headers[b"Content-Type"].startswith(b"application/x-www-form-urlencoded")
    assert b"X-Amz-Date" in request.headers and b"Content-Length" not in request.headers


def test_session_token_is_signed_in_when_set(aws_keys, monkeypatch):
    monkeypatch.setenv("AWS_SESSION_TOKEN", "session.token.fake")
    request = keyed_requests()[len(REGIONS)]
    assert request.headers[b"X-Amz-Security-Token"] == b"session.token.fake"
    assert b"x-amz-security-token" in request.headers[b"Authorization"]


def test_the_secret_is_never_in_url_body_or_meta(aws_keys, monkeypatch):
    monkeypatch.setenv("AWS_SESSION_TOKEN", "session.token.fake")
    for request in keyed_requests():
        for text in (request.url, (request.body or b"").decode(), repr(request.meta),
                     repr(request.cb_kwargs), repr(dict(request.headers))):
            assert FAKE_SECRET not in text and "fake.key.for.tests" not in text


def test_every_keyed_request_matches_a_recorded_entry(aws_keys):
    """Replay keys a form body by its text as sent: the fixed StartTime makes it match."""
    recorded = {request_key(e["method"], e["url"], e.get("body")) for e in ec2_entries()}
    first_pages = [r for r in keyed_requests() if r.method == "POST"]
    assert {request_key(r.method, r.url, r.body) for r in first_pages} <= recorded
    assert len(recorded) == len(SPOT_REGIONS) + 1     # us-east-1 answers in two pages


def test_the_start_time_comes_from_the_setting_or_now(aws_keys):
    from scrapy.utils.test import get_crawler
    crawler = get_crawler(AwsSpider, {"AWS_SPOT_START_TIME": "2026-01-02T03:04:05Z"})
    fixed = AwsSpider.from_crawler(crawler, crawl_id="t")
    assert fixed._spot_start().isoformat() == "2026-01-02T03:04:05+00:00"
    assert AwsSpider(crawl_id="t")._spot_start().tzinfo is not None


@functools.cache
def keyed_output() -> list:
    """What parse_spot_history yields for every recorded region (the us-east-1 pages chained)."""
    keyed = AwsSpider(crawl_id="t", spot_start_time=START)
    keyed._aws_credentials = {"AWS_ACCESS_KEY_ID": FAKE_KEY_ID, "AWS_SECRET_ACCESS_KEY": "x.y"}
    out = []
    for entry in ec2_entries():
        if entry["file"].endswith("_page2.xml"):
            continue
        region = entry["url"].split(".")[1]
        result = list(keyed.parse_spot_history(file_response("aws", entry["file"]), region,
                                               keyed._spot_start(), []))
        while result and hasattr(result[0], "callback"):    # a next-page request
            [follow] = result
            assert request_key(follow.method, follow.url, follow.body) in {
                request_key(e["method"], e["url"], e.get("body")) for e in ec2_entries()}
            page2 = file_response("aws", entry["file"].replace("_page1", "_page2"))
            result = list(follow.callback(page2, **follow.cb_kwargs))
        out += result
    return out


def test_keyed_spot_equals_the_public_feed(spot):
    """Both paths give one offer per (type, region) at the cheapest AZ's price."""
    keyed = {(o["sku"], o["region_text"]): Decimal(o["price_amount"]) for o in keyed_output()}
    public = {(o["sku"], o["region_text"]): Decimal(o["price_amount"]) for o in spot}
    assert keyed == public and len(keyed) == 25


def test_keyed_spot_offer_names_its_cheapest_zone():
    p5 = next(o for o in keyed_output()
              if (o["sku"], o["region_text"]) == ("p5.48xlarge", "us-east-1"))
    assert Decimal(p5["price_amount"]) == Decimal("10.2397") and p5["offer_kind"] == "spot"
    assert p5["vendor_data"]["availability_zone_id"] == "use1-atl2-az1"     # a Local Zone
    assert p5["vendor_data"]["availability_zone"] == "us-east-1-atl-2a"
    assert p5["vendor_data"]["timestamp"] == "2026-11-30T08:00:00+00:00"
    assert len(p5["vendor_data"]["zone_prices"]) == 5 and p5["url"] == EC2_URL.format("us-east-1")
    assert normalize_offer(dict(p5))["gpu_model"] == "H100-80GB"


def test_keyed_offers_are_one_per_type_and_region_whatever_the_zones():
    keys = [(o["sku"], o["region_text"], o["offer_kind"]) for o in keyed_output()]
    assert len(keys) == len(set(keys))
    ids = {normalize_offer(dict(o))["offer_id"] for o in keyed_output()}
    assert len(ids) == len(keys)


def test_keyed_and_public_offers_share_their_offer_ids(spot):
    public = {normalize_offer(dict(o))["offer_id"] for o in spot}
    assert {normalize_offer(dict(o))["offer_id"] for o in keyed_output()} == public


def test_region_without_spot_market_answers_an_empty_set():
    body = file_response("aws", "ec2_spot_ap-southeast-3.xml").body
    assert parse_spot_history(200, body)["SpotPriceHistory"] == []
    assert not any(o["region_text"] == "ap-southeast-3" for o in keyed_output())


@pytest.mark.parametrize("entry", ec2_entries(), ids=lambda e: e["file"])
def test_recorded_answers_pass_botocores_ec2_model(entry):
    """The SDK shape check: every element of every recorded body is one botocore's EC2 model
    knows, and every item parses with the fields the spider reads."""
    body = (file_response("aws", entry["file"])).body
    assert elements_unknown_to_model(body) == []
    parsed = parse_spot_history(200, body)
    items = parsed["SpotPriceHistory"]
    assert body.count(b"<item>") == len(items)
    for item in items:
        assert item["ProductDescription"] == "Linux/UNIX" and item["Timestamp"].tzinfo
        assert item["AvailabilityZoneId"] and item["SpotPrice"]
    # the last page says <nextToken/> (an empty token), the first of two a real one
    assert bool(parsed["NextToken"]) == entry["file"].endswith("_page1.xml")


@pytest.mark.parametrize("old, new", [
    (b"<spotPrice>", b"<price>"),                        # a renamed item element
    (b"<availabilityZone>", b"<zone>"),
    (b"<spotPriceHistorySet>", b"<spotPriceHistory>"),   # the list renamed
])
def test_a_renamed_element_fails_the_shape_check(old, new):
    body = file_response("aws", "ec2_spot_us-east-2.xml").body
    renamed = body.replace(old, new).replace(old.replace(b"<", b"</"), new.replace(b"<", b"</"))
    assert renamed != body
    assert elements_unknown_to_model(renamed), "the renamed copy passed the shape check"
    if old != b"<spotPriceHistorySet>":
        with pytest.raises(ValueError, match="item lacks"):
            parse_spot_history(200, renamed)
    else:   # botocore drops the unknown list: no item at all, which the element check caught
        assert parse_spot_history(200, renamed).get("SpotPriceHistory", []) == []


def test_a_missing_member_fails_loudly():
    body = file_response("aws", "ec2_spot_us-east-2.xml").body
    missing = re.sub(rb"\s*<instanceType>[^<]*</instanceType>", b"", body, count=1)
    with pytest.raises(ValueError, match="lacks InstanceType"):
        parse_spot_history(200, missing)


@pytest.mark.parametrize("status, code", [
    (401, "AuthFailure"), (400, "InvalidParameterValue"), (403, "UnauthorizedOperation"),
    (503, "Unavailable"),
])
def test_ec2_error_answers_are_loud_with_their_code(status, code):
    body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>{code}</Code>'
            f"<Message>AWS was not able to validate the provided access credentials</Message>"
            f"</Error></Errors><RequestID>0000-1111</RequestID></Response>").encode()
    with pytest.raises(ValueError, match=f"HTTP {status} {code}: AWS was not able"):
        parse_spot_history(status, body)


def test_keyed_crawl_replays_every_region_and_never_records_the_secret(
        replay_server, tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", FAKE_KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", FAKE_SECRET)
    log = tmp_path / "scrapy.log"
    offers, verdict = run_crawl("aws", replay_server.url, tmp_path, f"AWS_SPOT_START_TIME={START}",
                                "LOG_LEVEL=DEBUG", f"LOG_FILE={log}")
    assert verdict["passed"], verdict["failures"]
    spot_offers = [o for o in offers if o["offer_kind"] == "spot"]
    assert len(spot_offers) == 25 and len(offers) == 50
    ec2_fetches = [f for f in verdict["fetches"]
                   if "ec2." in f["url"] and not f["url"].endswith("/robots.txt")]
    assert len(ec2_fetches) == 16 and {f["status"] for f in ec2_fetches} == {200}
    assert {f["method"] for f in ec2_fetches} == {"POST"}
    assert all("Action=DescribeSpotPriceHistory" in f["request_body"] for f in ec2_fetches)
    assert not any("spot.json" in f["url"] for f in verdict["fetches"])
    assert "DescribeSpotPriceHistory" in log.read_text()
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".gz"]
    assert written and not any(FAKE_SECRET in p.read_text(errors="replace") for p in written)


# Real, dated DescribeSpotPriceHistory rows (AZ id, type, product, price, timestamp): GPU Linux
# rows of 2022-05-31 (18:00-24:00 UTC) in a public capture, ericpauley/aws-spot-price-history
# `prices/2022/05.tsv.zst`. It holds no p4d/p5 rows, so the test adds its p3.16xlarge (8x V100)
# to the spider's types.
ERICPAULEY_US_WEST_2 = [
    ("usw2-az1", "p3.16xlarge", "Linux/UNIX", "9.792600", "2022-05-31T21:19:21+00:00"),
    ("usw2-az2", "p3.16xlarge", "Linux/UNIX", "10.148100", "2022-05-31T19:19:46+00:00"),
    ("usw2-az3", "p3.16xlarge", "Linux/UNIX", "8.123400", "2022-05-31T23:52:33+00:00"),
    ("usw2-az1", "p3.2xlarge", "Linux/UNIX", "0.918000", "2022-05-31T23:58:39+00:00"),
]


def test_a_real_per_zone_capture_reduces_to_its_cheapest_zone(monkeypatch):
    from spiders.vendors import aws
    monkeypatch.setitem(aws.INSTANCES, "p3.16xlarge", ("V100 16GB SXM2", 8))
    items = "".join(
        f"<item><availabilityZone>us-west-2{'abc'[int(az[-1]) - 1]}</availabilityZone>"
        f"<availabilityZoneId>{az}</availabilityZoneId><instanceType>{itype}</instanceType>"
        f"<productDescription>{product}</productDescription><spotPrice>{price}</spotPrice>"
        f"<timestamp>{stamp.replace('+00:00', '.000Z')}</timestamp></item>"
        for az, itype, product, price, stamp in ERICPAULEY_US_WEST_2)
    body = ('<DescribeSpotPriceHistoryResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">'
            f"<requestId>r</requestId><spotPriceHistorySet>{items}</spotPriceHistorySet>"
            "<nextToken/></DescribeSpotPriceHistoryResponse>").encode()
    assert elements_unknown_to_model(body) == []
    response = TextResponse(url=EC2_URL.format("us-west-2"), body=body)
    keyed = AwsSpider(crawl_id="t")
    [offer] = keyed.parse_spot_history(response, "us-west-2", keyed._spot_start(), [])
    assert (offer["sku"], offer["region_text"], offer["price_amount"]) == (
        "p3.16xlarge", "us-west-2", "8.123400")     # p3.2xlarge is not one of the types
    assert offer["vendor_data"]["availability_zone_id"] == "usw2-az3"
    assert offer["vendor_data"]["timestamp"] == "2022-05-31T23:52:33+00:00"
    assert offer["vendor_data"]["zone_prices"] == {
        "usw2-az1": "9.792600", "usw2-az2": "10.148100", "usw2-az3": "8.123400"}


def _price_list(header: str, row: str) -> TextResponse:
    return TextResponse(url=f"{PRICE_LIST}/us-east-1/index.csv",
                        body=f'"FormatVersion","v1.0"\n{header}\n{row}\n'.encode())


def test_the_header_is_found_quoted_or_not():
    lines = file_response("aws", "ec2_us-east-1.csv").text.splitlines()
    header, p4d = lines[5], next(line for line in lines if "p4d.24xlarge" in line
                                 and '"OnDemand"' in line and '"Linux"' in line)
    quoted = list(spider.parse_on_demand(_price_list(header, p4d)))
    bare = list(spider.parse_on_demand(_price_list(header.replace('"', ""), p4d)))
    assert len(quoted) == 1 and [o["price_amount"] for o in bare] == [quoted[0]["price_amount"]]


@pytest.mark.parametrize("column", ["GPU Memory", "Region Code", "Storage", "MarketOption"])
def test_a_renamed_column_fails_loudly(column):
    lines = file_response("aws", "ec2_us-east-1.csv").text.splitlines()
    header = lines[5].replace(f'"{column}"', f'"{column} (renamed)"')
    with pytest.raises(ValueError, match=f"header lacks {re.escape(column)}"):
        list(spider.parse_on_demand(_price_list(header, lines[6])))


def test_the_snapshot_header_is_the_real_2025_09_12_header():
    """The 91 column names, in order, of the real header a third-party note quotes (publication
    20250912225308; code-search index file 14628621944): every recorded CSV carries it."""
    real = ("SKU,OfferTermCode,RateCode,TermType,PriceDescription,EffectiveDate,StartingRange,"
            "EndingRange,Unit,PricePerUnit,Currency,RelatedTo,LeaseContractLength,PurchaseOption,"
            "OfferingClass,Product Family,serviceCode,Location,Location Type,Instance Type,"
            "Current Generation,Instance Family,vCPU,Physical Processor,Clock Speed,Memory,"
            "Storage,Network Performance,Processor Architecture,Storage Media,Volume Type,"
            "Max Volume Size,Max IOPS/volume,Max IOPS Burst Performance,Max throughput/volume,"
            "Provisioned,Tenancy,EBS Optimized,Operating System,License Model,Group,"
            "Group Description,Transfer Type,From Location,From Location Type,To Location,"
            "To Location Type,usageType,operation,AvailabilityZone,CapacityStatus,"
            "ClassicNetworkingSupport,Dedicated EBS Throughput,ECU,Elastic Graphics Type,"
            "Enhanced Networking Supported,From Region Code,GPU,GPU Memory,Instance,"
            + ",".join(f"Instance Capacity - {size}" for size in (
                "10xlarge", "12xlarge", "16xlarge", "18xlarge", "24xlarge", "2xlarge", "32xlarge",
                "4xlarge", "8xlarge", "9xlarge", "large", "medium", "metal", "xlarge"))
            + ",instanceSKU,Intel AVX2 Available,Intel AVX Available,Intel Turbo Available,"
            "MarketOption,Normalization Size Factor,Physical Cores,Pre Installed S/W,"
            "Processor Features,Product Type,Region Code,Resource Type,serviceName,"
            "SnapshotArchiveFeeType,To Region Code,Volume API Name,VPCNetworkingSupport").split(",")
    assert len(real) == 91
    for name in csv_entries():
        header = file_response("aws", name).text.splitlines()[5]
        assert next(csv.reader([header])) == real, name
