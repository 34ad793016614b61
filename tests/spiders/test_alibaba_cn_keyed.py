"""Alibaba Cloud's keyed path: DescribeInstanceTypes (paged) then DescribePrice, built from the
SDK's request models, signed by the SDK's signer exactly as the SDK's own client signs them, sent by
Scrapy over the replay server with fake keys, read through the SDK's response models. The secret
never reaches a URL, a body, the raw archive or an offer."""

import asyncio
import contextlib
import json
from unittest import mock

import alibabacloud_tea_openapi.client as openapi_client
import pytest
from alibabacloud_ecs20140526 import models as ecs
from alibabacloud_ecs20140526.client import Client
from alibabacloud_tea_openapi import utils_models
from darabonba.runtime import RuntimeOptions
from scrapy.http import Request, TextResponse
from scrapy.utils.test import get_crawler

from pipelines.normalize import normalize_offer
from spiders.vendors.alibaba_cn import REGIONS, AlibabaCNSpider
from spiders.vendors.alibaba_cn_openapi import OpenApiError, endpoint, signed_request
from tests.helpers.crawl import run_crawl
from tests.helpers.responses import snapshot_entries

FAKE_ID, FAKE_SECRET = "LTAI-fake-key-id-0000", "fake-secret-must-never-leak-9f3b"  # not a secret
NONCE, DATE = "0f1e2d3c4b5a69788796a5b4c3d2e1f0", "2026-11-30T09:00:00Z"


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", FAKE_ID)
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", FAKE_SECRET)


class NoNetwork(Exception):
    pass


def sdk_request(call, request):
    """The request the SDK's own client builds for `call`, with the nonce and date pinned."""
    seen = []

    def capture(dara_request, runtime):
        seen.append(dara_request)
        raise NoNetwork

    client = Client(utils_models.Config(access_key_id=FAKE_ID, access_key_secret=FAKE_SECRET,
                                        region_id="cn-beijing"))
    with mock.patch.object(openapi_client.Utils, "get_nonce", return_value=NONCE), \
            mock.patch.object(openapi_client.Utils, "get_timestamp", return_value=DATE), \
            mock.patch.object(openapi_client.DaraCore, "do_action", side_effect=capture), \
            contextlib.suppress(Exception):   # the SDK wraps the stop in its own exception
        getattr(client, call)(request, RuntimeOptions(autoretry=False))
    assert seen, "the SDK sent nothing"
    return seen[0]


@pytest.mark.parametrize(("call", "action", "request_model"), [
    ("describe_price_with_options", "DescribePrice",
     ecs.DescribePriceRequest(region_id="cn-beijing", resource_type="instance",
                              instance_type="ecs.gn7i-c8g1.2xlarge", price_unit="Month", period=1)),
    ("describe_instance_types_with_options", "DescribeInstanceTypes",
     ecs.DescribeInstanceTypesRequest(minimum_gpuamount=1, max_results=100, next_token="tok")),
])
def test_signature_equals_the_sdks_own(call, action, request_model):
    sdk = sdk_request(call, request_model)
    ours = signed_request(action, request_model, "cn-beijing", FAKE_ID, FAKE_SECRET,
                          nonce=NONCE, date=DATE)
    assert ours.headers == sdk.headers          # Authorization included: same signature
    assert (sdk.method, sdk.pathname, sdk.body) == ("POST", "/", None)
    assert ours.url == (f"https://{sdk.headers['host']}/?"
                        + "&".join(f"{k}={v}" for k, v in sorted(sdk.query.items())))


def test_signature_depends_on_the_secret_and_the_nonce():
    req = AlibabaCNSpider.price_request("cn-beijing", "ecs.gn7i-c8g1.2xlarge", "Hour")
    base = signed_request("DescribePrice", req, "cn-beijing", FAKE_ID, FAKE_SECRET,
                          nonce=NONCE, date=DATE)
    again = signed_request("DescribePrice", req, "cn-beijing", FAKE_ID, FAKE_SECRET,
                           nonce=NONCE, date=DATE)
    other_secret = signed_request("DescribePrice", req, "cn-beijing", FAKE_ID, "x", nonce=NONCE,
                                  date=DATE)
    other_nonce = signed_request("DescribePrice", req, "cn-beijing", FAKE_ID, FAKE_SECRET)
    assert base == again
    assert base.headers["Authorization"] != other_secret.headers["Authorization"]
    assert base.headers["Authorization"] != other_nonce.headers["Authorization"]
    # the URL replay matches does not move with the nonce, the date or the keys
    assert base.url == other_secret.url == other_nonce.url
    assert FAKE_SECRET not in base.url and FAKE_SECRET not in json.dumps(base.headers)


@pytest.mark.parametrize(("region", "host"), [
    ("cn-beijing", "ecs.cn-beijing.aliyuncs.com"), ("cn-hangzhou", "ecs-cn-hangzhou.aliyuncs.com"),
    ("cn-wulanchabu", "ecs.cn-wulanchabu.aliyuncs.com"),
])
def test_endpoint_is_the_sdks(region, host):
    assert endpoint(region) == host


def test_every_keyed_request_is_recorded(keys):
    urls = {e["url"] for e in snapshot_entries("alibaba_cn") if e["method"] == "POST"}
    pages = [AlibabaCNSpider.instance_types_request(t) for t in (None, "e71d8157-6830-4aa0-9c2b-"
                                                                 "4f1f0b3c5a7d")]
    wanted = {signed_request("DescribeInstanceTypes", p, REGIONS[0], "a", "b").url for p in pages}
    for region in REGIONS:
        for itype in ("ecs.gn6v-c8g1.2xlarge", "ecs.gn7e-c16g1.4xlarge", "ecs.gn7i-c8g1.2xlarge"):
            for unit in ("Hour", "Month"):
                wanted.add(signed_request("DescribePrice", AlibabaCNSpider.price_request(
                    region, itype, unit), region, "a", "b").url)
    assert urls == wanted and len(urls) == 38


def test_start_with_keys_is_a_signed_post(keys):
    spider = AlibabaCNSpider.from_crawler(get_crawler(AlibabaCNSpider), crawl_id="t")

    async def first():
        return [r async for r in spider.start()]
    [request] = asyncio.run(first())
    assert request.method == "POST" and request.body == b""
    assert request.url.startswith("https://ecs.cn-beijing.aliyuncs.com/?MaxResults=100")
    assert request.headers[b"x-acs-action"] == b"DescribeInstanceTypes"
    assert request.headers[b"Authorization"].startswith(
        f"ACS3-HMAC-SHA256 Credential={FAKE_ID},".encode())
    assert FAKE_SECRET.encode() not in request.url.encode() + request.body
    assert FAKE_SECRET not in json.dumps(dict(request.headers.to_unicode_dict()))


# ---- parsing, unhappy paths ----------------------------------------------------------------
def response(body, status=200, url="https://ecs.cn-beijing.aliyuncs.com/?X=1") -> TextResponse:
    return TextResponse(url=url, body=json.dumps(body).encode(), status=status, encoding="utf-8",
                        request=Request(url, method="POST"))


def spider_with_keys():
    return AlibabaCNSpider.from_crawler(get_crawler(AlibabaCNSpider), crawl_id="t")


A10 = ecs.DescribeInstanceTypesResponseBodyInstanceTypesInstanceType().from_map(
    {"InstanceTypeId": "ecs.gn7i-c8g1.2xlarge", "GPUAmount": 1, "GPUSpec": "NVIDIA A10",
     "CpuCoreCount": 8, "MemorySize": 30.0})


def test_instance_type_error_envelope_fails_the_crawl(keys):
    body = {"RequestId": "r", "Code": "InvalidAccessKeyId.NotFound", "Message": "not found"}
    with pytest.raises(OpenApiError, match=r"InvalidAccessKeyId\.NotFound"):
        list(spider_with_keys().parse_instance_types(response(body, 404),
                                                     "DescribeInstanceTypes"))


def test_instance_types_keep_gpu_types_and_follow_the_token(keys):
    body = {"RequestId": "r", "NextToken": "next", "InstanceTypes": {"InstanceType": [
        {"InstanceTypeId": "ecs.g7.large", "GPUAmount": 0},
        {"InstanceTypeId": "ecs.gn7i-c8g1.2xlarge", "GPUAmount": 1, "GPUSpec": "NVIDIA A10"}]}}
    [nxt] = list(spider_with_keys().parse_instance_types(response(body), "DescribeInstanceTypes"))
    assert "NextToken=next" in nxt.url
    assert list(nxt.cb_kwargs["found"]) == ["ecs.gn7i-c8g1.2xlarge"]
    last = {"RequestId": "r2", "NextToken": "", "InstanceTypes": {"InstanceType": []}}
    prices = list(spider_with_keys().parse_instance_types(
        response(last), "DescribeInstanceTypes", found=nxt.cb_kwargs["found"]))
    assert len(prices) == len(REGIONS) * 2
    assert all("InstanceType=ecs.gn7i-c8g1.2xlarge" in p.url for p in prices)


def test_empty_instance_type_list_asks_no_prices(keys):
    body = {"RequestId": "r", "NextToken": "", "InstanceTypes": {"InstanceType": []}}
    assert list(spider_with_keys().parse_instance_types(response(body),
                                                        "DescribeInstanceTypes")) == []


def test_price_error_is_one_price_less_and_counted(keys):
    spider = spider_with_keys()
    body = {"RequestId": "r", "Code": "InvalidInstanceType.ValueNotSupported", "Message": "no"}
    assert list(spider.parse_price(response(body, 400), "DescribePrice", region="cn-beijing",
                                   itype=A10, period="hour")) == []
    assert spider.crawler.stats.get_value("alibaba_cn/describe_price_errors") == 1


@pytest.mark.parametrize("body", [
    {"RequestId": "r"},
    {"RequestId": "r", "PriceInfo": {"Price": {"Currency": "CNY"}}},          # no TradePrice
    {"RequestId": "r", "PriceInfo": {"Price": {"TradePrice": 1.0}}},          # no Currency
    {"RequestId": "r", "PriceInfo": {"Price": {"Currency": "CNY", "tradePrice": 1.0}}},  # renamed
])
def test_price_without_trade_price_fails_loudly(keys, body):
    with pytest.raises(ValueError, match=r"without PriceInfo\.Price\.TradePrice"):
        list(spider_with_keys().parse_price(response(body), "DescribePrice", region="cn-beijing",
                                            itype=A10, period="hour"))


def test_price_offer_fields(keys):
    body = {"RequestId": "r", "PriceInfo": {"Price": {"Currency": "CNY", "OriginalPrice": 12.0,
                                                      "DiscountPrice": 0.19, "TradePrice": 11.81},
                                            "Rules": {"Rule": []}}}
    [offer] = spider_with_keys().parse_price(response(body), "DescribePrice",
                                             region="cn-beijing", itype=A10, period="hour")
    assert (offer["price_amount"], offer["list_price_amount"], offer["currency"]) == (
        "11.81", "12.0", "CNY")
    assert (offer["gpu_text"], offer["gpu_count"], offer["billing_period"]) == (
        "NVIDIA A10 24GB", "1", "hour")
    assert (offer["vcpus_text"], offer["memory_text"]) == ("8", "30 GiB")
    row = normalize_offer(offer)
    assert (row["gpu_model"], row["region_code"]) == ("A10-24GB", "cn-beijing")


# ---- the keyed crawl over the replay server ------------------------------------------------
@pytest.fixture(scope="module")
def keyed_crawl(replay_server, tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("alibaba_keyed")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", FAKE_ID)
        mp.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", FAKE_SECRET)
        offers, verdict = run_crawl("alibaba_cn", replay_server.url, data_dir)
    return offers, verdict, data_dir


def test_keyed_crawl_passes_its_monitor(keyed_crawl):
    offers, verdict, _ = keyed_crawl
    assert verdict["passed"], verdict["failures"]
    # 6 regions x 3 types x (Hour, Month), less gn6v in Zhangjiakou and Ulanqab (error envelopes)
    assert len(offers) == 6 * 3 * 2 - 4 == 32
    fetched = [f["url"] for f in verdict["fetches"] if not f["url"].endswith("/robots.txt")]
    assert len(fetched) == 2 + 36 and all(".aliyuncs.com/?" in u for u in fetched)


def test_keyed_offers_read_the_sdk_model(keyed_crawl):
    offers, _, _ = keyed_crawl
    beijing = {(o["sku"], o["billing_period"]): o for o in offers
               if o["region_text"] == "cn-beijing"}
    a100 = beijing[("ecs.gn7e-c16g1.4xlarge", "hour")]
    assert (a100["price_amount"], a100["currency"], a100["gpu_text"]) == (
        "34.74", "CNY", "NVIDIA A100 80GB")
    assert a100["vendor_data"]["GPUSpec"] == "NVIDIA A100"
    assert beijing[("ecs.gn7e-c16g1.4xlarge", "month")]["price_amount"] == "17498.5"
    assert not [o for o in offers if o["sku"] == "ecs.gn6v-c8g1.2xlarge"
                and o["region_text"] in ("cn-zhangjiakou", "cn-wulanchabu")]


def test_the_secret_is_nowhere(keyed_crawl):
    offers, verdict, data_dir = keyed_crawl
    assert FAKE_SECRET not in json.dumps(offers) + json.dumps(verdict)
    for path in data_dir.rglob("*"):
        if path.is_file():
            assert FAKE_SECRET.encode() not in path.read_bytes(), path
