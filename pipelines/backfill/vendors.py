"""Which vendor an archive's cloud is: its key in the source name ('skypilot:aws'), its vendor
name and kind, and the regions.csv rows its places are read with. A cloud we also crawl takes
its spider's vendor name, kind and region key (spiders/registry.py), so its archived offers pair
with the crawled ones and are counted once (staging.stg_observations); a source named here whose
spider is not registered (yet) keeps the source's name as its key and region key (regions.csv's
shared rows place it until it has rows of its own); any other cloud keeps the archive's own
name."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from spiders.registry import source_names, spider_class

# A cloud's name as the archives write it (lower case, letters and digits only) -> the source
# name of our spider of that cloud
CRAWLED_CLOUDS = {
    "aws": "aws", "amazonaws": "aws", "amazonwebservices": "aws", "amazonwebservicesaws": "aws",
    "amazon": "aws", "gcp": "gcp", "google": "gcp", "googlecloud": "gcp",
    "googlecloudplatform": "gcp", "googlecloudgcp": "gcp", "azure": "azure",
    "microsoftazure": "azure", "lambda": "lambda_cloud", "lambdalabs": "lambda_cloud",
    "lambdacloud": "lambda_cloud", "runpod": "runpod", "vast": "vastai", "vastai": "vastai",
    "vultr": "vultr", "alibaba": "alibaba_cn", "alibabacn": "alibaba_cn", "aliyun": "alibaba_cn",
    "alibabacloud": "alibaba_cn", "featurize": "featurize_cn", "featurizecn": "featurize_cn",
    "idcustchf": "idc_ustc_hf", "idcikkemxm": "idc_ikkem_xm",
}
# Clouds we do not crawl: their kind (any other: a GPU cloud)
OTHER_KINDS = {"vast": "marketplace", "tensordock": "marketplace", "oci": "hyperscaler",
               "ibm": "hyperscaler", "oracle": "hyperscaler", "oraclecloud": "hyperscaler",
               "idcustchf": "idc", "idcikkemxm": "idc"}


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
    """The vendor behind an archive's cloud name."""
    slug = cloud_slug(cloud) or "unnamed"
    crawled = CRAWLED_CLOUDS.get(slug)
    if crawled and crawled in source_names():
        spider = spider_class(crawled)
        return Vendor(crawled, spider.vendor, spider.vendor_kind, crawled)
    if crawled:     # a source whose spider is not registered (yet) keeps the source's name
        return Vendor(crawled, cloud.strip() or crawled, OTHER_KINDS.get(slug, "gpu_cloud"),
                      crawled)
    return Vendor(slug, cloud.strip() or slug, OTHER_KINDS.get(slug, "gpu_cloud"), None)
