"""spiders/source_manifest.json, which a run reads instead of importing every spider, says what
the spiders themselves say: the same sources, modules, vendors, rendering and keys."""

import sys

import pytest

from spiders.registry import (
    loaded_spider_classes,
    manifest_from_spiders,
    source_names,
    spider_class,
)
from spiders.source_manifest import facts_of, manifest, missing_key_reason


def test_manifest_equals_the_spiders():
    written = list(manifest().values())
    assert written == manifest_from_spiders(), (
        "spiders/source_manifest.json is stale: run `python -m spiders.registry`")


def test_source_names_are_every_spider():
    assert source_names() == [cls.name for cls in loaded_spider_classes()]


@pytest.mark.parametrize("source", ["aws", "vastai"])
def test_spider_class_is_the_loaded_class(source):
    assert spider_class(source) is next(cls for cls in loaded_spider_classes()
                                        if cls.name == source)
    assert facts_of(spider_class(source)) == manifest()[source]


def test_a_table_spider_is_found_in_its_module():
    table = next(f for f in manifest().values() if f.module == "spiders.vendors.idc_tables")
    assert spider_class(table.name).name == table.name


@pytest.mark.parametrize(("required", "keys", "env", "expected"), [
    (False, ("K1",), {}, None),
    (True, (), {}, None),
    (True, ("K1",), {"K1": "v"}, None),
    (True, ("K1",), {}, "skipped: s needs an API key in the environment variable K1"),
    (True, ("K1", "K2"), {"K1": "v"},
     "skipped: s needs an API key in the environment variable K2"),
    (True, ("K1", "K2"), {},
     "skipped: s needs API keys in the environment variables K1, K2"),
])
def test_missing_key_reason(monkeypatch, required, keys, env, expected):
    for key in ("K1", "K2"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert missing_key_reason("s", required, keys) == expected


def test_listing_sources_imports_no_spider():
    import subprocess

    code = ("import sys; from spiders.registry import source_names; source_names(); "
            "from spiders.source_manifest import manifest; manifest(); "
            "print(sorted(m for m in sys.modules if m.startswith(('spiders.vendors', 'scrapy'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
