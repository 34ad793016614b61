"""One reading of card and place text for the CLI, the advisor and the alert rules."""

from decimal import Decimal

import pytest

from pipelines.lookup import KnownPlace, LookupTextError, fold, match_card, match_place, place_hint

KNOWN = [KnownPlace("北京", "CN", "Beijing", "Beijing"),
         KnownPlace("内蒙B区", "CN", "Inner Mongolia", "Ulanqab"),
         KnownPlace("cn-beijing", "CN", "Beijing", "Beijing"),
         KnownPlace("eastus", "US", "Virginia", None),
         KnownPlace("texas", "US", "Texas", None)]


@pytest.mark.parametrize(("text", "models", "fraction"), [
    ("A100-80GB", ("A100-80GB",), None),
    ("a100 80g", ("A100-80GB",), None),
    ("ａ１００－８０ＧＢ", ("A100-80GB",), None),          # full-width
    ("A100", ("A100-40GB", "A100-80GB"), None),           # a family alone: every model
    ("H100 NVL", ("H100-94GB",), None),               # a variant that fixes the memory
    ("A100 80G MIG 3g.40gb", ("A100-80GB",), Decimal("0.5")),
])
def test_card_text_names_models_and_slices(text, models, fraction):
    match = match_card(text)
    assert set(match.models) == set(models)
    assert match.fraction == fraction


def test_unknown_card_lists_the_known_ones():
    with pytest.raises(LookupTextError, match=r"Known cards: .*A100-80GB"):
        match_card("Voodoo 5")


@pytest.mark.parametrize(("text", "column", "values"), [
    ("北京", "province_or_state", ("Beijing",)),
    ("beijing", "province_or_state", ("Beijing",)),
    ("内蒙古", "province_or_state", ("Inner Mongolia",)),
    ("Inner Mongolia", "province_or_state", ("Inner Mongolia",)),
    ("Ulanqab", "city", ("Ulanqab",)),
    ("乌兰察布", "city", ("Ulanqab",)),                     # a Chinese city name is a place
    ("us", "country", ("US",)),
    ("EASTUS", "region_code", ("eastus",)),
    ("内蒙B区", "region_code", ("内蒙B区",)),               # a code ending in 区 stays a code
    ("Texas, US", "province_or_state", ("Texas",)),       # another spelling of a place
])
def test_place_text_against_the_data(text, column, values):
    place = match_place(text, KNOWN)
    assert (place.column, place.values) == (column, values)


def test_places_without_data_use_the_region_table():
    assert match_place("江苏省").values == ("Jiangsu",)
    assert match_place("Atlantis") is None


def test_a_place_matches_the_rows_it_names():
    place = match_place("北京", KNOWN)
    assert [k.region_code for k in KNOWN if place.matches(k)] == ["北京", "cn-beijing"]
    code = match_place("EastUS", KNOWN)
    assert [k.region_code for k in KNOWN if code.matches(k)] == ["eastus"]


def test_hint_names_provinces_in_both_scripts():
    hint = place_hint(KNOWN)
    assert "Beijing (北京)" in hint and "US" in hint and "5 vendor region codes" in hint


def test_fold_is_loose_about_width_case_and_spaces():
    assert fold("  ＥＡＳＴ   us ") == "east us"
