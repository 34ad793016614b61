"""AutoDL (autodl.com): the public GPU market page, rendered by JavaScript in Chromium.

The page is a single-page app: the price table only exists after its script fetched the market
JSON, so plain HTTP sees an empty shell. The spider reads the rendered table as users see it.
"""

from spiders.base import HtmlTableSpider


class AutodlCNSpider(HtmlTableSpider):
    name = "autodl_cn"
    vendor = "AutoDL"
    vendor_kind = "marketplace"
    render_js = True
    start_urls = ["https://www.autodl.com/market/list"]
    wait_for = "table.market-list tbody tr"
    rows = "table.market-list tbody tr"
    columns = {"region_text": "地区", "gpu_text": ["GPU型号", "显存"], "gpu_count": "GPU数",
               "available": "空闲/总数"}
    prices = {"hour": "按量计费", "day": "包日", "month": "包月"}
    min_offers = 10
