"""AutoDL market: the machine list JSON API behind a login token (AUTODL_TOKEN), parsed from
snapshot pages built on the public client's shape, through normalization; error envelopes,
renamed fields and units fail or quarantine loudly; without the token the source is skipped."""

import copy
import json
from decimal import Decimal

import pytest
from scrapy.http import Request, TextResponse

from pipelines.normalize import Quarantined, normalize_offer
from pipelines.resources import CrawlerResource
from spiders.layout import SNAPSHOT_DIR
from spiders.vendors.autodl_cn import MACHINE_LIST_URL, AutodlCNSpider, machine_list_body
from tests.helpers.crawl import run_crawl
from tests.helpers.normalized import normalized
from tests.helpers.responses import file_response

PAGES = ("machine_list_page1.json", "machine_list_page2.json")
FAKE_TOKEN = "fake-autodl-token-for-tests"  # not a secret: a test's fake token


def spider() -> AutodlCNSpider:
    return AutodlCNSpider(crawl_id="t")


def page(n: int) -> dict:
    return json.loads((SNAPSHOT_DIR / "autodl_cn" / PAGES[n - 1]).read_text(encoding="utf-8"))


def response(body: dict) -> TextResponse:
    return TextResponse(url=MACHINE_LIST_URL, body=json.dumps(body).encode(), encoding="utf-8",
                        request=Request(MACHINE_LIST_URL, method="POST"))


def parsed(n: int):
    return list(spider().parse(file_response("autodl_cn", PAGES[n - 1]), page_index=n))


def offers(n: int) -> list[dict]:
    return [dict(o) for o in parsed(n) if not isinstance(o, Request)]


def test_page_one_asks_for_page_two_with_the_same_query():
    [next_page] = [r for r in parsed(1) if isinstance(r, Request)]
    assert (next_page.method, next_page.url) == ("POST", MACHINE_LIST_URL)
    assert json.loads(next_page.body) == machine_list_body(2)
    assert not [r for r in parsed(2) if isinstance(r, Request)]   # max_page 2: the last page


def test_the_request_is_the_clients_body_with_the_bare_token(monkeypatch):
    monkeypatch.setenv("AUTODL_TOKEN", FAKE_TOKEN)
    request = spider().page_request(1)
    assert request.headers["Authorization"] == FAKE_TOKEN.encode()   # bare, no "Bearer "
    assert request.headers["Content-Type"] == b"application/json"
    assert json.loads(request.body) == {"charge_type": "payg", "page_size": 20, "gpu_idle_num": 0,
                                        "region_sign_list": [], "gpu_type_name": [],
                                        "page_index": 1}


def test_every_payg_machine_is_one_card_offer_priced_from_li():
    machines = [m for n in (1, 2) for m in page(n)["data"]["list"]]
    got = offers(1) + offers(2)
    payg = [m for m in machines if m["payg"]]
    assert [o["sku"] for o in got] == [m["machine_id"] for m in payg]
    for o, m in zip(got, payg, strict=True):
        # as served, in 厘: normalization converts it (tests/parsing/test_units.py)
        assert (o["price_amount"], o["price_unit"]) == (m["payg_price"], "厘")
        if o["gpu_text"] != "vGPU-32GB":   # the one card the catalog lacks (quarantined)
            assert normalize_offer(o)["price_amount"] == Decimal(m["payg_price"]) / 1000
        assert (o["currency"], o["billing_period"], o["gpu_count"]) == ("CNY", "hour", 1)
        assert o["price_per_card"] is True and o["region_text"] == m["region_name"]
        assert o["vendor_data"]["region_sign"] == m["region_sign"]


def test_published_list_prices_land_per_gpu_hour():
    rows = {(r["gpu_model"], r["region_code"]): r for r in normalized(offers(1) + offers(2))[0]}
    assert rows[("RTX4090-24GB", "西北B区")]["price_per_gpu_hour_cny"] == Decimal("1.98")
    assert rows[("H20-96GB", "内蒙A区")]["price_per_gpu_hour_cny"] == Decimal("10.5")
    assert rows[("A100-80GB", "宿迁企业区")]["province_or_state"] == "Jiangsu"
    west = rows[("RTX4090-24GB", "西北B区")]
    assert (west["vcpus"], west["memory_gib"]) == (22, 90)   # cpu_per_gpu, mem_per_gpu bytes


def test_sold_out_machines_are_unavailable_and_not_payg_is_skipped():
    by_sku = {o["sku"]: o for o in offers(1) + offers(2)}
    assert by_sku["c41e8f7b22"]["available"] is False        # gpu_idle_num 0
    assert by_sku["b7c94e1a05"]["available"] is False        # H800, sold out
    assert by_sku["2dd949a4cf"]["available"] is True
    assert "416be0c9d2" not in by_sku                         # payg false: no hourly price


def test_the_unknown_card_is_quarantined_with_its_name():
    [vgpu] = [o for o in offers(1) if o["gpu_text"] == "vGPU-32GB"]
    with pytest.raises(Quarantined, match=r"unknown GPU model .*vGPU-32GB"):
        normalize_offer(vgpu)


@pytest.mark.parametrize("region", ["西北B区", "内蒙A区", "北京A区", "北京B区", "北京C区", "芜湖区",
                                    "佛山区", "南京新手区", "泉州A区", "深圳A区", "宿迁企业区"])
def test_every_autodl_zone_in_the_evidence_is_placed(region):
    [o] = offers(1)[:1]
    row = normalize_offer({**o, "region_text": region})
    assert row["country"] == "CN" and row["province_or_state"]


def test_a_null_price_is_quarantined_not_guessed():
    body = page(1)
    body["data"]["list"][0]["payg_price"] = None
    [o] = [dict(x) for x in spider().parse(response(body), page_index=2)
           if not isinstance(x, Request)][:1]
    assert "price_amount" not in o or o.get("price_amount") in (None, "")
    with pytest.raises(Quarantined, match=r"no price given"):
        normalize_offer(o)


@pytest.mark.parametrize("code, msg", [("AuthorizeFailed", "登录超时"), ("Failed", "参数错误")])
def test_an_error_envelope_fails_loudly_with_its_message(code, msg):
    with pytest.raises(ValueError, match=rf"API error '{code}': '{msg}'"):
        list(spider().parse(response({"code": code, "msg": msg, "data": None})))


@pytest.mark.parametrize("field", ["gpu_name", "payg_price", "region_name", "gpu_idle_num"])
def test_a_renamed_field_fails_loudly(field):
    body = copy.deepcopy(page(1))
    body["data"]["list"][0][f"{field}_v2"] = body["data"]["list"][0].pop(field)
    with pytest.raises(ValueError, match=rf"machine without {field}"):
        list(spider().parse(response(body)))


def test_a_renamed_list_or_paging_field_fails_loudly():
    body = page(1)
    body["data"]["rows"] = body["data"].pop("list")
    with pytest.raises(ValueError, match=r"no list at 'data.list'"):
        list(spider().parse(response(body)))
    body = page(1)
    del body["data"]["max_page"]
    with pytest.raises(ValueError, match=r"no integer data.max_page"):
        list(spider().parse(response(body)))


def test_without_the_token_the_source_is_skipped_with_one_clear_line(tmp_path, monkeypatch):
    monkeypatch.delenv("AUTODL_TOKEN", raising=False)
    result = CrawlerResource(data_dir=str(tmp_path)).crawl("autodl_cn", "c1")
    assert result.skipped and result.status == "skipped" and not result.passed
    assert result.failures == ["skipped: autodl_cn needs an API key in the environment variable "
                               "AUTODL_TOKEN"]
    assert not (tmp_path / "raw" / "crawls").exists()


def test_with_a_token_the_replayed_crawl_reads_both_pages_and_archives_no_token(
        replay_server, tmp_path, monkeypatch):
    monkeypatch.setenv("AUTODL_TOKEN", FAKE_TOKEN)
    got, verdict = run_crawl("autodl_cn", replay_server.url, tmp_path)
    assert verdict["passed"], verdict["failures"]
    assert sorted(o["sku"] for o in got) == sorted(o["sku"] for o in offers(1) + offers(2))
    api = [f for f in verdict["fetches"] if not f["url"].endswith("/robots.txt")]
    assert [(f["url"], f["status"]) for f in api] == [(MACHINE_LIST_URL, 200)] * 2
    assert FAKE_TOKEN not in (tmp_path / "raw" / "fetches" / "autodl_cn" / "test.jsonl").read_text()
