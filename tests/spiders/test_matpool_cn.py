"""矩池云 Matpool: the keyless machine pools JSON API (2026-09-07 note), parsed from snapshot pages
built on its shape, through normalization; the millicent unit, paging by num_pages, an error code,
renamed fields, sold-out pools and an unknown card."""

import copy
import json
import re
from decimal import Decimal

import pytest
from scrapy.http import Request, TextResponse

from pipelines.normalize import Quarantined, normalize_offer
from spiders.layout import SNAPSHOT_DIR
from spiders.vendors.matpool_cn import MatpoolCNSpider, pools_url
from tests.helpers.crawl import run_crawl
from tests.helpers.normalized import normalized
from tests.helpers.responses import file_response, json_response

PAGES = ("machine_pools_page1.json", "machine_pools_page2.json")


def spider() -> MatpoolCNSpider:
    return MatpoolCNSpider(crawl_id="t")


def page(n: int) -> dict:
    return json.loads((SNAPSHOT_DIR / "matpool_cn" / PAGES[n - 1]).read_text(encoding="utf-8"))


def response(body: dict, n: int = 1) -> TextResponse:
    return json_response(pools_url(n), body)


def parsed(n: int):
    return list(spider().parse(file_response("matpool_cn", PAGES[n - 1]), page=n))


def offers(n: int) -> list[dict]:
    return [dict(o) for o in parsed(n) if not isinstance(o, Request)]


def test_the_start_url_is_the_keyless_pools_query():
    assert MatpoolCNSpider.start_urls == [
        "https://matgo.cn/api/machine_pools?machine_category=0&page=1&per_page=100"]
    assert not MatpoolCNSpider.key_names() and not MatpoolCNSpider.api_key_required


def test_paging_follows_num_pages():
    [next_page] = [r for r in parsed(1) if isinstance(r, Request)]
    assert next_page.url == "https://matgo.cn/api/machine_pools?machine_category=0&page=2&per_page=100"
    assert not [r for r in parsed(2) if isinstance(r, Request)]


def test_every_pool_is_one_offer_priced_from_millicent():
    pools = page(1)["pools"] + page(2)["pools"]
    got = offers(1) + offers(2)
    assert [o["sku"] for o in got] == [p["resource_pool_id"] for p in pools]
    for o, p in zip(got, pools, strict=True):
        hw = p["machine"]["hardware"]
        raw = hw.get("discountPriceMillicent", hw.get("priceMillicent"))
        # as served, in millicent: normalization converts it (tests/parsing/test_units.py)
        assert (o["price_amount"], o["price_unit"]) == (raw, "millicent")
        assert (o["currency"], o["billing_period"], o["gpu_count"]) == ("CNY", "hour", 1)
        assert o["available"] is (p["max_available_units"] > 0)


def test_published_prices_land_per_gpu_hour():
    rows = {}
    for row in normalized(offers(1) + offers(2))[0]:
        rows.setdefault(row["gpu_model"], row)
    assert {m: r["price_per_gpu_hour_cny"] for m, r in rows.items()} == {
        "RTX4090-24GB": Decimal("2.2"), "RTX3090-24GB": Decimal("1.85"),
        "A100-40GB": Decimal("2.8"), "T4-16GB": Decimal("1.35")}
    assert rows["RTX4090-24GB"]["region_code"] == "矩池云1区"


def test_the_list_price_is_the_fallback_and_kept_beside_a_discount():
    by_sku = {o["sku"]: o for o in offers(1) + offers(2)}
    assert by_sku["rp-t4-a1"]["price_amount"] == 135000          # priceMillicent only
    assert "list_price_amount" not in by_sku["rp-t4-a1"]
    body = page(1)
    body["pools"][0]["machine"]["hardware"].update(discountPriceMillicent=198000)
    [o] = [dict(x) for x in spider().parse(response(body), page=2)
           if not isinstance(x, Request)][:1]
    assert (o["price_amount"], o["list_price_amount"]) == (198000, 220000)
    # both in millicent, both converted by normalization: the discount lands, below its list
    assert normalize_offer(o)["price_amount"] == Decimal("1.98")
    o["list_price_amount"] = 150000
    with pytest.raises(Quarantined, match=r"original price 1\.5 below the current price 1\.98"):
        normalize_offer(o)


def test_sold_out_pool_is_unavailable():
    by_sku = {o["sku"]: o for o in offers(1)}
    assert by_sku["rp-4090-a2"]["available"] is False and by_sku["rp-4090-a1"]["available"]


@pytest.mark.parametrize("sku, stage, reason", [
    ("rp-a2000-a1", "card", "unknown GPU model .*RTX A2000"),
    ("rp-3090-b1", "region", "unknown region 'domain 1'"),
])
def test_unknown_card_and_unplaced_zone_are_quarantined(sku, stage, reason):
    [o] = [o for o in offers(1) + offers(2) if o["sku"] == sku]
    with pytest.raises(Quarantined, match=reason) as q:
        normalize_offer(o)
    assert q.value.stage == stage


def test_a_null_price_is_quarantined_not_guessed():
    body = page(1)
    body["pools"][0]["machine"]["hardware"] = {"discountPriceMillicent": None,
                                               "priceMillicent": None}
    [o] = [dict(x) for x in spider().parse(response(body), page=2)
           if not isinstance(x, Request)][:1]
    with pytest.raises(Quarantined, match=r"no price given"):
        normalize_offer(o)


def test_an_answer_without_code_is_fine_but_a_nonzero_code_fails_loudly():
    assert "code" not in page(1)
    with pytest.raises(ValueError, match=r"API error 400: 'machine_category 类型错误'"):
        list(spider().parse(response({"code": 400, "msg": "machine_category 类型错误"})))


@pytest.mark.parametrize("path", [("gpu_model",), ("max_available_units",), ("domain",),
                                  ("machine", "hardware")])
def test_a_renamed_field_fails_loudly(path):
    body = copy.deepcopy(page(1))
    holder = body["pools"][0]
    for key in path[:-1]:
        holder = holder[key]
    holder[f"{path[-1]}V2"] = holder.pop(path[-1])
    with pytest.raises(ValueError, match=r"pool without"):
        list(spider().parse(response(body)))


def test_renamed_price_fields_fail_loudly():
    body = page(1)
    body["pools"][0]["machine"]["hardware"] = {"discountPrice": 220000}
    fields = "machine.hardware.discountPriceMillicent|priceMillicent"
    with pytest.raises(ValueError, match=re.escape(fields)):
        list(spider().parse(response(body)))


def test_a_renamed_paging_key_fails_loudly():
    body = page(1)
    body["pagination"] = {"numPages": 2}      # the PaaS list's key, not machine_pools'
    with pytest.raises(ValueError, match=r"no integer pagination.num_pages"):
        list(spider().parse(response(body)))
    with pytest.raises(ValueError, match=r"no pools list"):
        list(spider().parse(response({"machines": [], "pagination": {"num_pages": 1}})))


def test_the_replayed_crawl_reads_both_pages(replay_server, tmp_path):
    got, verdict = run_crawl("matpool_cn", replay_server.url, tmp_path)
    assert verdict["passed"], verdict["failures"]
    assert sorted(o["sku"] for o in got) == sorted(o["sku"] for o in offers(1) + offers(2))
