"""The archive parsers, one version at a time: which rows are offers, at which line, with which
price and place; GCP's host and GPU-only rows combined; curated tables' cells and areas; and
what a version that cannot be read does."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.backfill.alibaba_priceserver import parse_alibaba_priceserver
from pipelines.backfill.cloud_gpus import card_text, parse_cloud_gpus, region_text
from pipelines.backfill.featurize_doc import parse_featurize_doc
from pipelines.backfill.full_stack import parse_full_stack
from pipelines.backfill.gcp_pricing import parse_gcp_pricing
from pipelines.backfill.ikkem import parse_ikkem
from pipelines.backfill.offers import csv_rows, positive, whole_count
from pipelines.backfill.skypilot import catalog_file, parse_vms
from pipelines.backfill.skypilot_gcp import host_accelerator
from pipelines.backfill.ustc_saids import parse_ustc_saids
from tests.backfill.archive_repos import (
    AWS_HEADER,
    aws_csv,
    cloud_gpus_json,
    full_stack_csv,
    gcp_csv,
    lambda_csv,
)


def _offers(parsed):
    return [(o.line, o.fields["sku"], o.fields["region_text"], o.fields["offer_kind"],
             o.fields.get("price_amount") or o.fields.get("price_text")) for o in parsed.offers]


@pytest.mark.parametrize(("path", "found"), [
    ("catalogs/v7/aws/vms.csv", ("aws", 7)),
    ("catalogs/v10/gcp/vms.csv", ("gcp", 10)),
    ("catalogs/v7/aws/images.csv", None),
    ("catalogs/v7/aws/vms.csv.bak", None),
    ("v7/aws/vms.csv", None),
])
def test_catalog_files_are_known_by_path(path, found):
    assert catalog_file(path) == found


def test_aws_on_demand_once_per_region_spot_per_zone_cpu_left_out():
    parsed = parse_vms(aws_csv(32.7726, 12.5), "aws")
    assert _offers(parsed) == [
        (2, "p4d.24xlarge", "us-east-1", "on_demand", "32.7726"),
        (2, "p4d.24xlarge use1-az1", "us-east-1", "spot", "12.5000"),
        (3, "p4d.24xlarge use1-az2", "us-east-1", "spot", "13.7500"),
    ]
    assert parsed.left_out == {"no accelerator (a CPU instance)": 1}
    assert parsed.offers[0].fields["gpu_count"] == "8"
    assert parsed.offers[0].fields["memory_text"] == "1152.0 GiB"


def test_empty_and_zero_spot_prices_are_no_offer():
    vast = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,"
            "SpotPrice,Region\n"
            "1x-H100_SXM-32-65536,H100,1,32,64.0,{},1.80,0.00,\"Texas, US, NA\"\n"
            "2x-RTX_4090-32-65536,RTX4090,2,32,64.0,{},0.00,0.00,\"Texas, US, NA\"\n")
    parsed = parse_vms(vast, "vast")
    assert _offers(parsed) == [(2, "1x-H100_SXM-32-65536", "Texas, US", "on_demand", "1.80")]
    assert parsed.offers[0].fields["gpu_text"] == "H100 SXM"
    assert parsed.left_out == {"no price": 1}
    assert _offers(parse_vms(aws_csv(30.0), "aws")) == [
        (2, "p4d.24xlarge", "us-east-1", "on_demand", "30.0000")]


def test_columns_are_read_by_name_whatever_their_order():
    assert _offers(parse_vms(lambda_csv(2.49), "lambda")) == [
        (2, "gpu_1x_h100_pcie", "us-east-1", "on_demand", "2.49")]


def test_gcp_host_and_gpu_rows_are_one_offer_and_a_gpu_alone_is_none():
    parsed = parse_vms(gcp_csv(0.73948, 2.93391), "gcp")
    assert _offers(parsed) == [
        (2, "a2-highgpu-1g", "us-central1-a", "on_demand", "3.67339"),
        (2, "a2-highgpu-1g", "us-central1-a", "spot", "1.22446"),
    ]
    assert parsed.offers[0].fields["vendor_data"] == {"accelerator_line": 4}
    assert parsed.left_out == {
        "no accelerator (a CPU instance)": 1,
        "GPU-only row with no host of its own (attached to any N1 VM)": 1}


def test_a_gcp_host_without_its_gpu_row_in_the_zone_is_no_offer():
    text = gcp_csv(0.73948, 2.93391).replace(
        ",A100,1.0,,,A100,2.93391,0.97797,us-central1,us-central1-a",
        ",A100,1.0,,,A100,2.93391,0.97797,us-central1,us-central1-b")
    parsed = parse_vms(text, "gcp")
    assert parsed.offers == []
    assert parsed.left_out["host row without its GPU row in the zone"] == 1


@pytest.mark.parametrize(("instance", "attached"), [
    ("a2-highgpu-8g", ("A100", 8)), ("a2-megagpu-16g", ("A100", 16)),
    ("a2-ultragpu-4g", ("A100-80GB", 4)), ("a3-highgpu-8g", ("H100", 8)),
    ("a3-megagpu-8g", ("H100-MEGA", 8)), ("g2-standard-48", ("L4", 4)),
    ("g2-standard-4", ("L4", 1)), ("g2-standard-5", None), ("n1-standard-8", None),
    ("a2-highgpu-1gx", None),
])
def test_gcp_machine_types_name_the_gpus_they_come_with(instance, attached):
    assert host_accelerator(instance) == attached


def test_a_quoted_cell_over_two_lines_keeps_the_next_row_on_its_own_line():
    text = AWS_HEADER + '\np4d.24xlarge,A100,8,96,1152,"{\n}",32.77,,us-east-1,use1-az1\n' \
        "p5.48xlarge,H100,8,192,2048,,98.32,,us-east-1,use1-az1\n"
    assert [line for line, _ in csv_rows(text)] == [2, 4]


@given(st.lists(st.tuples(st.floats(0.01, 500), st.one_of(st.none(), st.floats(0.01, 500))),
                min_size=1, max_size=30))
def test_every_priced_aws_row_is_an_offer_on_its_own_line(prices):
    rows = [AWS_HEADER] + [
        f"p{n}.x,A100,8,96,1152,,{p:.4f},{'' if s is None else f'{s:.4f}'},us-east-{n},"
        f"use{n}-az1" for n, (p, s) in enumerate(prices, 1)]
    parsed = parse_vms("\n".join(rows) + "\n", "aws")
    kinds = [(o.line, o.fields["offer_kind"]) for o in parsed.offers]
    expected = [(n + 1, k) for n, (p, s) in enumerate(prices, 1)
                for k, v in (("on_demand", p), ("spot", s))
                if v is not None and f"{v:.4f}" != "0.0000"]
    assert kinds == expected


@settings(deadline=None)     # the first Featurize version loads the spider registry it reads
@given(st.text())
def test_a_version_of_any_text_parses_or_raises_value_error(text):
    for parse in (lambda t: parse_vms(t, "aws"), lambda t: parse_vms(t, "gcp"),
                  parse_full_stack, parse_cloud_gpus, parse_gcp_pricing,
                  parse_alibaba_priceserver, parse_featurize_doc, parse_ustc_saids, parse_ikkem):
        with contextlib.suppress(ValueError):   # the loader records it as unreadable
            parse(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("1.20", "1.20"), (" 3 ", "3"), ("0.00", None), ("", None), (None, None), ("nan", None),
    ("-1", None), ("inf", None), ("$3", None)])
def test_positive_prices(text, expected):
    assert positive(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("8.0", "8"), ("1", "1"), ("0.5", "0.5"), ("", None), (None, None), ("16.00", "16")])
def test_whole_counts(text, expected):
    assert whole_count(text) == expected


def test_cloud_gpus_cells_are_one_gpu_offers_placed_by_the_table():
    text = json.dumps({"data": [
        {"name": "Lambda Labs", "costa100_80": "$1.79", "costh100": "-", "costv100": "",
         "region": "US", "pricing-source": "https://lambdalabs.com/service/gpu-cloud"},
        {"name": "Scaleway", "costh100": "€2.73", "region": "Europe"},
        {"name": "Vultr", "costa100_40": "$2.60", "cost4090": None, "ssh": True},
    ]}, indent=2)
    parsed = parse_cloud_gpus(text)
    assert _offers(parsed) == [
        (4, "Lambda Labs A100 80GB", "US", "on_demand", "$1.79"),
        (12, "Scaleway H100", "Europe", "on_demand", "€2.73"),
        (17, "Vultr A100 40GB", "US", "on_demand", "$2.60"),
    ]
    assert parsed.offers[0].fields["gpu_count"] == "1"
    assert parsed.offers[0].fields["url_listed"] == "https://lambdalabs.com/service/gpu-cloud"


def test_cloud_gpus_early_versions_are_a_bare_list():
    assert len(parse_cloud_gpus(json.dumps([{"name": "A", "costt4": "$0.5"}])).offers) == 1


@pytest.mark.parametrize("text", ["{", '{"data": 3}', '"x"'])
def test_a_cloud_gpus_version_that_is_not_the_table_is_refused(text):
    with pytest.raises(ValueError):
        parse_cloud_gpus(text)


@pytest.mark.parametrize(("key", "card"), [
    ("costa100_80", "A100 80GB"), ("costh100", "H100"), ("costl4", "L4"),
    ("costxyz9", "XYZ9"), ("credits", None), ("cost", None)])
def test_cloud_gpus_keys_name_cards(key, card):
    assert card_text(key) == card


@pytest.mark.parametrize(("region", "placed"), [
    ("Worldwide", "US"), ("global", "US"), ("", "US"), (None, "US"), ("India", "India"),
    ("Europe", "Europe")])
def test_cloud_gpus_headline_areas_are_the_us_list_price(region, placed):
    assert region_text(region) == placed


def test_full_stack_rows_are_instances_with_their_spot_price():
    text = full_stack_csv([("AWS", "A100 (80 GB)", 8, 40.97, None, "p4de.24xlarge"),
                           ("GCP", "A100 (40 GB)", 1, 3.67, 1.1, "a2-highgpu-1g"),
                           ("Lambda", "H100 (80 GB)", 1, 0, None, "")])
    parsed = parse_full_stack(text)
    assert _offers(parsed) == [
        (2, "p4de.24xlarge", "US", "on_demand", "40.97"),
        (3, "a2-highgpu-1g", "US", "on_demand", "3.67"),
        (3, "a2-highgpu-1g", "US", "spot", "1.10"),
    ]
    assert parsed.offers[0].fields["gpu_count"] == "8"
    assert parsed.left_out == {"no price": 1}


def test_cloud_gpus_json_helper_is_the_archive_shape():
    parsed = parse_cloud_gpus(cloud_gpus_json({"Amazon AWS": 5.12}))
    assert [o.cloud for o in parsed.offers] == ["Amazon AWS"]
