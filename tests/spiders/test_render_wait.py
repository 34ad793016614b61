"""The wait for a rendered page's selector is a setting (RENDER_WAIT_TIMEOUT), for any spider with
render_js: a throwaway Chromium spider, since no bundled source renders in Chromium any more
(autodl_cn and gpushare_cn became JSON APIs)."""

import pytest
from scrapy.utils.test import get_crawler

from spiders.base import HtmlTableSpider


class RenderedProbe(HtmlTableSpider):
    name = "render_probe"
    vendor = "probe"
    vendor_kind = "marketplace"
    render_js = True
    start_urls = ["https://example.invalid/market"]
    wait_for = rows = "table.market tbody tr"
    columns = {"gpu_text": "GPU"}


@pytest.mark.parametrize("settings, timeout_ms", [({}, 20_000),
                                                  ({"RENDER_WAIT_TIMEOUT": "3"}, 3_000)])
def test_the_wait_for_the_rendered_table_is_a_setting(settings, timeout_ms):
    crawler = get_crawler(RenderedProbe, settings)   # no setting: spiders/settings.py: 20 s
    spider = RenderedProbe.from_crawler(crawler, crawl_id="test")
    request = spider.request(RenderedProbe.start_urls[0])
    assert request.meta["playwright"] is True
    [method] = request.meta["playwright_page_methods"]
    assert (method.method, method.args) == ("wait_for_selector", (RenderedProbe.wait_for,))
    assert method.kwargs == {"timeout": timeout_ms}
