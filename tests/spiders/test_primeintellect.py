"""Prime Intellect's availability API (an aggregator): the SDK's request, the SDK's response model
as the shape check, each offer under its own provider's vendor name, and the key."""

from __future__ import annotations

import asyncio
import copy
import json

import pytest
from prime_cli.api.availability import GPUAvailability
from scrapy.http import Request, TextResponse
from scrapy.utils.test import get_crawler

from pipelines.normalize import normalize_offer
from spiders.layout import SNAPSHOT_DIR
from spiders.registry import spider_class
from spiders.vendors.primeintellect import (
    CRAWLED_PROVIDERS,
    PrimeintellectSpider,
    ShapeError,
    checked_page,
    page_url,
    provider_vendor,
)
from spiders.vendors.runpod import RunpodSpider
from tests.helpers.responses import file_response, snapshot_entries

FILE = "availability_gpus_page1.json"
FAKE_KEY = "pit_fake_key_for_tests"


@pytest.fixture
def keyed(monkeypatch):
    monkeypatch.setenv("PRIME_API_KEY", FAKE_KEY)


def spider() -> PrimeintellectSpider:
    return PrimeintellectSpider.from_crawler(get_crawler(PrimeintellectSpider), crawl_id="test")


def body() -> dict:
    return json.loads((SNAPSHOT_DIR / "primeintellect" / FILE).read_bytes())


def response(data: dict, page: int = 1) -> TextResponse:
    url = page_url(page)
    return TextResponse(url=url, body=json.dumps(data).encode(), encoding="utf-8",
                        request=Request(url))


def parsed(s: PrimeintellectSpider, resp) -> tuple[list, list]:
    out = list(s.parse(resp))
    requests = [o for o in out if isinstance(o, Request)]
    return [o for o in out if not isinstance(o, Request)], requests


def test_without_the_key_it_is_skipped_with_a_clear_line(monkeypatch):
    monkeypatch.delenv("PRIME_API_KEY", raising=False)
    assert PrimeintellectSpider.missing_key() == (
        "skipped: primeintellect needs an API key in the environment variable PRIME_API_KEY")
    assert PrimeintellectSpider.path_note().startswith("PRIME_API_KEY not set: skipped")


def test_with_the_key_it_asks_as_the_sdk_does_and_never_puts_the_key_in_the_url(keyed):
    assert PrimeintellectSpider.missing_key() is None
    s = spider()

    async def first():
        return [r async for r in s.start()]
    (request,) = asyncio.run(first())
    assert request.method == "GET"
    assert request.url == ("https://api.primeintellect.ai/api/v1/availability/gpus"
                           "?page=1&page_size=100")
    assert request.headers["Authorization"] == f"Bearer {FAKE_KEY}".encode()
    assert request.headers["User-Agent"].startswith(b"prime-cli/")
    assert FAKE_KEY not in request.url
    assert [e["url"] for e in snapshot_entries("primeintellect")] == [request.url]


def test_every_recorded_body_passes_the_sdk_model():
    items, total = checked_page(body())
    assert total == len(items) == len(body()["items"]) and items
    assert all(isinstance(i, GPUAvailability) for i in items)
    for raw in body()["items"]:       # the SDK's own model, unchanged, accepts every item
        GPUAvailability.model_validate(raw)


@pytest.mark.parametrize("change, message", [
    (lambda b: b["items"][0].__setitem__("gpu_Count", b["items"][0].pop("gpuCount")),
     "does not model: ['gpu_Count']"),                         # a renamed field
    (lambda b: b["items"][1]["prices"].__setitem__("ondemand",
                                                     b["items"][1]["prices"].pop("onDemand")),
     "does not model: ['prices.ondemand']"),                   # renamed inside a nested model
    (lambda b: b["items"][2].pop("stockStatus"), "is not a GPUAvailability"),   # missing
    (lambda b: b["items"][2]["vcpu"].pop("step"), "is not a GPUAvailability"),  # nested missing
    (lambda b: b.__setitem__("nextCursor", "x"), "not read in the page: ['nextCursor']"),
    (lambda b: b.pop("totalCount"), "no items/totalCount"),
])
def test_a_body_the_sdk_does_not_describe_fails(change, message):
    changed = copy.deepcopy(body())
    change(changed)
    with pytest.raises(ShapeError, match=message.replace("[", r"\[").replace("]", r"\]")):
        checked_page(changed)


def test_an_error_sent_with_http_200_fails_the_page_naming_it(keyed):
    with pytest.raises(ShapeError, match=r"no items/totalCount.*API key unauthorized"):
        parsed(spider(), response({"detail": "API key unauthorized"}))


def test_an_empty_list_yields_nothing_and_asks_no_more():
    assert parsed(spider(), response({"items": [], "totalCount": 0})) == ([], [])


def test_pages_follow_total_count_as_the_sdk_does():
    one = body()["items"][0]
    offers, more = parsed(spider(), response({"items": [one] * 100, "totalCount": 150}))
    assert len(offers) == 100 and [r.url for r in more] == [page_url(2)]
    offers, more = parsed(spider(), response({"items": [one] * 50, "totalCount": 150}, page=2))
    assert len(offers) == 50 and more == []


@pytest.mark.parametrize("provider, vendor, kind", [
    ("runpod", "RunPod", "gpu_cloud"),
    ("lambdalabs", "Lambda", "gpu_cloud"),
    ("vultr", "Vultr", "gpu_cloud"),
    ("vastai", "vast.ai", "marketplace"),
    ("aws", "Amazon Web Services", "hyperscaler"),
    ("hyperstack", "Hyperstack", "gpu_cloud"),        # not crawled directly: a clean name
    ("datacrunch", "DataCrunch", "gpu_cloud"),
    ("tensordock", "TensorDock", "marketplace"),
])
def test_each_provider_keeps_its_vendor_name(provider, vendor, kind):
    assert provider_vendor(provider) == (vendor, kind)


def test_a_crawled_provider_carries_its_own_spiders_vendor_string():
    for provider, source in CRAWLED_PROVIDERS.items():
        direct = spider_class(source)
        assert provider_vendor(provider) == (direct.vendor, direct.vendor_kind), provider


def test_an_unknown_provider_keeps_a_clean_name_and_is_counted():
    s = spider()
    item = {**body()["items"][5], "provider": "new_cloud"}
    (offer,), _ = parsed(s, response({"items": [item], "totalCount": 1}))
    assert offer["vendor"] == "New Cloud"
    assert s.crawler.stats.get_value("primeintellect/unnamed_providers") == 1


@pytest.fixture(scope="module")
def offers() -> list:
    return parsed(spider(), file_response("primeintellect", FILE))[0]


def test_the_recorded_page_as_offers(offers):
    rows = [normalize_offer(dict(o)) for o in offers]
    got = [(r["vendor"], r["gpu_model"], r["gpu_variant"], r["gpu_count"], r["offer_kind"],
            r["country"], float(r["price_amount"]), r["available"]) for r in rows]
    assert got == [
        ("RunPod", "H100-80GB", "SXM", 1, "on_demand", "US", 3.49, True),
        ("RunPod", "A100-80GB", "SXM", 1, "on_demand", "US", 1.59, True),
        ("RunPod", "RTX4090-24GB", "PCIe", 1, "on_demand", "US", 0.34, True),   # communityPrice
        ("Lambda", "H100-80GB", "SXM", 1, "on_demand", "US", 4.29, True),
        ("Lambda", "H100-80GB", "SXM", 8, "on_demand", "US", 31.92, True),     # whole instance
        ("Hyperstack", "H100-80GB", "PCIe", 1, "on_demand", "CA", 1.9, True),
        ("Hyperstack", "A100-80GB", "PCIe", 8, "spot", "NO", 6.4, True),       # isSpot
        ("DataCrunch", "H100-80GB", "SXM", 1, "on_demand", "FI", 2.19, False),  # Unavailable
    ]   # the prepaid DataCrunch item is not read
    assert {(r["source"], r["reaches_via"]) for r in rows} == {("primeintellect", "aggregator")}
    assert float(rows[4]["price_per_gpu_hour_usd"]) == pytest.approx(31.92 / 8, rel=1e-4)
    assert len({r["offer_id"] for r in rows}) == len(rows)


def test_the_aggregators_runpod_offer_is_another_offer_id_than_runpods_own(offers):
    runpod = RunpodSpider.from_crawler(get_crawler(RunpodSpider), crawl_id="test")
    own = next(row for row in (normalize_offer(dict(o)) for o in runpod.parse(
        file_response("runpod", "prices_secure_US-TX-3.json"), place="US-TX-3", secure=True)
        if not isinstance(o, Request))
        if row["offer_kind"] == "on_demand" and row["gpu_model"] == "H100-80GB")
    theirs = normalize_offer(dict(offers[0]))
    like_for_like = ("vendor", "gpu_model", "gpu_variant", "gpu_count", "gpu_fraction",
                     "offer_kind", "billing_period", "country", "price_amount")
    assert {k: own[k] for k in like_for_like} == {k: theirs[k] for k in like_for_like}
    assert (own["source"], own["reaches_via"]) == ("runpod", "direct")
    assert own["offer_id"] != theirs["offer_id"]


def test_a_direct_spider_cannot_name_another_vendor():
    runpod = RunpodSpider.from_crawler(get_crawler(RunpodSpider), crawl_id="test")
    with pytest.raises(ValueError, match="direct source"):
        runpod.offer(file_response("primeintellect", FILE), vendor="Other", sku="x")
    assert "reaches_via" not in runpod.offer(file_response("runpod", "places.json"), sku="x")


def test_without_the_key_the_crawl_is_skipped_not_failed(tmp_path, monkeypatch):
    from pipelines.resources import CrawlerResource

    monkeypatch.delenv("PRIME_API_KEY", raising=False)
    # opted in: the snapshot's prices are illustrative (an opt-in fixture); the key path is tested
    result = CrawlerResource(data_dir=str(tmp_path), opt_in=["primeintellect"]).crawl(
        "primeintellect", "c1")
    assert result.skipped and result.status == "skipped" and not result.passed
    assert result.failures == ["skipped: primeintellect needs an API key in the environment "
                               "variable PRIME_API_KEY"]


def test_with_a_key_the_replayed_crawl_reads_the_page_and_archives_no_key(
        replay_server, tmp_path, monkeypatch):
    from tests.helpers.crawl import run_crawl

    monkeypatch.setenv("PRIME_API_KEY", FAKE_KEY)
    got, verdict = run_crawl("primeintellect", replay_server.url, tmp_path)
    assert verdict["passed"], verdict["failures"]
    assert [(o["vendor"], o["reaches_via"]) for o in got][:2] == [("RunPod", "aggregator")] * 2
    assert len(got) == 8
    api = [f for f in verdict["fetches"] if not f["url"].endswith("/robots.txt")]
    assert [(f["url"], f["status"]) for f in api] == [(page_url(1), 200)]
    for path in (tmp_path / "raw").rglob("*"):
        if path.is_file():
            assert FAKE_KEY.encode() not in path.read_bytes(), path
