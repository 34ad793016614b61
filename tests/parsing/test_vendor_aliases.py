"""One vendor, one key: every spelling the sources, the curated archives and the aggregator
write resolves through spiders/parsing/vendor_aliases.csv (the table loads with no spelling twice
and no key named two ways), a vendor we crawl takes its spider's name, and a name the table
does not know keeps the archive's own."""

from __future__ import annotations

import re

import pytest

from pipelines.backfill.vendors import vendor_of
from spiders.parsing.vendor_aliases import (
    AliasTableError,
    alias_form,
    alias_table,
    parse_aliases,
)
from spiders.registry import source_names, spider_class

COMING_SOURCES = ("idc_ustc_hf", "idc_ikkem_xm")    # spiders being added (issue 38)


@pytest.mark.parametrize("written, key", [
    # the same vendor as two archives (cloud-gpus, full-stack) and our spiders write it
    ("DataCrunch.io", "datacrunch"), ("Datacrunch", "datacrunch"), ("Verda", "datacrunch"),
    ("Google Cloud", "gcp"), ("Google Cloud Platform (GCP)", "gcp"), ("GCP", "gcp"),
    ("gcp", "gcp"), ("RunPod", "runpod"), ("RunPod.io", "runpod"),
    ("Jarvis Labs", "jarvislabs"), ("Jarvislabs", "jarvislabs"),
    ("Salad", "salad"), ("SaladCloud", "salad"),
    ("Lambda", "lambda_cloud"), ("Lambda Labs", "lambda_cloud"), ("Lambda Cloud", "lambda_cloud"),
    ("vast", "vastai"), ("vast.ai", "vastai"), ("Vast.ai", "vastai"),
    ("Paperspace", "paperspace"), ("Paperspace by DigitalOcean", "paperspace"),
    ("DigitalOcean", "digitalocean"), ("CoreWeave", "coreweave"),
    ("Amazon AWS", "aws"), ("Amazon Web Services (AWS)", "aws"), ("AWS", "aws"),
    ("Azure", "azure"), ("Microsoft Azure", "azure"),
    ("Oracle Cloud", "oci"), ("oci", "oci"),
    ("Cirrascale Cloud Services", "cirrascale"), ("FluidStack (code CGPUCOMP50)", "fluidstack"),
    # Chinese names, domains and our own source names
    ("alibaba_cn", "alibaba_cn"), ("阿里云", "alibaba_cn"), ("aliyun", "alibaba_cn"),
    ("Alibaba Cloud", "alibaba_cn"), ("featurize", "featurize_cn"),
    ("featurize_cn", "featurize_cn"), ("腾讯云", "tencent_cn"), ("tencent_cn_list", "tencent_cn"),
    ("idc_ustc_hf", "idc_ustc_hf"), ("idc_ikkem_xm", "idc_ikkem_xm"),
    # case, spaces and punctuation do not matter
    ("  DATACRUNCH.IO ", "datacrunch"), ("jarvis-labs", "jarvislabs"),
])
def test_spellings_resolve_to_one_key(written, key):
    assert vendor_of(written).key == key


@pytest.mark.parametrize("spellings", [
    ("DataCrunch.io", "Datacrunch"), ("Google Cloud", "Google Cloud Platform (GCP)", "GCP"),
    ("RunPod", "RunPod.io"), ("Jarvis Labs", "Jarvislabs"), ("Salad", "SaladCloud"),
    ("Lambda", "Lambda Labs", "Lambda Cloud"), ("vast", "vast.ai"),
    ("Paperspace", "Paperspace by DigitalOcean"), ("阿里云", "aliyun", "alibaba_cn"),
])
def test_one_vendor_is_one_name_and_kind(spellings):
    assert len({vendor_of(s) for s in spellings}) == 1, [vendor_of(s) for s in spellings]


def test_a_vendor_we_crawl_takes_its_spiders_name_kind_and_regions():
    for name in source_names():
        spider = spider_class(name)
        for written in (name, *([] if spider.is_template else [spider.vendor])):
            vendor = vendor_of(written)
            assert (vendor.vendor, vendor.vendor_kind) == (spider.vendor, spider.vendor_kind)
            assert vendor.region_key == vendor.key and vendor.key in source_names()


def test_every_source_and_coming_source_is_in_the_table_under_its_own_name():
    for name in (*source_names(), *COMING_SOURCES):
        assert alias_form(name) in alias_table(), name
    keys_without_name = {a.vendor_key for a in alias_table().values() if not a.vendor}
    assert keys_without_name <= set(source_names()), "a blank name is the spider's"


def test_a_name_the_table_does_not_know_keeps_the_archives_own():
    assert vendor_of("Some New Cloud") == vendor_of("Some New Cloud")
    assert (vendor_of("Some New Cloud").key, vendor_of("Some New Cloud").vendor,
            vendor_of("Some New Cloud").region_key) == ("somenewcloud", "Some New Cloud", None)
    assert vendor_of("").key == "unnamed"


def test_the_aggregators_provider_names_agree_with_the_table():
    """Prime Intellect's provider table names the vendors it lists as the table does, so its
    offer of a vendor and an archive's are one vendor (spiders/vendors/primeintellect.py)."""
    from spiders.vendors.primeintellect import CRAWLED_PROVIDERS, OTHER_PROVIDERS, provider_vendor

    for provider in {*CRAWLED_PROVIDERS, *OTHER_PROVIDERS} - {"primecompute"}:
        vendor = vendor_of(provider)
        assert provider_vendor(provider) == (vendor.vendor, vendor.vendor_kind), provider


def row(alias: str, key: str, vendor: str = "", kind: str = "", evidence: str = "e") -> dict:
    return {"alias": alias, "vendor_key": key, "vendor": vendor, "vendor_kind": kind,
            "evidence": evidence}


@pytest.mark.parametrize("rows, message", [
    ([row("RunPod", "runpod"), row("runpod", "runpod")], "the same spelling as 'RunPod'"),
    ([row("Vast.ai", "vastai"), row("vast ai", "vast")], "the same spelling"),   # two keys
    ([row("Salad", "salad", "Salad", "gpu_cloud"), row("SaladCloud", "salad", "SaladCloud",
                                                        "gpu_cloud")], "salad is named"),
    ([row("X", "x", "X", "cloud")], "kind 'cloud' is not one of"),
    ([row("X", "X-Cloud")], "key 'X-Cloud' is not lower-case a-z0-9_"),
    ([row("X", "x", evidence="")], "no evidence that it is x"),
    ([row("---", "x")], "no letter or digit"),
])
def test_a_table_that_contradicts_itself_is_refused(rows, message):
    with pytest.raises(AliasTableError, match=re.escape(message)):
        parse_aliases(rows)


def test_the_table_loads_with_no_spelling_twice_and_evidence_on_every_row():
    table = alias_table()
    assert len(table) > 100
    assert all(a.evidence for a in table.values())
