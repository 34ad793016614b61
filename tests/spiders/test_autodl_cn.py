"""AutoDL market: a JavaScript page. Without a browser the table does not exist; with Chromium
(over the replay server, XHR included) it yields every row of the market JSON."""

import json

import pytest

from spiders.layout import SNAPSHOT_DIR
from spiders.vendors.autodl_cn import AutodlCNSpider
from tests.helpers.crawl import run_crawl
from tests.helpers.responses import file_response


def test_unrendered_shell_has_no_table_and_says_so():
    shell = file_response("autodl_cn", "market_list.html")
    with pytest.raises(ValueError, match=r"autodl_cn: table headers .* not found"):
        list(AutodlCNSpider(crawl_id="t").parse(shell))


@pytest.fixture(scope="module")
def crawl(replay_server, tmp_path_factory):
    return run_crawl("autodl_cn", replay_server.url, tmp_path_factory.mktemp("autodl"))


def test_rendered_market_yields_every_row_and_period(crawl):
    market = json.loads((SNAPSHOT_DIR / "autodl_cn" / "gpu_list.json").read_text())["data"]["list"]
    offers, verdict = crawl
    assert verdict["passed"], verdict["failures"]
    assert len(offers) == len(market) * 3  # hourly, daily, monthly per machine type


def test_rendered_prices_are_the_page_text(crawl):
    offers, _ = crawl
    west_4090 = {o["billing_period"]: o["price_text"] for o in offers
                 if o["region_text"] == "西北B区" and o["gpu_text"] == "RTX 4090 24GB"}
    assert west_4090 == {"hour": "¥1.98/时", "day": "¥45.00/日", "month": "¥1,299.00/月"}


def test_sold_out_machines_are_unavailable(crawl):
    offers, _ = crawl
    h800_beijing = [o for o in offers if o["region_text"] == "北京B区" and "H800" in o["gpu_text"]]
    assert h800_beijing and all(o["available"] is False for o in h800_beijing)


def test_xhr_json_is_archived(crawl, ):
    offers, verdict = crawl
    fetches = verdict["fetches"]
    api = "https://www.autodl.com/api/v1/market/gpu_list"
    assert any(f["url"].startswith(api) for f in fetches)
    assert all(o["url"] == "https://www.autodl.com/market/list" for o in offers)


@pytest.mark.parametrize("settings, timeout_ms", [({}, 20_000),
                                                  ({"RENDER_WAIT_TIMEOUT": "3"}, 3_000)])
def test_the_wait_for_the_rendered_table_is_a_setting(settings, timeout_ms):
    from scrapy.utils.test import get_crawler

    from spiders.registry import spider_class

    cls = spider_class("autodl_cn")
    crawler = get_crawler(cls, settings)   # without the setting: spiders/settings.py's 20 s
    spider = cls.from_crawler(crawler, crawl_id="test")
    [method] = spider.request(cls.start_urls[0]).meta["playwright_page_methods"]
    assert (method.method, method.args) == ("wait_for_selector", (cls.wait_for,))
    assert method.kwargs == {"timeout": timeout_ms}
