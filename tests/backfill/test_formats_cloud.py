"""The priced-file archives, one version at a time: Google Cloud's pricing.yml (gcp-pricing) and
priceserver's Alibaba price file (alibaba-priceserver). Inputs are written here in the files'
shapes (pricing.yml: `compute: instance: <type>: {<gpu key>: n, cost: {<region>: {hour,
hour_spot, month ...}}, cpu, ram}`; alibabacloud_price.json: `{<region>: {instanceTypePrices:
{<type>: {gpu, vcpu, memory, onDemandPricePerHour, spotPricePerHour?}}}}`), with made-up prices;
one test per archive reads a real version when its clone is here."""

from __future__ import annotations

import json

import pytest

from pipelines.backfill.alibaba_priceserver import card_of, parse_alibaba_priceserver
from pipelines.backfill.archives import ARCHIVES
from pipelines.backfill.gcp_pricing import parse_gcp_pricing
from tests.backfill.archive_clones import clone_file

PRICING_YML = """---
about:
  generated: Thu Jan  2 03:45:00 2025
compute:
  instance:
    a2-highgpu-2g:
      a100: 2
      cost:
        us-central1:
          hour: 7.5
          hour_spot: 2.5
          month: 5475
        europe-west4:
          hour: 8.25
          month: 6022.5
      cpu: 24
      ram: 170
    n2-standard-4:
      cost:
        us-central1:
          hour: 0.2
      cpu: 4
      ram: 16
    g4-standard-6:
      cost:
        us-central1:
          hour: 1.5
          hour_spot: 0.6
      cpu: 6
      ram: 22
      rtx6000: 0.125
  license:
    a2-highgpu-2g:
      cost:
        rhel:
          hour: 0.13
region:
  us-central1:
    location: Iowa
"""


def _rows(parsed):
    return [(o.line, o.fields["sku"], o.fields["gpu_text"], o.fields["gpu_count"],
             o.fields["region_text"], o.fields["offer_kind"], o.fields["price_amount"])
            for o in parsed.offers]


def test_gcp_gpu_machine_types_are_an_on_demand_and_a_spot_offer_per_region():
    parsed = parse_gcp_pricing(PRICING_YML)
    assert _rows(parsed) == [
        (9, "a2-highgpu-2g", "A100 40GB", "2", "us-central1", "on_demand", "7.5"),
        (9, "a2-highgpu-2g", "A100 40GB", "2", "us-central1", "spot", "2.5"),
        (13, "a2-highgpu-2g", "A100 40GB", "2", "europe-west4", "on_demand", "8.25"),
        (26, "g4-standard-6", "RTX PRO 6000 1/8", "1", "us-central1", "on_demand", "1.5"),
        (26, "g4-standard-6", "RTX PRO 6000 1/8", "1", "us-central1", "spot", "0.6"),
    ]
    first = parsed.offers[0].fields
    assert (first["currency"], first["billing_period"], first["vcpus_text"],
            first["memory_text"]) == ("USD", "hour", "24", "170 GB")
    assert first["vendor_data"] == {"gpu_key": "a100", "generated": "Thu Jan  2 03:45:00 2025"}
    assert parsed.left_out == {"no GPU (a CPU machine type)": 1}


@pytest.mark.parametrize(("change", "rows", "left_out"), [
    # an early version: no about: header, no hour_spot column
    (lambda t: t.replace("about:\n  generated: Thu Jan  2 03:45:00 2025\n", "")
     .replace("          hour_spot: 2.5\n", "").replace("          hour_spot: 0.6\n", ""),
     3, {"no GPU (a CPU machine type)": 1}),
    # a price cell that is not a number
    (lambda t: t.replace("hour: 8.25", "hour: n/a"), 4,
     {"no GPU (a CPU machine type)": 1, "no hourly price in the region": 1}),
    # a GPU the parser does not know: counted, never guessed
    (lambda t: t.replace("      a100: 2\n", "      b300: 2\n"), 2,
     {"no GPU (a CPU machine type)": 1, "a machine attribute the parser does not know (b300)": 1}),
    # a count that is no count of cards
    (lambda t: t.replace("a100: 2", "a100: 1.5"), 2,
     {"no GPU (a CPU machine type)": 1,
      "a machine type whose GPUs are not one key with a count": 1}),
])
def test_gcp_unhappy_versions(change, rows, left_out):
    parsed = parse_gcp_pricing(change(PRICING_YML))
    assert len(parsed.offers) == rows
    assert parsed.left_out == left_out


@pytest.mark.parametrize("text", [
    "", "compute:\n  license: {}\n", "about:\n  instance:\n",
    "compute:\n  instance:\n    a2-highgpu-1g:\n      a100: 1\n      cost: {a: [\n"])
def test_a_gcp_version_without_its_instance_section_or_not_yaml_is_unreadable(text):
    with pytest.raises(ValueError):
        parse_gcp_pricing(text)


def _alibaba(types: dict, region: str = "cn-beijing") -> str:
    return json.dumps({region: {"instanceTypePrices": types}}, separators=(",", ":"))


def _type(gpu, on_demand, spot=None):
    body = {"arch": "amd64", "vcpu": 8, "memory": 30.0, "gpu": gpu, "zones": ["cn-beijing-a"],
            "onDemandPricePerHour": on_demand}
    return {**body, "spotPricePerHour": spot} if spot is not None else body


def test_alibaba_gpu_types_are_offers_with_cards_from_our_family_table():
    text = _alibaba({
        "ecs.gn7i-c8g1.2xlarge": _type(1, 9.5, {"cn-beijing-a": 3.4319999217987061,
                                                 "cn-beijing-b": 0}),
        "ecs.gn7i-c99g1.99xlarge": _type(2, 19.0),
        "ecs.c6.large": _type(0, 0.5),
    })
    parsed = parse_alibaba_priceserver(text)
    assert _rows(parsed) == [
        (1, "ecs.gn7i-c8g1.2xlarge", "NVIDIA A10 24GB", "1", "cn-beijing", "on_demand", "9.5"),
        (1, "ecs.gn7i-c8g1.2xlarge cn-beijing-a", "NVIDIA A10 24GB", "1", "cn-beijing", "spot",
         "3.432"),
        (1, "ecs.gn7i-c99g1.99xlarge", "NVIDIA A10 24GB", "2", "cn-beijing", "on_demand", "19.0"),
    ]
    assert {o.fields["currency"] for o in parsed.offers} == {"CNY"}
    assert parsed.offers[0].fields["memory_text"] == "30 GiB"
    assert parsed.left_out == {"no GPU (a CPU instance type)": 1, "a spot price of 0 or none": 1}


@pytest.mark.parametrize(("types", "left_out"), [
    ({"ecs.gn5-c4g1.xlarge": _type(1, 10.0)},
     {"a GPU family not in alibaba_cn_gpus.csv (gn5)": 1}),
    ({"ecs.sgn7i-vws-m99.xlarge": _type(1, 3.0)},
     {"an instance type not in alibaba_cn_gpus.csv, of a family whose card differs by type "
      "(sgn7i)": 1}),
    ({"ecs.gn6v-c8g1.4xlarge": _type(2, 0)}, {"an on-demand price of 0 or none": 1}),
    ({"ecs.gn6v-c8g1.4xlarge": _type(2, "52.92")}, {"an on-demand price of 0 or none": 1}),
    ({"ecs.gn6v-c8g1.4xlarge": _type("2", 52.92)}, {"no GPU (a CPU instance type)": 1}),
])
def test_alibaba_rows_that_are_no_offer_are_counted_by_why(types, left_out):
    parsed = parse_alibaba_priceserver(_alibaba(types))
    assert parsed.offers == []
    assert parsed.left_out == left_out


@pytest.mark.parametrize("text", ["", "[1, 2]", "{'cn-beijing': {}}"])
def test_an_alibaba_version_that_is_not_an_object_of_regions_is_unreadable(text):
    with pytest.raises(ValueError):
        parse_alibaba_priceserver(text)


@pytest.mark.parametrize(("instance_type", "card"), [
    ("ecs.gn7e-c16g1.16xlarge", "NVIDIA A100 80GB"), ("ecs.gn6i-c99g1.xlarge", "NVIDIA T4 16GB"),
    ("ecs.vgn6i-m8-vws.2xlarge", "NVIDIA T4 16GB 1/2"), ("ecs.vgn7i-vws-m99.xlarge", None),
    ("ecs.gn5-c8g1.2xlarge", None)])
def test_alibaba_cards_by_type_then_by_a_family_of_one_whole_card(instance_type, card):
    assert card_of(instance_type)[0] == card


def test_the_archives_dates_say_which_carry_the_calendar():
    assert ARCHIVES["gcp-pricing"].calendar_signal
    assert not any(ARCHIVES[a].calendar_signal for a in (
        "alibaba-priceserver", "featurize-doc", "ustc-saids", "ikkem"))


def test_a_real_pricing_yml_version_2026_07_30():
    text = clone_file("Cyclenerd/google-cloud-pricing-cost-calculator",
                      "fd66b26ff84fee5cdd94f341ea89206e76c06b99", "pricing.yml")
    parsed = parse_gcp_pricing(text)
    rows = {(o.fields["sku"], o.fields["region_text"], o.fields["offer_kind"]):
            o.fields["price_amount"] for o in parsed.offers}
    assert rows[("a2-highgpu-1g", "asia-east1", "on_demand")] == "3.790142"
    assert rows[("a2-highgpu-1g", "asia-east1", "spot")] == "0.444055"
    assert len(parsed.offers) == 1968
    assert parsed.left_out == {"no GPU (a CPU machine type)": 502}


def test_a_real_alibaba_price_file_2024_10_09():
    text = clone_file("cloudpilot-ai/priceserver", "93dab418095a0191a4a1e166c287307629c98c50",
                      "pkg/client/builtin-data/alibabacloud_price.json")
    parsed = parse_alibaba_priceserver(text)
    rows = {(o.fields["sku"], o.fields["region_text"]): o.fields["price_amount"]
            for o in parsed.offers}
    assert rows[("ecs.gn7i-c8g1.2xlarge", "cn-wulanchabu")] == "8.5794"
    assert {o.fields["offer_kind"] for o in parsed.offers} == {"on_demand"}
    assert len(parsed.offers) == 226
