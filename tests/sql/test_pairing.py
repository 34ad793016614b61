"""Like-for-like pairing in the comparison marts (issue 11, item 1).

Each comparison pairs offers that differ only in what it measures, at the same vendor: slices and
servers with the whole single card of the same variant, kind and term; spot with the on-demand
offer of the same SKU (else the same line); monthly packages with the hourly offer of the same
SKU (else line); a region with the same vendor's price of the same line in the reference.
Hand-made observations, every model built as in production (tests/helpers/observations.py).
"""

from __future__ import annotations

import statistics
from datetime import timedelta
from decimal import Decimal

import pytest

from tests.helpers.observations import (
    BEIJING,
    DAY,
    GUIAN,
    NANJING,
    SHANGHAI,
    ULANQAB,
    approx,
    build,
    obs,
    records,
)


def offer_id(price, **overrides) -> str:
    return obs(price, **overrides)["offer_id"]


# -- slice_to_whole_ratio ----------------------------------------------------------------------

WHOLE_CARDS = {"SXM": 62, "PCIe": 50, None: 58}     # variant -> whole single card CNY/h


def whole_cards(**overrides) -> list[dict]:
    return [obs(price, gpu_variant=variant, sku=f"whole {variant}", **overrides)
            for variant, price in WHOLE_CARDS.items()]


@pytest.mark.parametrize(("variant", "whole_variant"), [
    ("SXM", "SXM"),            # not the cheaper PCIe card
    ("PCIe", "PCIe"),
    (None, None),              # an unnamed variant pairs only with an unnamed one
    ("NVL", "no row"),         # no NVL whole card there
])
def test_a_slice_pairs_with_the_whole_card_of_its_variant(con, variant, whole_variant):
    build(con, [*whole_cards(), obs(20, gpu_fraction=0.25, gpu_variant=variant, sku="slice")])
    rows = records(con, "select * from marts.slice_to_whole_ratio")
    if whole_variant == "no row":
        assert rows == []
        return
    [row] = rows
    whole = WHOLE_CARDS[whole_variant]
    assert row["gpu_variant"] == variant
    assert row["whole_offer_id"] == offer_id(whole, gpu_variant=whole_variant,
                                             sku=f"whole {whole_variant}")
    assert row["slice_offer_id"] == offer_id(20, gpu_fraction=0.25, sku="slice")
    assert row["whole_price_cny_per_hour"] == Decimal(whole)
    assert row["slice_to_whole_ratio"] == approx(20 / whole)
    assert row["per_gpu_premium"] == approx(20 / whole / 0.25)
    assert row["vendor_kind"] == "idc"
    assert row["offer_line"] == f"Test IDC|A100-80GB|{variant or '-'}|1|0.25|20.0|on_demand|hour"


def test_every_slice_offer_has_its_own_row(con):
    build(con, [obs(62), obs(70, sku="premium card"),
                obs(20, gpu_fraction=0.25, sku="MIG 2g.20gb"),
                obs(22, gpu_fraction=0.25, sku="vGPU 20G"),
                obs(10, gpu_fraction=0.25, offer_kind="spot", sku="spot slice")])  # no spot card
    rows = records(con, "select slice_sku, whole_offer_id, slice_to_whole_ratio "
                        "from marts.slice_to_whole_ratio order by slice_sku")
    assert [r["slice_sku"] for r in rows] == ["MIG 2g.20gb", "vGPU 20G"]
    assert {r["whole_offer_id"] for r in rows} == {offer_id(62)}      # the cheapest whole card
    assert [r["slice_to_whole_ratio"] for r in rows] == [approx(20 / 62), approx(22 / 62)]


def test_whole_card_ties_go_to_the_lowest_offer_id(con):
    build(con, [obs(62, sku="card b"), obs(62, sku="card a"),
                obs(20, gpu_fraction=0.25, sku="slice")])
    [(whole, offers)] = con.execute("select whole_offer_id, whole_offers "
                                    "from intermediate.int_whole_card_daily").fetchall()
    assert whole == min(offer_id(62, sku="card a"), offer_id(62, sku="card b"))
    assert offers == 2


# -- multi_gpu_discount ------------------------------------------------------------------------

@pytest.mark.parametrize(("server", "single_price"), [
    ({"gpu_variant": "SXM", "sku": "8x SXM"}, 60),                  # not the cheaper PCIe card
    ({"gpu_variant": None, "sku": "8x ?"}, 58),
    ({"gpu_variant": "SXM", "sku": "8x SXM spot", "offer_kind": "spot"}, None),   # kind differs
    ({"gpu_variant": "SXM", "sku": "8x SXM month", "billing_period": "month"}, None),
])
def test_a_server_pairs_with_a_single_card_of_its_variant_kind_and_term(con, server,
                                                                        single_price):
    singles = [obs(60, gpu_variant="SXM", sku="1x SXM"), obs(40, gpu_variant="PCIe", sku="1x PCIe"),
               obs(58, gpu_variant=None, sku="1x ?")]
    per_gpu = 48
    hours = 730 if server.get("billing_period") == "month" else 1
    build(con, [*singles, obs(8 * per_gpu * hours, gpu_count=8, **server)])
    rows = records(con, "select * from marts.multi_gpu_discount")
    if single_price is None:
        assert rows == []
        return
    [row] = rows
    single = next(s for s in singles if s["price_amount"] == single_price)
    assert row["single_offer_id"] == single["offer_id"]
    assert row["server_offer_id"] == offer_id(8 * per_gpu, gpu_count=8, **server)
    assert (row["server_gpu_count"], row["gpu_variant"]) == (8, server["gpu_variant"])
    assert row["server_to_single_ratio"] == approx(per_gpu / single_price)
    assert row["discount_pct"] == approx(100 * (1 - per_gpu / single_price))
    assert row["offer_line"].startswith(f"Test IDC|A100-80GB|{server['gpu_variant'] or '-'}|8|")


# -- spot_discount -----------------------------------------------------------------------------

def spot_rows(con) -> dict[str, dict]:
    return {r["spot_sku"]: r for r in records(con, "select * from marts.spot_discount")}


def test_spot_pairs_with_its_own_instance_type_before_the_cheapest_of_the_line(con):
    build(con, [obs(30, sku="p4d"), obs(20, sku="cheap box"),
                obs(6, sku="p4d", offer_kind="spot"),
                obs(5, sku="spot only", offer_kind="spot")])
    rows = spot_rows(con)
    assert (rows["p4d"]["pairing"], rows["p4d"]["on_demand_sku"]) == ("sku", "p4d")
    assert rows["p4d"]["spot_to_on_demand_ratio"] == approx(0.2)
    assert rows["p4d"]["on_demand_offer_id"] == offer_id(30, sku="p4d")
    assert rows["p4d"]["spot_offer_id"] == offer_id(6, sku="p4d", offer_kind="spot")
    assert (rows["spot only"]["pairing"], rows["spot only"]["on_demand_sku"]) == ("line",
                                                                                  "cheap box")
    assert rows["spot only"]["spot_discount_pct"] == approx(75.0)


def test_a_shared_sku_pairs_even_when_the_listings_name_the_variant_differently(con):
    build(con, [obs(30, sku="p5", gpu_variant="SXM"),
                obs(9, sku="p5", gpu_variant=None, offer_kind="spot")])
    [row] = records(con, "select * from marts.spot_discount")
    assert (row["pairing"], row["spot_to_on_demand_ratio"]) == ("sku", approx(0.3))


@pytest.mark.parametrize("on_demand", [
    {"gpu_variant": "PCIe", "sku": "pcie box"},         # another variant
    {"gpu_count": 2, "sku": "2x box"},                  # another GPU count
    {"gpu_fraction": 0.5, "sku": "half box"},           # a slice
    {"billing_period": "month", "sku": "spot box"},     # same SKU, another term
    {"sku": "box", **SHANGHAI},                         # another region
    {"sku": "box", "vendor": "Other", "source": "other"},
    {"sku": "box", "observed_at": DAY - timedelta(days=1)},
])
def test_spot_without_a_like_on_demand_offer_has_no_row(con, on_demand):
    build(con, [obs(30, **on_demand), obs(6, sku="spot box", offer_kind="spot")])
    assert records(con, "select * from marts.spot_discount") == []


# -- monthly_vs_hourly_saving ------------------------------------------------------------------

def test_monthly_pairs_with_the_hourly_offer_of_its_sku_else_the_cheapest_of_the_line(con):
    build(con, [obs(10, sku="box A"), obs(8, sku="box B"),
                obs(10 * 730 * 0.7, billing_period="month", sku="box A"),      # 30 % off box A
                obs(8 * 730 * 0.75, billing_period="month", sku="package")])   # 25 % off box B
    rows = {r["monthly_sku"]: r
            for r in records(con, "select * from marts.monthly_vs_hourly_saving")}
    assert (rows["box A"]["pairing"], rows["box A"]["hourly_sku"]) == ("sku", "box A")
    assert rows["box A"]["saving_pct"] == approx(30.0)
    assert rows["box A"]["hourly_offer_id"] == offer_id(10, sku="box A")
    assert rows["box A"]["monthly_offer_id"] == offer_id(10 * 730 * 0.7, billing_period="month",
                                                         sku="box A")
    assert (rows["package"]["pairing"], rows["package"]["hourly_sku"]) == ("line", "box B")
    assert rows["package"]["saving_pct"] == approx(25.0)


@pytest.mark.parametrize("hourly", [
    {"gpu_variant": "PCIe"}, {"gpu_count": 8}, {"gpu_fraction": 0.5},
    {"offer_kind": "spot"}, {"vendor": "Other", "source": "other"}, NANJING,
])
def test_monthly_without_a_like_hourly_offer_has_no_row(con, hourly):
    build(con, [obs(10, sku="box", **hourly), obs(5000, billing_period="month", sku="box")])
    assert records(con, "select * from marts.monthly_vs_hourly_saving") == []


# -- int_like_for_like_pairs: the one home of the four comparisons' pairing ---------------------

def test_an_offer_is_priced_by_every_comparison_it_belongs_to(con):
    build(con, [obs(40, offer_kind="spot", sku="spot card"),                 # whole, spot
                obs(12, gpu_fraction=0.25, sku="slice"),                     # slice, on-demand
                obs(9, gpu_fraction=0.25, offer_kind="spot", sku="slice")])  # slice, spot
    rows = records(con, "select comparison, offer_kind, partner_sku, pairing "
                        "from intermediate.int_like_for_like_pairs order by comparison")
    assert rows == [
        # the spot slice against the spot whole card (the on-demand slice has no whole card)
        {"comparison": "slice_to_whole", "offer_kind": "spot", "partner_sku": "spot card",
         "pairing": "card"},
        # ... and against the on-demand offer of its own SKU
        {"comparison": "spot", "offer_kind": "spot", "partner_sku": "slice", "pairing": "sku"}]
    assert [r["slice_sku"] for r in records(con, "select * from marts.slice_to_whole_ratio")] \
        == ["slice"]
    assert [r["on_demand_sku"] for r in records(con, "select * from marts.spot_discount")] \
        == ["slice"]


@pytest.mark.parametrize(("offer", "partners", "comparison"), [
    ({"gpu_fraction": 0.25, "sku": "s"}, [{"sku": "a"}, {"sku": "b"}], "slice_to_whole"),
    ({"gpu_count": 8, "sku": "s"}, [{"sku": "a"}, {"sku": "b"}], "multi_gpu"),
    ({"offer_kind": "spot", "sku": "s"}, [{"sku": "a"}, {"sku": "b"}], "spot"),
    ({"billing_period": "month", "sku": "s"}, [{"sku": "a"}, {"sku": "b"}], "monthly_vs_hourly"),
])
def test_price_ties_go_to_the_lowest_partner_offer_id_in_every_comparison(con, offer, partners,
                                                                          comparison):
    build(con, [obs(5000, **offer), *(obs(60, **p) for p in partners)])
    [row] = records(con, "select comparison, partner_offer_id "
                         "from intermediate.int_like_for_like_pairs")
    assert row == {"comparison": comparison,
                   "partner_offer_id": min(offer_id(60, **p) for p in partners)}


# -- int_regional_pairs ------------------------------------------------------------------------

def pairs(con) -> list[dict]:
    return records(con, "select * from intermediate.int_regional_pairs "
                        "order by vendor, region_group, offer_line")


def test_a_region_line_pairs_with_the_same_vendors_reference_line(con):
    xilinhot = {**ULANQAB, "region_code": "锡林郭勒", "city": "Xilinhot"}
    build(con, [obs(60, vendor="V", source="v"),
                obs(66, vendor="V", source="v", sku="second", **SHANGHAI),
                obs(45, vendor="V", source="v", **ULANQAB),
                obs(45, vendor="V", source="v", **xilinhot),           # a copy of one price
                obs(30, vendor="V", source="v", gpu_variant=None, sku="unnamed", **ULANQAB)])
    rows = {(r["region_group"], r["gpu_variant"]): r for r in pairs(con)}
    assert set(rows) == {("Beijing", "SXM"), ("Shanghai", "SXM"), ("Inner Mongolia", "SXM"),
                         ("Inner Mongolia", None)}
    mongolia = rows[("Inner Mongolia", "SXM")]
    assert mongolia["region_price_cny_per_gpu_hour"] == Decimal("45")
    assert mongolia["reference_price_cny_per_gpu_hour"] == Decimal("63")   # Beijing + Shanghai
    assert mongolia["price_ratio"] == approx(45 / 63)
    assert (mongolia["region_offers"], mongolia["reference_offers"]) == (2, 2)
    assert (mongolia["distinct_region_prices"], mongolia["distinct_offers"]) == (1, 3)
    assert sorted(mongolia["region_offer_ids"]) == sorted(
        [offer_id(45, vendor="V", source="v", **ULANQAB),
         offer_id(45, vendor="V", source="v", **xilinhot)])
    assert mongolia["reference"] == "CN tier-1 cities" and mongolia["vendor_kind"] == "idc"
    assert mongolia["offer_line"] == "V|A100-80GB|SXM|1|1.0|80.0|on_demand|hour"
    unnamed = rows[("Inner Mongolia", None)]                # not paired with the SXM line
    assert unnamed["reference_price_cny_per_gpu_hour"] is None and unnamed["price_ratio"] is None
    assert (unnamed["reference_offers"], unnamed["reference_offer_ids"]) == (0, None)
    assert unnamed["distinct_offers"] == 1


def test_outside_china_the_reference_is_the_same_vendors_us_price(con):
    virginia = {"region_code": "us-east-1", "country": "US", "province_or_state": "Virginia",
                "city": None, "is_tier1_city": False}
    tokyo = {"region_code": "ap-northeast-1", "country": "JP", "province_or_state": "Tokyo",
             "city": "Tokyo", "is_tier1_city": False}
    build(con, [obs(30, vendor="Cloud", source="cloud", **virginia),
                obs(36, vendor="Cloud", source="cloud", **tokyo),
                obs(12, vendor="Cheap JP", source="cheap_jp", **tokyo)])    # no US price
    rows = {(r["vendor"], r["region_group"]): r for r in pairs(con)}
    assert rows[("Cloud", "JP")]["reference"] == "US"
    assert rows[("Cloud", "JP")]["price_ratio"] == approx(1.2)
    assert rows[("Cheap JP", "JP")]["price_ratio"] is None
    [japan] = records(con, "select * from marts.regional_discount where region_group = 'JP'")
    assert (japan["vendors"], japan["vendors_paired"]) == (2, 1)
    assert japan["discount_pct"] == approx(-20.0)


# -- regional_discount: the failure the issue measured -----------------------------------------

def province_scenario(gaps_pct: list[float]) -> list[dict]:
    """Vendor i lists one A100 whole card in Beijing and the same line in Guizhou gaps_pct[i] %
    cheaper; a cheap IDC lists only in Guizhou, a dear hyperscaler only in Beijing."""
    rows = []
    for i, gap in enumerate(gaps_pct):
        beijing_price = 50 + 10 * i
        vendor = {"vendor": f"Vendor {i}", "source": f"vendor_{i}", "vendor_kind": "gpu_cloud"}
        rows += [obs(beijing_price, **vendor),
                 obs(round(beijing_price * (1 - gap / 100), 6), **vendor, **GUIAN)]
    rows += [obs(20, vendor="Cheap IDC", source="cheap_idc", **GUIAN),
             obs(200, vendor="Hyperscaler", source="hyperscaler", vendor_kind="hyperscaler")]
    return rows


def vendor_mix_discount(rows: list[dict]) -> float:
    """What the old mart computed: median of per-vendor medians, region against reference."""
    def median_of_vendors(region_rows):
        prices: dict[str, list[float]] = {}
        for r in region_rows:
            prices.setdefault(r["vendor"], []).append(float(r["price_per_gpu_hour_cny"]))
        return statistics.median(statistics.median(p) for p in prices.values())
    region = median_of_vendors([r for r in rows if r["province_or_state"] == "Guizhou"])
    reference = median_of_vendors([r for r in rows if r["is_tier1_city"]])
    return 100 * (1 - region / reference)


@pytest.mark.parametrize("gaps_pct", [[15, 20, 25], [25, 15, 20, 18], [15, 25], [22]])
def test_regional_discount_is_the_median_of_per_vendor_gaps(con, gaps_pct):
    rows = province_scenario(gaps_pct)
    build(con, rows)
    [row] = records(con, "select * from marts.regional_discount where region_group = 'Guizhou'")
    assert row["discount_pct"] == approx(statistics.median(gaps_pct), rel=1e-9)
    assert abs(vendor_mix_discount(rows) - statistics.median(gaps_pct)) > 5   # the old error
    assert (row["vendors"], row["vendors_paired"]) == (len(gaps_pct) + 1, len(gaps_pct))
    assert (row["offers"], row["distinct_offers"]) == (2 * len(gaps_pct), 2 * len(gaps_pct))
    assert row["ratio_low"] == approx(1 - max(gaps_pct) / 100, rel=1e-9)
    assert row["ratio_high"] == approx(1 - min(gaps_pct) / 100, rel=1e-9)
    assert (row["comparison"], row["reference"]) == ("same vendor", "CN tier-1 cities")


def test_a_vendors_ratio_is_the_median_of_its_lines(con):
    v = {"vendor": "V", "source": "v"}
    w = {"vendor": "W", "source": "w"}
    build(con, [obs(60, **v), obs(48, **v, **GUIAN),                             # 0.8
                obs(8 * 50, gpu_count=8, **v), obs(8 * 45, gpu_count=8, **v, **GUIAN),  # 0.9
                obs(40, **w), obs(28, **w, **GUIAN),                             # 0.7
                obs(10, gpu_fraction=0.25, sku="slice", **w),                    # slices: not
                obs(1, gpu_fraction=0.25, sku="slice", **w, **GUIAN)])           # in the mart
    [row] = records(con, "select * from marts.regional_discount where region_group = 'Guizhou'")
    # V: median(0.8, 0.9) = 0.85; W: 0.7 -> median across vendors 0.775
    assert row["discount_pct"] == approx(22.5)
    assert (row["ratio_low"], row["ratio_high"]) == (approx(0.7), approx(0.85))
    assert (row["vendors_paired"], row["offers"]) == (2, 6)


def test_a_region_without_paired_vendors_keeps_a_row(con):
    build(con, [obs(40, vendor="Only here", source="only_here", **GUIAN),
                obs(60, vendor="Only Beijing", source="only_bj", **BEIJING)])
    [row] = records(con, "select * from marts.regional_discount where region_group = 'Guizhou'")
    assert (row["vendors"], row["vendors_paired"], row["offers"], row["distinct_offers"]) == (
        1, 0, 0, 0)
    assert row["discount_pct"] is None and row["ratio_low"] is None
    assert row["reference_price_cny_per_gpu_hour"] is None
    assert row["median_price_cny_per_gpu_hour"] == Decimal("40")
