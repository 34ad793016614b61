"""Which vendor an archive's cloud is: its key in the source name ('skypilot:aws'), its vendor
name and kind, and the regions.csv rows its places are read with. The key comes from the alias
table (spiders/parsing/vendor_aliases.csv), the one home of which spellings are one vendor, so
'DataCrunch.io' and 'Datacrunch' are one vendor and 'Google Cloud Platform (GCP)' is our `gcp`.
A vendor we also crawl takes its spider's vendor name, kind and region key
(spiders/registry.py), so its archived offers pair with the crawled ones and are counted once
(staging.stg_observations); a name the table does not know keeps the archive's own name."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from spiders.parsing.vendor_aliases import alias_of
from spiders.registry import source_names, spider_class

UNKNOWN_KIND = "gpu_cloud"


@dataclass(frozen=True)
class Vendor:
    key: str                 # the cloud's part of the source name: 'aws', 'coreweave'
    vendor: str
    vendor_kind: str
    region_key: str | None   # regions.csv's vendor column (None: the shared rows only)


def cloud_slug(name: str) -> str:
    """'Lambda Labs' -> 'lambdalabs', 'vast.ai' -> 'vastai'."""
    return re.sub(r"[^a-z0-9]+", "", name.lower())


@cache
def vendor_of(cloud: str) -> Vendor:
    """The vendor behind a cloud's name, as a source, an archive or an aggregator writes it."""
    alias = alias_of(cloud)
    if alias is None:                   # a vendor the table does not know: the archive's name
        slug = cloud_slug(cloud) or "unnamed"
        return Vendor(slug, cloud.strip() or slug, UNKNOWN_KIND, None)
    if alias.vendor_key in source_names():
        spider = spider_class(alias.vendor_key)
        return Vendor(alias.vendor_key, spider.vendor, spider.vendor_kind, alias.vendor_key)
    # a source being added keeps the table's name until its spider is registered
    return Vendor(alias.vendor_key, alias.vendor or alias.alias,
                  alias.vendor_kind or UNKNOWN_KIND, None)
