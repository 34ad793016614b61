"""Structural effects (pipelines/simulate/structure.py): prices and truth rows on hand-made
offers, then once on the real offers of three IDC sources. Pure DataFrames: nothing is simulated
here."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
import pytest

from pipelines.simulate import OFFER_COLUMNS, SimulationError, load_offers
from pipelines.simulate.structure import (
    CLI_FLAGS,
    STRUCTURAL_EFFECTS,
    TRUTH_COLUMNS,
    MonthlyRatio,
    RegionalGap,
    RegionCopy,
    ServerRatio,
    SliceRatio,
    SpotRatio,
    apply_structure,
    province_region,
)
from spiders.parsing.prices import HOURS_PER_PERIOD

USD_PER_CNY = 0.138
BEIJING = {"region_code": "北京", "province_or_state": "Beijing", "city": "Beijing",
           "is_tier1_city": True}
SHANGHAI = {"region_code": "上海", "province_or_state": "Shanghai", "city": "Shanghai",
            "is_tier1_city": True}
GUIZHOU = {"region_code": "贵阳", "province_or_state": "Guizhou", "city": "Guiyang",
           "is_tier1_city": False}


def offer(offer_id: str, amount: float, *, count: int = 1, fraction: str = "1",
          period: str = "hour", per_card: bool = False, **fields) -> dict:
    """One offer; the price per GPU-hour follows from the listed amount (per card when
    `per_card`, as a "/卡/月" listing is)."""
    units = float(fraction) * (1 if per_card else count)
    per_gpu = round(amount / HOURS_PER_PERIOD[period] / units, 6)
    row = {"source": "idc_x", "vendor": "X", "vendor_kind": "idc", "country": "CN", **BEIJING,
           "sku": f"sku-{offer_id}", "gpu_model": "A100-80GB", "gpu_variant": "SXM",
           "gpu_count": count, "gpu_fraction": Decimal(fraction), "vram_gb": Decimal("80"),
           "offer_kind": "on_demand", "billing_period": period,
           "price_amount": Decimal(str(amount)),
           "currency": "CNY", "price_per_gpu_hour_cny": Decimal(str(per_gpu)),
           "price_per_gpu_hour_usd": Decimal(str(round(per_gpu * USD_PER_CNY, 6))),
           "fx_rate_date": "2026-05-29", "available": True, "url": "https://example.com",
           "raw_ref": "simulated", "offer_id": offer_id}
    row.update(fields)
    return row


def run(rows: list[dict], effects, seed: int = 0):
    out, truth, notes = apply_structure(pd.DataFrame(rows), effects, seed)
    return out.set_index("offer_id", drop=False), pd.DataFrame(truth, columns=TRUTH_COLUMNS), notes


def per_gpu(out: pd.DataFrame, offer_id: str) -> float:
    return float(out.loc[offer_id, "price_per_gpu_hour_cny"])


def only(truth: pd.DataFrame, effect: str, offer_id: str) -> pd.Series:
    rows = truth[(truth["effect"] == effect) & (truth["offer_id"] == offer_id)]
    assert len(rows) == 1, truth
    return rows.iloc[0]


def test_slice_instance_price_is_the_ratio_of_the_cheapest_whole_card():
    out, truth, notes = run([
        offer("whole", 40.0), offer("whole-cheaper", 38.0, sku="other"),
        offer("slice", 15.0, fraction="0.25", vram_gb=Decimal("20")),
        offer("slice-monthly", 4000.0, fraction="0.25", period="month"),   # no monthly whole card
    ], [SliceRatio(0.4)])
    assert per_gpu(out, "slice") * 0.25 == pytest.approx(0.4 * 38.0, rel=1e-9)
    assert float(out.loc["slice", "price_amount"]) == pytest.approx(15.2, rel=1e-9)
    row = only(truth, "slice_ratio", "slice")
    assert row.reference_offer_id == "whole-cheaper" and row.ratio == pytest.approx(0.4, rel=1e-9)
    assert row.size_pct is None or pd.isna(row.size_pct)
    assert row.detail["requested_ratio"] == 0.4
    assert float(out.loc["slice-monthly", "price_amount"]) == 4000.0    # left alone ...
    assert any("slice_ratio" in n and "without a partner" in n for n in notes)   # ... and noted
    assert float(out.loc["whole", "price_amount"]) == 40.0


def test_a_null_variant_pairs_only_with_a_null_variant():
    out, truth, notes = run([
        offer("whole-sxm", 40.0), offer("slice-null", 12.0, fraction="0.25", gpu_variant=None),
        offer("whole-null", 30.0, gpu_variant=None), offer("slice-sxm", 15.0, fraction="0.5"),
    ], [SliceRatio(0.5)])
    assert only(truth, "slice_ratio", "slice-null").reference_offer_id == "whole-null"
    assert only(truth, "slice_ratio", "slice-sxm").reference_offer_id == "whole-sxm"
    assert per_gpu(out, "slice-null") * 0.25 == pytest.approx(15.0, rel=1e-9)
    out, truth, notes = run([offer("whole-sxm", 40.0),
                             offer("slice-null", 12.0, fraction="0.25", gpu_variant=None)],
                            [SliceRatio(0.5)])
    assert truth.empty and float(out.loc["slice-null", "price_amount"]) == 12.0 and notes


@pytest.mark.parametrize("per_card", [True, False])
def test_server_ratio_keeps_listed_prices_consistent_per_card_or_per_server(per_card):
    amount = 5000.0 if per_card else 40000.0            # "/卡/月" or the whole server per month
    out, truth, _ = run([offer("single", 6000.0, period="month"),
                         offer("server", amount, count=8, period="month", per_card=per_card)],
                        [ServerRatio(0.9)])
    single = 6000.0 / 730
    assert per_gpu(out, "server") == pytest.approx(0.9 * single, abs=1e-6)
    listed_units = 1 if per_card else 8                 # the plan infers this from the two prices
    assert float(out.loc["server", "price_amount"]) / (730 * listed_units) == pytest.approx(
        per_gpu(out, "server"), abs=2e-6)
    assert float(out.loc["server", "price_amount"]) == pytest.approx(amount * 1.08, rel=1e-6)
    usd = float(out.loc["server", "price_per_gpu_hour_usd"])
    assert usd == pytest.approx(per_gpu(out, "server") * USD_PER_CNY, rel=1e-5)
    row = only(truth, "server_ratio", "server")
    assert row.reference_offer_id == "single" and row.ratio == pytest.approx(0.9, rel=1e-6)


def test_spot_pairs_with_the_same_sku_else_the_cheapest_of_its_line():
    out, truth, _ = run([
        offer("od-a", 10.0, sku="a"), offer("od-b", 8.0, sku="b"),
        offer("spot-a", 4.0, sku="a", offer_kind="spot"),
        offer("spot-c", 3.0, sku="c", offer_kind="spot"),
        offer("spot-8", 30.0, sku="d", count=8, offer_kind="spot"),    # no on-demand server
    ], [SpotRatio(0.5)])
    assert per_gpu(out, "spot-a") == pytest.approx(5.0)
    assert only(truth, "spot_ratio", "spot-a").reference_offer_id == "od-a"
    assert per_gpu(out, "spot-c") == pytest.approx(4.0)
    assert only(truth, "spot_ratio", "spot-c").reference_offer_id == "od-b"
    assert float(out.loc["spot-8", "price_amount"]) == 30.0
    assert set(truth["offer_id"]) == {"spot-a", "spot-c"}


def test_monthly_pairs_with_the_hourly_offer_of_its_sku():
    out, truth, _ = run([
        offer("hour-a", 10.0, sku="a"), offer("hour-b", 9.0, sku="b"),
        offer("month-a", 6000.0, sku="a", period="month"),
        offer("month-spot", 3000.0, sku="s", period="month", offer_kind="spot"),  # no hourly spot
    ], [MonthlyRatio(0.7)])
    assert per_gpu(out, "month-a") == pytest.approx(7.0, abs=1e-6)
    assert float(out.loc["month-a", "price_amount"]) == pytest.approx(7.0 * 730, abs=1e-3)
    assert only(truth, "monthly_ratio", "month-a").reference_offer_id == "hour-a"
    assert set(truth["offer_id"]) == {"month-a"}


def test_region_copy_gives_every_region_the_first_offers_price_and_noise():
    rows = [offer("b-1", 10.0), offer("a-1", 12.0, **SHANGHAI), offer("c-1", 8.0, **GUIZHOU),
            offer("a-2", 30.0, count=8, **SHANGHAI),              # another line: its own group
            offer("z-1", 50.0, source="idc_y", vendor="Y")]       # another vendor: untouched
    out, truth, _ = run(rows, [RegionCopy(("idc_x",))])
    for offer_id in ("a-1", "b-1", "c-1"):
        assert per_gpu(out, offer_id) == 12.0
        assert out.loc[offer_id, "noise_key"] == "a-1"
    assert out.loc["a-2", "noise_key"] == "a-2" and out.loc["z-1", "noise_key"] == "z-1"
    copies = truth[truth["effect"] == "region_copy"]
    assert set(copies["offer_id"]) == {"b-1", "c-1"}
    assert (copies["reference_offer_id"] == "a-1").all() and (copies["ratio"] == 1).all()
    by_vendor, _, _ = run(rows, [RegionCopy(("X",))])             # named by vendor
    assert by_vendor.equals(out)


def gap_rows() -> list[dict]:
    cloud = {"source": "cloud_x", "vendor": "Cloud", "vendor_kind": "hyperscaler"}
    return [
        offer("idc-bj", 10.0), offer("idc-gz", 9.5, **GUIZHOU),
        offer("idc-bj-slice", 5.0, fraction="0.5"),             # no slice in Guizhou: cloned
        offer("cloud-bj", 20.0, **cloud), offer("cloud-sh", 18.0, **cloud, **SHANGHAI),
        offer("local-gz", 7.0, source="idc_gz", vendor="Local", **GUIZHOU),   # no tier-1 offer
    ]


def test_regional_gap_prices_each_vendor_against_its_own_tier1_offer():
    out, truth, _ = run(gap_rows(), [RegionalGap("Guizhou", 20, spread=5)], seed=3)
    gaps = truth[truth["effect"] == "regional_gap"].set_index("offer_id")
    clones = out[out["offer_id"].str.contains("#gap-guizhou")]
    assert set(clones["offer_id"]) == {"idc-bj-slice#gap-guizhou", "cloud-sh#gap-guizhou"}
    assert out["offer_id"].is_unique and len(out) == 8
    assert set(gaps.index) == {"idc-gz", *clones["offer_id"]}
    # the reference price is the median of the vendor's tier-1 offers of the line (Cloud lists it
    # in Beijing at 20 and in Shanghai at 18: 19), as marts.regional_discount reads it
    reference = {"idc-gz": per_gpu(out, "idc-bj"),
                 "idc-bj-slice#gap-guizhou": per_gpu(out, "idc-bj-slice"),
                 "cloud-sh#gap-guizhou": (per_gpu(out, "cloud-bj") + per_gpu(out, "cloud-sh")) / 2}
    for offer_id, row in gaps.iterrows():
        assert 15 <= row.size_pct <= 25
        assert row.size_pct == pytest.approx(row.detail["requested_pct"], abs=1e-4)
        assert per_gpu(out, offer_id) == pytest.approx(
            (1 - row.size_pct / 100) * reference[offer_id], rel=1e-9)
    assert gaps.loc["cloud-sh#gap-guizhou", "reference_offer_id"] == "cloud-sh"   # the cheapest
    assert gaps.loc["idc-gz", "size_pct"] == pytest.approx(
        gaps.loc["idc-bj-slice#gap-guizhou", "size_pct"])                       # one draw/vendor
    assert gaps.loc["idc-gz", "size_pct"] != pytest.approx(
        gaps.loc["cloud-sh#gap-guizhou", "size_pct"])
    assert float(out.loc["local-gz", "price_amount"]) == 7.0                  # mixed vendors
    clone = out.loc["cloud-sh#gap-guizhou"]
    assert (clone.region_code, clone.city, clone.province_or_state, clone.country) == (
        "贵安", "Gui'an", "Guizhou", "CN") and not clone.is_tier1_city
    # the same instance type in another region: one configuration for the regional pair
    assert clone.sku == "sku-cloud-sh" and clone.noise_key == clone.offer_id
    assert clone.source == "cloud_x" and clone.vendor_kind == "hyperscaler"


def test_regional_gap_is_deterministic_for_a_seed():
    first = run(gap_rows(), [RegionalGap("Guizhou", 20, spread=5)], seed=3)
    again = run(gap_rows(), [RegionalGap("Guizhou", 20, spread=5)], seed=3)
    other = run(gap_rows(), [RegionalGap("Guizhou", 20, spread=5)], seed=4)
    assert first[0].equals(again[0]) and first[1].equals(again[1])
    assert not first[1]["size_pct"].equals(other[1]["size_pct"])


def test_regional_gap_without_clones_and_the_clone_city():
    out, truth, notes = run(gap_rows(), [RegionalGap("贵州", 20, clone=False)])
    assert len(out) == 6 and set(truth["offer_id"]) == {"idc-gz"}
    assert truth["size_pct"].iloc[0] == pytest.approx(20, abs=1e-4)
    assert any("clones are off" in n for n in notes)
    assert province_region("Inner Mongolia")["city"] == "Ulanqab"
    assert province_region("Jiangsu")["region_code"] == "南京"
    hebei = province_region("Hebei")                  # no representative: the table's first city
    assert hebei["province_or_state"] == "Hebei" and hebei["city"] and hebei["region_code"]
    assert province_region("Atlantis") is None


def test_gaps_come_after_ratios_and_every_truth_row_holds_at_noise_0():
    rows = [offer("bj-whole", 40.0), offer("bj-slice", 15.0, fraction="0.5"),
            offer("gz-whole", 35.0, **GUIZHOU), offer("gz-slice", 14.0, fraction="0.5", **GUIZHOU),
            offer("gz-quarter", 9.0, fraction="0.25", **GUIZHOU)]   # no tier-1 quarter
    out, truth, notes = run(rows, [SliceRatio(0.4), RegionalGap("Guizhou", 20)])
    assert float(out.loc["gz-whole", "price_amount"]) == pytest.approx(32.0)
    assert per_gpu(out, "gz-quarter") * 0.25 == pytest.approx(0.4 * 32.0)   # follows the gap
    for row in truth.itertuples():
        asked = row.detail.get("requested_ratio", 1 - row.detail.get("requested_pct", 0) / 100)
        assert row.ratio == pytest.approx(asked, rel=1e-6), row
    assert not any("off the value" in n for n in notes)


def test_specs_parse_and_bad_specs_name_themselves():
    assert RegionalGap.parse("Guizhou:20:5") == RegionalGap("Guizhou", 20.0, 5.0)
    assert RegionalGap.parse("Inner Mongolia:25") == RegionalGap("Inner Mongolia", 25.0)
    assert RegionalGap.parse("Jiangsu:10:0:no-clone") == RegionalGap("Jiangsu", 10, 0, False)
    assert RegionCopy.parse("autodl_cn, Y") == RegionCopy(("autodl_cn", "Y"))
    assert SliceRatio.parse("0.4") == SliceRatio(0.4)
    assert SpotRatio.parse("0.5:a,b") == SpotRatio(0.5, ("a", "b"))
    assert {f.effect for f in CLI_FLAGS} == set(STRUCTURAL_EFFECTS)
    assert {f.flag for f in CLI_FLAGS} >= {"--regional-gap", "--slice-ratio", "--region-copy"}
    bad = [(RegionalGap, "Guizhou"), (RegionalGap, "Guizhou:x"), (RegionalGap, "Beijing:20"),
           (RegionalGap, "Guizhou:90:20"), (RegionCopy, " , "), (SliceRatio, "x"),
           (ServerRatio, "0"), (MonthlyRatio, "-1:a")]
    for effect, spec in bad:
        with pytest.raises(SimulationError, match=repr(spec).replace("'", ".")):
            effect.parse(spec)


def test_unknown_names_and_provinces_are_refused():
    rows = gap_rows()
    for effect in (SliceRatio(0.4, ("nope",)), RegionCopy(("nope",)),
                   RegionalGap("Atlantis", 10), RegionalGap("Tibet", 10, clone=False)):
        with pytest.raises(SimulationError, match="no offers"):
            apply_structure(pd.DataFrame(rows), [effect], 0)
    with pytest.raises(SimulationError, match="twice"):
        apply_structure(pd.DataFrame(rows), [SliceRatio(0.4), SliceRatio(0.5, ("idc_x",))], 0)
    out, truth, _ = apply_structure(pd.DataFrame(rows), [RegionalGap("Tibet", 10)], 0)
    assert set(out.loc[len(rows):, "province_or_state"]) == {"Tibet"} and len(truth) == 3


# ------------------------------------------------------------------------------------------------
# The real offers of three IDC sources (Beijing tier-1, Inner Mongolia, Jiangsu)
# ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def real_offers() -> pd.DataFrame:
    return load_offers(sources=["idc_sinnet_bj", "idc_ulanqab", "idc_nanjing"])


def test_on_real_offers_every_truth_row_is_what_the_offers_end_up_with(real_offers):
    effects = [RegionalGap("Inner Mongolia", 25), SliceRatio(0.4), ServerRatio(0.9),
               MonthlyRatio(0.3)]
    out, truth, notes = apply_structure(real_offers, effects, 1)
    truth = pd.DataFrame(truth, columns=TRUTH_COLUMNS)
    assert list(out.columns[:len(OFFER_COLUMNS)]) == list(OFFER_COLUMNS)
    assert out["offer_id"].is_unique and len(out) > len(real_offers)
    clones = out.iloc[len(real_offers):]
    assert (clones["source"] == "idc_sinnet_bj").all() and (clones["city"] == "Ulanqab").all()
    for effect in ("regional_gap", "slice_ratio", "server_ratio", "monthly_ratio"):
        assert (truth["effect"] == effect).any(), effect
    for row in truth.itertuples():
        asked = row.detail.get("requested_ratio", 1 - row.detail.get("requested_pct", 0) / 100)
        assert row.ratio == pytest.approx(asked, rel=1e-5), row
    gaps = truth[truth["effect"] == "regional_gap"]
    assert set(gaps["vendor"]) == set(real_offers.loc[real_offers["source"] == "idc_sinnet_bj",
                                                      "vendor"])
    # Every changed price is still the listed amount over its hours and units.
    hours = out["billing_period"].map(HOURS_PER_PERIOD).astype(float)
    units = out["gpu_count"].astype(float) * out["gpu_fraction"].astype(float)
    implied = out["price_amount"].astype(float) / (hours * units)
    assert ((implied / out["price_per_gpu_hour_cny"].astype(float) - 1).abs() < 1e-5).all()
    # The Ulanqab vGPU slice (variant NULL) has no NULL-variant whole card: noted, unchanged.
    assert any("slice_ratio" in n and "idc_ulanqab" in n for n in notes)
