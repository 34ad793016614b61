"""The list of sources: every spider in spiders.vendors (hand-written, or configured in
spiders/vendors/idc_tables.toml). The names and the facts a run needs before crawling come from
spiders/source_manifest.json (spiders/source_manifest.py: no spider imported); spider_class
imports only the module that defines the source asked for."""

from __future__ import annotations

import importlib
from functools import cache

from spiders.source_manifest import SourceFacts, facts_of, manifest, write_manifest


@cache
def _loader():
    from scrapy.settings import Settings
    from scrapy.spiderloader import SpiderLoader

    return SpiderLoader.from_settings(Settings({"SPIDER_MODULES": ["spiders.vendors"]}))


def source_names() -> list[str]:
    return sorted(manifest())


def loaded_spider_classes() -> list:
    """Every spider class, each module imported (the manifest's test and writer read these)."""
    loader = _loader()
    return [loader.load(name) for name in sorted(loader.list())]


@cache
def spider_class(source: str):
    facts = manifest().get(source)
    if facts is None:   # not in the manifest (a spider added since it was written): look it up
        return _loader().load(source)
    from scrapy.utils.spider import iter_spider_classes

    module = importlib.import_module(facts.module)
    for cls in iter_spider_classes(module):
        if cls.name == source:
            return cls
    raise KeyError(f"spider not found: {source} (spiders/source_manifest.json names "
                   f"{facts.module})")


def manifest_from_spiders() -> list[SourceFacts]:
    """The facts read from every spider, importing them all (what the manifest must equal)."""
    return [facts_of(cls) for cls in loaded_spider_classes()]


if __name__ == "__main__":   # after a spider is added or changed: write the manifest again
    write_manifest(loaded_spider_classes())
    print("wrote spiders/source_manifest.json")
