"""The item boundary (pipelines/normalize/item_types.py): a raw offer field holding the wrong JSON
type is quarantined at stage "item" with a reason naming the field and what it held, never as
stage "error" with a Python TypeError; every RawOffer field has a declared type."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipelines.normalize.batch import normalize_pending
from pipelines.normalize.item_types import FIELD_TYPES, check_item_types, type_problems
from pipelines.normalize.offer import normalize_offer
from pipelines.normalize.quarantine import Quarantined
from spiders.items import RawOffer

OFFER = {"source": "idc_sinnet_bj", "vendor": "光环新网", "vendor_kind": "idc", "sku": "A100-1",
         "gpu_text": "A100 80G", "gpu_count": 8, "region_text": "北京", "offer_kind": "on_demand",
         "price_text": "¥62.00/时", "billing_period": "hour", "available": True,
         "url": "https://example.test/p", "raw_ref": "ab" * 32,
         "observed_at": "2026-11-30T09:00:00Z", "vendor_data": {}}


def test_every_raw_offer_field_has_a_declared_type():
    assert set(RawOffer.fields) == set(FIELD_TYPES)


def test_the_good_offer_passes_the_boundary_and_normalizes():
    assert check_item_types(OFFER) is OFFER
    assert normalize_offer(OFFER)["gpu_count"] == 8


@pytest.mark.parametrize(("field", "value", "reason"), [
    ("gpu_text", {"name": "A100"}, "gpu_text holds an object {'name': 'A100'}, not text"),
    ("region_text", ["北京"], "region_text holds an array ['北京'], not text"),
    ("sku", 12345, "sku holds a number 12345, not text"),
    ("sku", True, "sku holds true/false True, not text"),
    ("gpu_count", [8], "gpu_count holds an array [8], not a number or text"),
    ("gpu_count", False, "gpu_count holds true/false False, not a number or text"),
    ("vram_gb", {"gb": 80}, "vram_gb holds an object {'gb': 80}, not a number or text"),
    ("available", "yes", "available holds text 'yes', not true/false"),
    ("price_per_card", 1, "price_per_card holds a number 1, not true/false"),
    ("vendor_data", "[]", "vendor_data holds text '[]', not an object"),
    ("observed_at", 1764493200, "observed_at holds a number 1764493200, not text"),
])
def test_a_wrong_type_is_quarantined_at_stage_item_naming_field_and_value(field, value, reason):
    with pytest.raises(Quarantined) as refused:
        normalize_offer({**OFFER, field: value})
    assert refused.value.stage == "item"
    assert refused.value.reason == reason


def test_every_wrong_field_is_named_in_one_reason():
    problems = type_problems({**OFFER, "gpu_text": {}, "sku": [], "available": "no"})
    assert [p.split(" ")[0] for p in problems] == ["sku", "gpu_text", "available"]


@pytest.mark.parametrize("item", [[OFFER], "an offer", 7, None])
def test_an_item_that_is_not_an_object_is_an_item_problem(item):
    with pytest.raises(Quarantined) as refused:
        check_item_types(item)
    assert refused.value.stage == "item" and "not an object" in refused.value.reason


def test_a_megabyte_value_is_named_short():
    [problem] = type_problems({**OFFER, "sku": ["x" * 1_000_000]})
    assert problem.startswith("sku holds an array ['xxx") and len(problem) < 150


def test_unset_fields_pass_the_boundary():
    assert type_problems({field: None for field in FIELD_TYPES}) == []


def test_the_object_typed_card_name_of_the_issue_lands_in_quarantine_at_stage_item():
    """Issue 30: a JSON object where a card name belongs was stage `error` with "TypeError:
    normalize() argument 2 must be str, not dict"."""
    pending = [("c1", 1, "idc_sinnet_bj", json.dumps({**OFFER, "gpu_text": {"$gt": ""}})),
               ("c1", 2, "idc_sinnet_bj", json.dumps(OFFER))]
    batch, quarantined = normalize_pending(pending)
    assert len(batch) == 1
    [refusal] = quarantined
    assert refusal["stage"] == "item"
    assert refusal["reason"] == "gpu_text holds an object {'$gt': ''}, not text"
    assert "TypeError" not in refusal["reason"]


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                           lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                           max_leaves=8)


@given(field=st.sampled_from(sorted(FIELD_TYPES)), value=JSON_VALUES)
def test_any_json_value_in_any_field_is_an_observation_or_a_readable_refusal(field, value):
    """Whatever JSON a field holds, normalization either takes the offer or names a stage; a
    wrong type is never a parser's exception (stage `error`)."""
    try:
        normalize_offer({**OFFER, field: value})
    except Quarantined as refused:
        if type_problems({**OFFER, field: value}):
            assert refused.stage == "item" and refused.reason.startswith(field)
    except (KeyError, ValueError):
        # a required field unset or an observed_at that is no date: the batch's own stage
        assert value is None or field == "observed_at"
