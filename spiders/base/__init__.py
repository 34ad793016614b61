from spiders.base.spider import GpuPriceSpider
from spiders.base.html_table import HtmlTableSpider
from spiders.base.json_api import JsonApiSpider

__all__ = ["GpuPriceSpider", "HtmlTableSpider", "JsonApiSpider"]
