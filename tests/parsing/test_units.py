"""The units a vendor serves numbers in, converted by normalization only (spiders/parsing/units.py
for prices, machine.py for machine sizes, gpu_models.py for VRAM): table-driven, unhappy paths
too, and through normalize_offer (a typed field lands as its text reading did)."""

from decimal import Decimal as D

import pytest

from pipelines.normalize import Quarantined, normalize_offer
from spiders.parsing.gpu_models import GpuParseError, vram_gb_of
from spiders.parsing.machine import disk_gb_of, memory_gib_of, vcpus_of
from spiders.parsing.units import PRICE_UNITS, UnitError, major_units


@pytest.mark.parametrize("raw, unit, expected", [
    (2720, "厘", "2.72"), (1577, "厘", "1.577"), (10500, "厘", "10.5"), ("1980", "厘", "1.98"),
    (220000, "millicent", "2.2"), (55000, "millicent", "0.55"), (1.58, "元", "1.58"),
    (299, "cents", "2.99"), (1000, "cents", "10"), (0, "厘", "0"),
    (16416, "微元/秒", "59.0976"), (1000, "微元/秒", "3.6"),   # 共绩算力: per second, read hourly
])
def test_a_served_price_in_its_unit_is_read_in_major_units(raw, unit, expected):
    assert str(major_units(raw, unit)) == expected


@pytest.mark.parametrize("raw, unit", [(None, "厘"), (True, "厘"), ("2.72元", "厘"), (-1, "厘"),
                                       ({"v": 1}, "厘"), ("NaN", "厘"), (2720, "分钱"),
                                       (2720, "li")])
def test_an_unreadable_price_or_unit_is_refused(raw, unit):
    with pytest.raises(UnitError):
        major_units(raw, unit)


def test_the_price_unit_table_names_its_evidence():
    assert set(PRICE_UNITS) == {"元", "厘", "millicent", "cents", "微元/秒"}
    assert all(u.factor > 0 and u.evidence for u in PRICE_UNITS.values())


@pytest.mark.parametrize("raw, unit, expected", [
    (96636764160, "B", D(90)), (1610612736, "B", D("1.5")), (6144, "MB", D(6)),
    (64, "GB", D(64)), (200, "GiB", D(200)), ("512", "GB", D(512)), (2, "TB", D(2048)),
    (None, "GB", None), (64, None, None), (True, "GB", None), ("lots", "GB", None),
    (10**9, "GB", None),                      # past any one machine: a misread
])
def test_memory_served_in_its_unit_is_read_in_gib(raw, unit, expected):
    assert memory_gib_of(raw, unit) == expected


@pytest.mark.parametrize("raw, unit, expected", [
    (500, "GB", D(500)), (14.9, "GB", D("14.9")), (512, "GiB", D("549.76")), (2, "TB", D(2000)),
    (None, "GB", None), (500, "", None),
])
def test_disk_served_in_its_unit_is_read_in_decimal_gb(raw, unit, expected):
    assert disk_gb_of(raw, unit) == expected


@pytest.mark.parametrize("raw, expected", [(30, D(30)), (12.0, D(12)), ("16", D(16)),
                                           (0, None), (None, None), (False, None)])
def test_vcpus_served_are_read_as_a_count(raw, expected):
    assert vcpus_of(raw) == expected


@pytest.mark.parametrize("raw, unit, expected", [(81920, "MiB", D(80)), (49140, "MB",
                                                 D(49140) / 1024), (24, "GB", D(24))])
def test_vram_served_in_its_unit_is_read_in_gb(raw, unit, expected):
    assert vram_gb_of(raw, unit) == expected


@pytest.mark.parametrize("raw, unit", [(0, "MB"), (True, "GB"), ("big", "GB"), (80, "GiB?"),
                                       (80, "")])
def test_an_unreadable_vram_is_refused(raw, unit):
    with pytest.raises(GpuParseError):
        vram_gb_of(raw, unit)


OFFER = {"source": "autodl_cn", "vendor": "AutoDL", "vendor_kind": "marketplace", "sku": "m1",
         "gpu_text": "RTX 4090", "gpu_count": 1, "region_text": "西北B区",
         "offer_kind": "on_demand", "billing_period": "hour", "currency": "CNY",
         "url": "https://example.invalid/", "raw_ref": "0" * 64,
         "observed_at": "2026-11-30T09:00:00+00:00"}


def test_a_typed_offer_lands_as_its_converted_reading():
    row = normalize_offer({**OFFER, "price_amount": 1980, "price_unit": "厘", "memory": 96636764160,
                           "memory_unit": "B", "vcpus": 16, "vram": 24576, "vram_unit": "MiB"})
    assert (row["price_amount"], row["memory_gib"], row["vcpus"], row["gpu_model"]) == (
        D("1.98"), D(90), D(16), "RTX4090-24GB")


@pytest.mark.parametrize("edit, stage, says", [
    ({"price_amount": 1980, "price_unit": "分钱"}, "price", "unknown price unit '分钱'"),
    ({"price_amount": "1.98元", "price_unit": "厘"}, "price", "is not a number of 厘"),
    ({"price_amount": 1980, "price_unit": "厘", "currency": "USD"}, "currency",
     "a unit of CNY, not of USD"),
    ({"price_amount": 1980, "vram": 24, "vram_unit": "GB?"}, "card", "unknown vram_unit"),
])
def test_a_typed_field_in_an_unknown_unit_is_quarantined(edit, stage, says):
    with pytest.raises(Quarantined) as why:
        normalize_offer({**OFFER, **edit})
    assert why.value.stage == stage and says in why.value.reason
