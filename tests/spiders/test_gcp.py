"""Google Cloud: the keyless GPU pricing page (default) and the keyed Cloud Billing Catalog API.

The page (its markup a guess, said so in path_note and the manifest) holds an NVIDIA T4 table (3
offers, normalized as T4-16GB cards) and a 'Not available' spot cell (skipped). The API pages
hold a T4 and an H100 Mega SKU (both kept: every GPU is), the A100 80GB in its real "Nvidia Tesla
A100 80GB GPU ..." and "... attached to Spot Preemptible VMs ..." forms, a commitment, a DWS and
a CPU SKU (skipped, counted). Prices are per GPU, GPU only (the host VM is billed on top)."""

import asyncio
import json
from decimal import Decimal

import pytest
from scrapy.http import HtmlResponse, TextResponse
from scrapy.utils.test import get_crawler

from pipelines.normalize import Quarantined, normalize_offer
from spiders.vendors.gcp import API_URL, PAGE_URL, GcpSpider
from tests.helpers.crawl import run_crawl
from tests.helpers.responses import file_response

PAGE2_TOKEN = "CkYKJAoYc2t1cy8yQzU0LTc2RDAtNUM5RRAA"  # a page token from the snapshot: not a secret
crawler = get_crawler(GcpSpider)
spider = GcpSpider.from_crawler(crawler, crawl_id="test")


@pytest.fixture(scope="module")
def page():
    return file_response("gcp", "gpus_pricing.html")


@pytest.fixture(scope="module")
def page_offers() -> list[dict]:
    """The offers of the recorded pricing page."""
    return list(spider.parse(file_response("gcp", "gpus_pricing.html")))


@pytest.fixture(scope="module")
def tracked(page_offers) -> list[dict]:
    return [o for o in page_offers if "T4" not in o["gpu_text"]]


@pytest.fixture(scope="module")
def api_output() -> list:
    """What the spider yields for the two recorded API pages (offers, the next-page request)."""
    return [x for f in ("billing_skus_page1.json", "billing_skus_page2.json")
            for x in spider.parse_skus(file_response("gcp", f))]


@pytest.fixture(scope="module")
def api_offers(api_output) -> list[dict]:
    return [x for x in api_output if not hasattr(x, "callback")]


@pytest.fixture(scope="module")
def api_next(api_output) -> list:
    return [x for x in api_output if hasattr(x, "callback")]


def price(offers, gpu, region, kind):
    offer = next(o for o in offers if gpu in o["gpu_text"] and o["region_text"] == region
                 and o["offer_kind"] == kind)
    return Decimal(offer["price_amount"]) if offer.get("price_amount") else offer["price_text"]


async def _collect(agen):
    return [r async for r in agen]


def test_without_key_reads_the_public_page(monkeypatch):
    monkeypatch.delenv("GCP_API_KEY", raising=False)
    [request] = asyncio.run(_collect(GcpSpider(crawl_id="t").start()))
    assert request.url == PAGE_URL and request.callback.__name__ == "parse"


def test_the_public_page_is_rendered_in_chromium_waiting_for_its_table_rows(monkeypatch, page):
    monkeypatch.delenv("GCP_API_KEY", raising=False)
    fresh = GcpSpider.from_crawler(get_crawler(GcpSpider), crawl_id="t")
    [request] = asyncio.run(_collect(fresh.start()))
    assert GcpSpider.render_js and request.meta["playwright"] is True
    [method] = request.meta["playwright_page_methods"]
    assert (method.method, method.args) == ("wait_for_selector", (GcpSpider.wait_for,))
    # the selector waited for is a row of the tables parse reads: every recorded row matches it
    rows = page.css(GcpSpider.wait_for)
    assert len(rows) == len(page.css(f"{GcpSpider.tables} {GcpSpider.rows}")) == 36
    assert GcpSpider.describe_fetch() == "Chromium + HTML table"


def test_with_key_calls_the_catalog_api_and_keeps_the_key_out_of_the_url(monkeypatch):
    monkeypatch.setenv("GCP_API_KEY", "k-123")
    [request] = asyncio.run(_collect(GcpSpider(crawl_id="t").start()))
    assert request.url == API_URL and request.callback.__name__ == "parse_skus"
    assert request.headers["X-Goog-Api-Key"] == b"k-123"
    assert "k-123" not in request.url


def test_the_keyed_api_is_plain_http_every_page_of_it(monkeypatch):
    # JSON has no page to render: neither the first request nor the page-token one is Chromium's
    monkeypatch.setenv("GCP_API_KEY", "k-123")
    keyed = GcpSpider.from_crawler(get_crawler(GcpSpider), crawl_id="t")
    [first] = asyncio.run(_collect(keyed.start()))
    [following] = [x for x in keyed.parse_skus(file_response("gcp", "billing_skus_page1.json"))
                   if hasattr(x, "callback")]
    for request in (first, following):
        assert "playwright" not in request.meta and "playwright_page_methods" not in request.meta
    assert GcpSpider.render_js   # the class still renders the page path: only this crawl did not


def test_first_page_offer_fields(page_offers):
    first = page_offers[0]
    assert first["sku"] == first["gpu_text"] == "NVIDIA A100 40GB"
    assert first["gpu_count"] == 1
    assert first["region_text"] == "asia-northeast1"
    assert first["offer_kind"] == "on_demand"
    assert first["price_text"] == "$1.70586"
    assert first["billing_period"] == "hour"
    assert first["vendor_data"] == {"location": "Tokyo"}
    assert first["url"] == PAGE_URL


@pytest.mark.parametrize("gpu,region,kind,expected", [
    ("A100 40GB", "us-central1", "on_demand", "$2.93391"),
    ("A100 40GB", "us-central1", "spot", "$1.4341"),
    ("A100 40GB", "me-west1", "on_demand", "$3.2273"),
    ("A100 80GB", "us-east5", "on_demand", "$4.4242"),
    ("H100 80GB", "us-central1", "on_demand", "$4.20076"),
    ("H100 80GB", "europe-west4", "on_demand", "$12.73552"),
    ("H100 80GB", "asia-south2", "spot", "$2.6909"),
])
def test_page_prices_are_the_reference_gpu_only_values(gpu, region, kind, expected, page_offers):
    assert price(page_offers, gpu, region, kind) == expected


def test_spot_above_on_demand_anomaly_is_kept(tracked):
    # Real catalog anomaly: A100 80GB spot costs more than on-demand in us-central1 and
    # europe-west4. Normalization must not hide it.
    rows = {o["offer_kind"]: normalize_offer(dict(o)) for o in tracked
            if o["gpu_text"] == "NVIDIA A100 80GB" and o["region_text"] == "us-central1"}
    assert rows["on_demand"]["price_amount"] == Decimal("1.8462")
    assert rows["spot"]["price_amount"] == Decimal("1.964")
    assert rows["spot"]["price_per_gpu_hour_usd"] > rows["on_demand"]["price_per_gpu_hour_usd"]


def test_regions_per_model(tracked):
    regions = {g: {o["region_text"] for o in tracked if o["gpu_text"] == g}
               for g in ("NVIDIA A100 40GB", "NVIDIA A100 80GB", "NVIDIA H100 80GB")}
    assert {g: len(r) for g, r in regions.items()} == {
        "NVIDIA A100 40GB": 10, "NVIDIA A100 80GB": 5, "NVIDIA H100 80GB": 19}
    assert regions["NVIDIA A100 80GB"] == {"us-central1", "us-east4", "us-east5", "europe-west4",
                                           "asia-southeast1"}


def test_not_available_spot_cell_is_skipped_and_t4_card_kept(page_offers):
    t4 = [o for o in page_offers if o["gpu_text"] == "NVIDIA T4"]
    assert sorted((o["region_text"], o["offer_kind"]) for o in t4) == [
        ("asia-east2", "on_demand"), ("us-central1", "on_demand"), ("us-central1", "spot")]
    assert {normalize_offer(dict(offer))["gpu_model"] for offer in t4} == {"T4-16GB"}


def test_changed_page_layout_is_loud(page):
    html = page.text.replace("Spot price per GPU (USD per hour)", "Spot VM price")
    changed = HtmlResponse(url=PAGE_URL, body=html.encode(), encoding="utf-8")
    with pytest.raises(ValueError, match=r"gcp: table headers \['Spot price per GPU"):
        list(spider.parse(changed))
    empty = HtmlResponse(url=PAGE_URL, body=b"<html><body>Moved</body></html>", encoding="utf-8")
    with pytest.raises(ValueError, match="no GPU price tables"):
        list(spider.parse(empty))


def test_every_tracked_page_offer_is_one_whole_card_an_hour_in_dollars(tracked):
    for offer in tracked:
        assert offer["price_text"].startswith("$")
        assert offer["gpu_count"] == 1 and offer["billing_period"] == "hour"
        row = normalize_offer(dict(offer))
        assert row["gpu_model"] in ("A100-40GB", "A100-80GB", "H100-80GB")
        assert row["currency"] == "USD" and row["gpu_fraction"] == 1


def test_page_offer_counts(page_offers, tracked):
    assert len(page_offers) == 71 and len(tracked) == 68


# --- keyed path: Cloud Billing Catalog API ---

def test_api_follows_next_page_token_and_stops_on_the_last_page(api_next):
    assert [r.url for r in api_next] == [f"{API_URL}?pageToken={PAGE2_TOKEN}"]
    assert api_next[0].callback.__name__ == "parse_skus"


def test_api_offer_fields(api_offers):
    first = api_offers[0]
    assert first["sku"] == "039F-D0DA-4055"
    assert first["gpu_text"] == "Nvidia Tesla A100 GPU running in Americas"
    assert first["region_text"] == "us-central1"
    assert first["offer_kind"] == "on_demand"
    assert first["price_amount"] == "2.93391"   # units "2" + nanos 933910000
    assert first["currency"] == "USD" and first["billing_period"] == "hour"
    assert first["vendor_data"]["usageType"] == "OnDemand"


def test_api_keeps_every_gpu_and_skips_commitments_and_cpu_skus_counted(api_offers):
    descriptions = {o["vendor_data"]["description"] for o in api_offers}
    assert not any(w in d for d in descriptions for w in ("Commitment", "Core", "DWS"))
    assert {o["vendor_data"]["usageType"] for o in api_offers} == {"OnDemand", "Preemptible"}
    models = {(normalize_offer(dict(o))["gpu_model"], o["vendor_data"]["description"])
              for o in api_offers if "T4" in o["gpu_text"] or "Mega" in o["gpu_text"]}
    assert models == {("T4-16GB", "Nvidia Tesla T4 GPU running in Americas"),
                      ("H100-80GB", "Nvidia H100 80GB Mega GPU running in Americas")}
    assert crawler.stats.get_value("gcp/non_gpu_skus_skipped") == 1        # the N2 core
    # the commitment and the DWS Defined Duration H100 (usageType OnDemand, so only its words
    # tell it apart from the plain on-demand H100)
    assert crawler.stats.get_value("gcp/gpu_skus_other_pricing") == 2


def _sku(description: str, usage: str = "OnDemand", group: str = "GPU", unit: str = "h") -> dict:
    return {"skuId": "X", "description": description,
            "category": {"resourceFamily": "Compute", "resourceGroup": group, "usageType": usage},
            "serviceRegions": ["us-central1"],
            "pricingInfo": [{"pricingExpression": {"usageUnit": unit, "tieredRates": [
                {"unitPrice": {"currencyCode": "USD", "units": "5", "nanos": 0}}]}}]}


@pytest.mark.parametrize("sku, kept", [
    (_sku("Nvidia H200 141GB GPU running in Americas"), True),
    (_sku("Nvidia H100 80GB GPU attached to DWS Defined Duration VMs running in Americas"), False),
    (_sku("Nvidia H100 Mega 80GB GPU attached to DWS Defined Duration VMs running in Americas"),
     False),
    (_sku("DWS Calendar Mode Nvidia H100 80GB GPU running in Americas"), False),
    (_sku("Reserved Nvidia H100 80GB Mega GPU in Americas in Calendar Mode"), False),
    (_sku("Commitment v1: Nvidia L4 GPU in Frankfurt for 1 Year", usage="OnDemand"), False),
    (_sku("Nvidia Tesla A100 80GB GPU running in Americas"), True),
    (_sku("Nvidia B200 (1 gpu slice) running in Americas"), True),
    (_sku("Nvidia Tesla P100 GPU running in Americas"), True),   # an N1-attached card
    (_sku("Nvidia Tesla T4 Virtual Workstation GPU running in Americas"), False),  # licence
    (_sku("Reserved Nvidia H100 80GB GPU in Americas"), False),
    (_sku("Nvidia L4 GPU running in Americas", usage="Commit1Yr"), False),
    (_sku("Nvidia L4 GPU running in Americas", unit="mo"), False),
])
def test_api_keeps_plain_gpu_hours_of_any_card(sku, kept):
    fresh = GcpSpider.from_crawler(get_crawler(GcpSpider), crawl_id="test")
    response = TextResponse(url=API_URL, body=json.dumps({"skus": [sku]}).encode(),
                            headers={"Content-Type": "application/json"})
    offers = list(fresh.parse_skus(response))
    assert len(offers) == (1 if kept else 0)
    assert fresh.crawler.stats.get_value("gcp/gpu_skus_other_pricing", 0) == (0 if kept else 1)


@pytest.mark.parametrize("description, usage, kind, model", [
    # the real description forms (docs/sources.md, gcp): each reaches normalization as its card
    ("Nvidia Tesla A100 GPU running in Americas", "OnDemand", "on_demand", "A100-40GB"),
    ("Nvidia Tesla A100 80GB GPU running in Americas", "OnDemand", "on_demand", "A100-80GB"),
    ("Nvidia A100 80GB GPU running in Americas", "OnDemand", "on_demand", "A100-80GB"),
    ("Spot Preemptible Nvidia Tesla A100 80GB GPU running in Americas", "Preemptible", "spot",
     "A100-80GB"),
    ("Nvidia Tesla A100 80GB GPU attached to Spot Preemptible VMs running in Americas",
     "Preemptible", "spot", "A100-80GB"),
    ("Nvidia H100 80GB GPU running in Americas", "OnDemand", "on_demand", "H100-80GB"),
    ("Nvidia H100 80GB Mega GPU attached to Spot Preemptible VMs running in Tokyo",
     "Preemptible", "spot", "H100-80GB"),
    ("Nvidia H100 80GB Plus GPU running in Americas", "OnDemand", "on_demand", "H100-80GB"),
    ("Nvidia H200 141GB GPU running in Americas", "OnDemand", "on_demand", "H200-141GB"),
    ("A4 Nvidia B200 (1 gpu slice) running in Americas", "OnDemand", "on_demand", "B200-180GB"),
])
def test_api_description_forms_reach_their_card(description, usage, kind, model):
    response = TextResponse(url=API_URL, body=json.dumps({"skus": [_sku(description, usage)]})
                            .encode(), headers={"Content-Type": "application/json"})
    [offer] = spider.parse_skus(response)
    assert offer["offer_kind"] == kind
    assert normalize_offer(dict(offer))["gpu_model"] == model


def test_path_texts_say_the_page_markup_is_a_guess(monkeypatch):
    monkeypatch.delenv("GCP_API_KEY", raising=False)
    assert "markup a guess" in GcpSpider.public_path
    assert GcpSpider.path_note() == f"GCP_API_KEY not set: public path, {GcpSpider.public_path}"
    monkeypatch.setenv("GCP_API_KEY", "k-123")
    assert GcpSpider.path_note() == f"keys set: {GcpSpider.keyed_path}"
    assert "Cloud Billing Catalog API" in GcpSpider.keyed_path


def test_api_b200_and_unknown_card_reach_normalization():
    fresh = GcpSpider.from_crawler(get_crawler(GcpSpider), crawl_id="test")
    body = {"skus": [_sku("Nvidia B200 (1 gpu slice) running in Americas"),
                     _sku("Nvidia Tesla M40 GPU running in Americas")]}
    b200, m40 = fresh.parse_skus(TextResponse(url=API_URL, body=json.dumps(body).encode(),
                                               headers={"Content-Type": "application/json"}))
    row = normalize_offer(dict(b200))
    assert (row["gpu_model"], row["gpu_count"], row["gpu_fraction"]) == ("B200-180GB", 1, 1)
    with pytest.raises(Quarantined, match="unknown GPU model") as caught:
        normalize_offer(dict(m40))   # a card the catalog does not hold
    assert caught.value.stage == "card"


def test_api_price_without_units_field():
    # proto3 JSON omits zero fields: a price below 1 USD has no "units".
    body = {"skus": [{"skuId": "X", "description": "Nvidia Tesla A100 GPU running in Iowa",
                      "category": {"resourceFamily": "Compute", "resourceGroup": "GPU",
                                   "usageType": "Preemptible"},
                      "serviceRegions": ["us-central1"],
                      "pricingInfo": [{"pricingExpression": {"usageUnit": "h", "tieredRates": [
                          {"unitPrice": {"currencyCode": "USD", "nanos": 964000000}}]}}]}]}
    response = TextResponse(url=API_URL, body=json.dumps(body).encode(),
                            headers={"Content-Type": "application/json"})
    [offer] = spider.parse_skus(response)
    assert offer["price_amount"] == "0.964" and offer["offer_kind"] == "spot"


def test_api_and_page_agree_on_prices(page_offers, api_offers):
    for gpu_api, gpu_page in (("Tesla A100 GPU", "A100 40GB"), ("A100 80GB GPU", "A100 80GB"),
                              ("H100 80GB GPU", "H100 80GB")):   # not the "H100 80GB Mega GPU"
        for kind in ("on_demand", "spot"):
            assert f"${price(api_offers, gpu_api, 'us-central1', kind)}" == \
                price(page_offers, gpu_page, "us-central1", kind)


def test_every_api_offer_is_a_tracked_card_of_its_usage_type(api_offers):
    for offer in api_offers:
        row = normalize_offer(dict(offer))
        assert row["gpu_model"] in ("A100-40GB", "A100-80GB", "H100-80GB", "T4-16GB")
        preemptible = offer["vendor_data"]["usageType"] == "Preemptible"
        assert offer["offer_kind"] == ("spot" if preemptible else "on_demand")


def test_api_offer_count(api_offers):
    # A100 40GB, A100 80GB, H100 80GB on-demand and spot: 14; T4 (3 regions) and H100 Mega: 4
    assert len(api_offers) == 14 + 4


def test_keyed_crawl_pages_the_api_and_never_records_the_key(replay_server, tmp_path, monkeypatch):
    key = "AIzaTEST-never-log-me"
    monkeypatch.setenv("GCP_API_KEY", key)
    log = tmp_path / "scrapy.log"
    offers, verdict = run_crawl("gcp", replay_server.url, tmp_path,
                                "LOG_LEVEL=DEBUG", f"LOG_FILE={log}")
    assert verdict["passed"], verdict["failures"]
    assert len(offers) == 18
    assert [f["url"] for f in verdict["fetches"] if "/skus" in f["url"]] == [
        API_URL, f"{API_URL}?pageToken={PAGE2_TOKEN}"]
    assert "cloudbilling" in log.read_text()
    assert "Launching browser" not in log.read_text()   # the keyed crawl never started Chromium
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".gz"]
    assert written and not any(key in p.read_text(errors="replace") for p in written)


def test_keyless_crawl_renders_the_page_in_chromium(replay_server, tmp_path, monkeypatch,
                                                   page_offers):
    monkeypatch.delenv("GCP_API_KEY", raising=False)
    log = tmp_path / "scrapy.log"
    offers, verdict = run_crawl("gcp", replay_server.url, tmp_path, f"LOG_FILE={log}")
    assert verdict["passed"], verdict["failures"]
    assert "Browser chromium launched" in log.read_text()
    # the rendered DOM gives exactly the offers of the recorded markup
    def fields(o):
        return (o["sku"], o["region_text"], o["offer_kind"], o["price_text"], o["billing_period"])

    assert sorted(map(fields, offers)) == sorted(map(fields, page_offers))
    fetched = [f["url"] for f in verdict["fetches"]]
    assert [u for u in fetched if not u.endswith("/robots.txt")] == [PAGE_URL]   # no XHR of it
