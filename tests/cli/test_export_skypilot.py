"""`gpuprices export --format skypilot`: SkyPilot's catalog columns, one vms.csv per source, one
row per instance type and region with the on-demand and spot prices side by side."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
import pytest

from tests.helpers.published import ALIBABA, AZURE, SINNET, gpuprices, offer, publish

SKYPILOT_HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,"
                   "SpotPrice,Region,AvailabilityZone")


def same_instance(row: dict, sku: str) -> dict:
    """The vendor lists on-demand and spot under one instance type."""
    return {**row, "sku": sku}


@pytest.fixture(scope="module")
def catalog_dir(tmp_path_factory):
    rows = [
        # the vendor states the machine (Standard_NC24ads_A100_v4: 24 vCPUs, 220 GiB)
        {**same_instance(offer(*AZURE, "A100-80GB", "3.673", currency="USD"), "Standard_NC24"),
         "vcpus": Decimal("24"), "memory_gib": Decimal("220"), "disk_gb": Decimal("64")},
        same_instance(offer(*AZURE, "A100-80GB", "0.80", currency="USD", kind="spot"),
                      "Standard_NC24"),
        # the source states no machine for this one
        {**offer(*AZURE, "H100-80GB", "55.84", currency="USD", count=8), "vcpus": None,
         "memory_gib": None},
        same_instance(offer(*ALIBABA, "A100-40GB", "71", kind="spot"), "ecs.gn7"),   # CNY
        offer(*SINNET, "A100-80GB", "24.50", fraction="0.25"),                      # a slice
        offer(*SINNET, "A100-80GB", "11800", period="month"),                       # left out
        offer(*SINNET, "A100-80GB", "50", kind="reserved"),                          # left out
    ]
    data_dir = publish(tmp_path_factory.mktemp("skypilot") / "data", rows)
    out = tmp_path_factory.mktemp("export")
    result = gpuprices(data_dir, "export", "--format", "skypilot", "--out", str(out))
    assert result.exit_code == 0, result.output
    return out / "skypilot"


def read(catalog_dir, source: str) -> pd.DataFrame:
    return pd.read_csv(catalog_dir / source / "vms.csv")


def test_one_catalog_per_source_with_skypilot_columns(catalog_dir):
    assert sorted(p.name for p in catalog_dir.iterdir()) == ["alibaba_cn", "azure",
                                                             "idc_sinnet_bj"]
    for source in catalog_dir.iterdir():
        assert (source / "vms.csv").read_text().splitlines()[0] == SKYPILOT_HEADER
    assert not list(catalog_dir.rglob(".*.tmp"))


def test_on_demand_and_spot_side_by_side_in_usd_per_instance_hour(catalog_dir):
    azure = read(catalog_dir, "azure").set_index("InstanceType")
    assert len(azure) == 2                     # one row per instance type and region
    nc24 = azure.loc["Standard_NC24"]
    assert (nc24.Price, nc24.SpotPrice, nc24.Region) == (3.673, 0.80, "eastus")
    assert (nc24.AcceleratorName, nc24.AcceleratorCount) == ("A100-80GB", 1.0)
    assert (nc24.vCPUs, nc24.MemoryGiB) == (24.0, 220.0)      # stated by the source
    h100 = azure.drop("Standard_NC24").iloc[0]
    assert (h100.Price, h100.AcceleratorCount) == (55.84, 8.0)   # the instance, not one GPU
    assert pd.isna(h100.SpotPrice) and pd.isna(h100.vCPUs) and pd.isna(h100.MemoryGiB)
    assert pd.isna(h100.AvailabilityZone)
    [spot_only] = read(catalog_dir, "alibaba_cn").itertuples()
    assert pd.isna(spot_only.Price) and spot_only.SpotPrice == 10.0   # 71 CNY at 7.1 CNY/USD


def test_slices_are_fractional_and_other_billing_is_left_out(catalog_dir):
    [slice_row] = read(catalog_dir, "idc_sinnet_bj").itertuples()    # month and reserved: gone
    assert slice_row.AcceleratorCount == 0.25
    assert slice_row.Price == round(24.50 / 7.1, 4)                   # the slice's own price
