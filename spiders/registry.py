"""The list of sources: every spider in spiders.vendors (hand-written, or configured in
spiders/vendors/idc_tables.toml)."""

from functools import cache

from scrapy.settings import Settings
from scrapy.spiderloader import SpiderLoader


@cache
def _loader() -> SpiderLoader:
    return SpiderLoader.from_settings(Settings({"SPIDER_MODULES": ["spiders.vendors"]}))


def source_names() -> list[str]:
    return sorted(_loader().list())


def spider_class(source: str):
    return _loader().load(source)
