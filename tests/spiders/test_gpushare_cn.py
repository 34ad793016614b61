"""恒源云 GPUSHARE: the market machine list JSON API behind a user token (GPUSHARE_TOKEN), parsed
from snapshot pages built on the public monitor scripts' shape, through normalization; paging by
data.total, offline and fully rented machines, error bodies, renamed fields, a missing token."""

import copy
import json
from decimal import Decimal

import pytest
from scrapy.http import Request, TextResponse

from pipelines.normalize import Quarantined, normalize_offer
from pipelines.resources import CrawlerResource
from spiders.layout import SNAPSHOT_DIR
from spiders.vendors.gpushare_cn import GpushareCNSpider, list_url
from tests.helpers.crawl import run_crawl
from tests.helpers.normalized import normalized
from tests.helpers.responses import file_response, json_response

PAGES = ("machine_list_pn1.json", "machine_list_pn2.json")
FAKE_TOKEN = "fake-gpushare-token-for-tests"  # not a secret: a test's fake token


def spider() -> GpushareCNSpider:
    return GpushareCNSpider(crawl_id="t")


def page(n: int) -> dict:
    return json.loads((SNAPSHOT_DIR / "gpushare_cn" / PAGES[n - 1]).read_text(encoding="utf-8"))


def response(body, n: int = 1) -> TextResponse:
    return json_response(list_url(n), body)


def parsed(n: int):
    return list(spider().parse(file_response("gpushare_cn", PAGES[n - 1]), page=n))


def offers(n: int) -> list[dict]:
    return [dict(o) for o in parsed(n) if not isinstance(o, Request)]


def test_the_request_is_the_scripts_query_with_bearer_token_and_store_origin(monkeypatch):
    monkeypatch.setenv("GPUSHARE_TOKEN", FAKE_TOKEN)
    request = spider().page_request(1)
    assert request.url == ("https://api.gpushare.com/app/api/market/machine/list"
                           "?models=-1&gpuName=&priceOrder=asc&pn=1&ps=50")
    assert request.method == "GET"
    assert request.headers["Authorization"] == f"Bearer {FAKE_TOKEN}".encode()
    assert request.headers["Origin"] == b"https://www.gpushare.com"
    assert request.headers["Referer"] == b"https://www.gpushare.com/store"


@pytest.mark.parametrize("pn, total, listed, more", [
    (1, 53, 5, True), (2, 53, 2, False), (1, 50, 5, False), (1, 51, 5, True), (3, 200, 0, False)])
def test_paging_goes_on_while_pn_times_50_is_below_total(pn, total, listed, more):
    body = {"data": {"list": page(1)["data"]["list"][:listed], "total": total}}
    requests = [r for r in spider().parse(response(body, pn), page=pn) if isinstance(r, Request)]
    assert [r.url for r in requests] == ([list_url(pn + 1)] if more else [])


def test_every_machine_with_a_payg_sku_is_one_card_offer_in_yuan():
    machines = page(1)["data"]["list"] + page(2)["data"]["list"]
    got = offers(1) + offers(2)
    payg = [m for m in machines if m["skuList"]]
    assert [o["sku"] for o in got] == [str(m["id"]) for m in payg]
    for o, m in zip(got, payg, strict=True):
        assert (o["price_amount"], o["price_unit"]) == (m["skuList"][0]["price"], "元")
        assert (o["currency"], o["billing_period"], o["gpu_count"]) == ("CNY", "hour", 1)
        assert o["gpu_text"] == m["baseInfo"]["gpuName"] and o["region_text"] == "中国"


def test_published_prices_land_per_gpu_hour_in_china():
    rows = {}
    for row in normalized(offers(1) + offers(2))[0]:
        rows.setdefault(row["gpu_model"], row)
    assert {m: r["price_per_gpu_hour_cny"] for m, r in rows.items()} == {
        "RTX3090-24GB": Decimal("0.76"), "RTXA6000-48GB": Decimal("2.2")}
    assert rows["RTX3090-24GB"]["country"] == "CN"
    assert rows["RTX3090-24GB"]["province_or_state"] is None   # the list names no place


def test_offline_and_fully_rented_machines_are_unavailable():
    by_sku = {o["sku"]: o for o in offers(1)}
    assert by_sku["10231"]["available"] is True            # 8 cards, 5 used
    assert by_sku["10232"]["available"] is False           # 8 of 8 used
    assert by_sku["10417"]["available"] is False           # isOnline false


def test_a_machine_without_payg_sku_is_skipped():
    assert "11507" not in {o["sku"] for o in offers(2)}


def test_the_unknown_card_is_quarantined_with_its_name():
    [a16] = [o for o in offers(1) if o["gpu_text"] == "NVIDIA A16"]
    with pytest.raises(Quarantined, match=r"unknown GPU model .*A16"):
        normalize_offer(a16)


@pytest.mark.parametrize("price", [None, "", "面议"])
def test_an_unreadable_price_is_quarantined_not_guessed(price):
    body = page(1)
    body["data"]["list"][0]["skuList"][0]["price"] = price
    [o] = [dict(x) for x in spider().parse(response(body), page=2)
           if not isinstance(x, Request)][:1]
    with pytest.raises(Quarantined):
        normalize_offer(o)


@pytest.mark.parametrize("body", [
    {"code": 401, "msg": "登录已过期"}, {"data": None}, {"data": {"list": []}},
    {"data": {"records": [], "total": 0}}, []])
def test_an_error_body_fails_loudly(body):
    with pytest.raises(ValueError, match=r"no data.list and data.total"):
        list(spider().parse(response(body)))


@pytest.mark.parametrize("field", ["isOnline", "gpuNum", "gpuUsed", "skuList", "baseInfo"])
def test_a_renamed_field_fails_loudly(field):
    body = copy.deepcopy(page(1))
    machine = body["data"]["list"][0]
    machine[f"{field}V2"] = machine.pop(field)
    with pytest.raises(ValueError, match=rf"machine without {field}"):
        list(spider().parse(response(body)))


def test_a_renamed_card_field_fails_loudly():
    body = page(1)
    info = body["data"]["list"][0]["baseInfo"]
    info["gpuModel"] = info.pop("gpuName")
    with pytest.raises(ValueError, match=r"machine without baseInfo.gpuName"):
        list(spider().parse(response(body)))


def test_without_the_token_the_source_is_skipped_with_one_clear_line(tmp_path, monkeypatch):
    monkeypatch.delenv("GPUSHARE_TOKEN", raising=False)
    result = CrawlerResource(data_dir=str(tmp_path)).crawl("gpushare_cn", "c1")
    assert result.skipped and result.status == "skipped" and not result.passed
    assert result.failures == ["skipped: gpushare_cn needs an API key in the environment variable "
                               "GPUSHARE_TOKEN"]


def test_with_a_token_the_replayed_crawl_reads_both_pages_and_archives_no_token(
        replay_server, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUSHARE_TOKEN", FAKE_TOKEN)
    got, verdict = run_crawl("gpushare_cn", replay_server.url, tmp_path)
    assert verdict["passed"], verdict["failures"]
    assert sorted(o["sku"] for o in got) == sorted(o["sku"] for o in offers(1) + offers(2))
    fetch_log = tmp_path / "raw" / "fetches" / "gpushare_cn" / "test.jsonl"
    assert FAKE_TOKEN not in fetch_log.read_text()
