from spiders.base.html_table import HtmlTableSpider
from spiders.base.json_api import JsonApiSpider
from spiders.base.spider import GpuPriceSpider

__all__ = ["GpuPriceSpider", "HtmlTableSpider", "JsonApiSpider"]
