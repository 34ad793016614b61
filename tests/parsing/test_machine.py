"""Machine specs as vendors write them -> vcpus, memory_gib (binary) and disk_gb (decimal), or
None; never an exception, never a GPU's memory read as the machine's."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spiders.parsing.machine import (
    MAX_DISK_GB,
    MAX_MEMORY_GIB,
    MAX_VCPUS,
    disk_gb_in,
    machine_specs,
    memory_gib_in,
    specs_in_config,
    vcpus_in,
)

VCPUS = [
    ("30", 30), (16, 16), ("16 vCPU", 16), ("16 vCPUs", 16), ("16核", 16), ("16 核心", 16),
    ("CPU: 32", 32), ("vCPU：64", 64), ("12.8", Decimal("12.8")), ("64 cores", 64),
    ("2×Xeon 8358 (64 cores)", 64),          # sockets are not vCPUs
    ("CPU: 2×Xeon 8358 64核", 64), ("８核", 8),  # full-width digits
    ("", None), (None, None), ("0", None), ("-4", None), ("many", None), ("99999", None),
    ("16 vCPU / 32 cores", None),            # two counts: not read
]
MEMORY = [
    ("200 GiB", 200), ("64GB", 64), ("64 G", 64), ("1TB内存", 1024), ("1.5 TiB", 1536),
    ("65536 MB", 64), ("64G×16", 1024), ("16 x 64GB DDR4", 1024), ("1,800 GiB", 1800),
    ("64", None),                            # a bare number needs its documented unit
    ("", None), (None, None), ("lots", None), ("0 GB", None), ("999 TB", None),
]
DISK = [
    ("512 GiB SSD", Decimal("549.76")), ("100 GB", 100), ("1 TB NVMe", 1000),
    ("2 x 3.84 TB NVMe", 7680), ("2×1.92T", 3840), ("系统盘50G + 数据盘100G", 150),
    ("480G＋2×960G", 2400), ("24.5 TiB", Decimal("26938.03")), ("100", None), ("", None),
]


@pytest.mark.parametrize(("text", "expected"), VCPUS)
def test_vcpus(text, expected):
    assert vcpus_in(text) == (None if expected is None else Decimal(expected))


@pytest.mark.parametrize(("text", "expected"), MEMORY)
def test_memory_gib(text, expected):
    assert memory_gib_in(text) == (None if expected is None else Decimal(expected))


@pytest.mark.parametrize(("text", "expected"), DISK)
def test_disk_gb(text, expected):
    assert disk_gb_in(text) == (None if expected is None else Decimal(expected))


@pytest.mark.parametrize(("text", "unit", "expected"), [
    ("64", "GB", 64), (1024, "MB", 1), ("16384", "MiB", 16), (2, "TB", 2048), ("64", None, None),
])
def test_memory_bare_number_in_the_fields_documented_unit(text, unit, expected):
    assert memory_gib_in(text, bare_unit=unit) == (None if expected is None else Decimal(expected))


def test_disk_bare_number_in_the_fields_documented_unit():
    assert disk_gb_in(100.0, bare_unit="GB") == 100
    assert disk_gb_in("2", bare_unit="TB") == 2000


@pytest.mark.parametrize(("config", "expected"), [
    ("2×Xeon 8358 64核 / 内存 512GB / 系统盘 480G + 数据盘 2×3.84T NVMe / 8×A100 80GB",
     {"vcpus": 64, "memory_gib": 512, "disk_gb": 8160}),
    ("CPU: 2×Xeon 8358, 内存: 64G×16, GPU: 8×A100", {"vcpus": None, "memory_gib": 1024,
                                                    "disk_gb": None}),
    ("8× H100 80GB SXM5, 224 vCPU, 2 TB RAM, 8× 3.84 TB NVMe",
     {"vcpus": 224, "memory_gib": 2048, "disk_gb": 30720}),
    ("A100 80G SXM4 整卡", {"vcpus": None, "memory_gib": None, "disk_gb": None}),  # GPU memory
    ("8卡整机", {"vcpus": None, "memory_gib": None, "disk_gb": None}),
    (None, {"vcpus": None, "memory_gib": None, "disk_gb": None}),
])
def test_specs_in_config(config, expected):
    got = specs_in_config(config)
    assert got == {k: None if v is None else Decimal(v) for k, v in expected.items()}


def test_a_spiders_own_fields_win_over_its_configuration_text():
    item = {"vcpus_text": "30", "memory_text": "200 GiB", "disk_text": None,
            "config_text": "16核 / 内存 64GB / SSD 1TB"}
    assert machine_specs(item) == {"vcpus": 30, "memory_gib": 200, "disk_gb": 1000}
    assert machine_specs({}) == {"vcpus": None, "memory_gib": None, "disk_gb": None}


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_any_text_reads_as_a_bounded_value_or_none(text):
    specs = machine_specs({"vcpus_text": text, "memory_text": text, "disk_text": text,
                           "config_text": text})
    for value, ceiling in zip(specs.values(), (MAX_VCPUS, MAX_MEMORY_GIB, MAX_DISK_GB),
                              strict=True):
        assert value is None or 0 < value <= ceiling


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4096), st.sampled_from(["", " ", "  "]),
       st.sampled_from(["GB", "GiB", "G", "gb"]))
def test_a_written_size_reads_back(n, gap, unit):
    assert memory_gib_in(f"{n}{gap}{unit}") == n
