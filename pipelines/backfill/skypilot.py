"""SkyPilot's catalog, `catalogs/v<N>/<cloud>/vms.csv` of skypilot-org/skypilot-catalog: one row
per instance type and region (and zone, where the cloud has zones), with its accelerator name and
count, vCPUs, memory, on-demand `Price` and `SpotPrice` in USD per instance-hour. Columns are read
by name (their order differs between schema versions). Pure.

* A row without an accelerator is a CPU instance: not an offer.
* A spot price that is empty or zero is no spot offer (vast.ai's SpotPrice is always 0.00).
* AWS and Azure list one row per availability zone with the region's on-demand price: the
  on-demand offer is read once per region (its first row), the spot offer once per zone (the
  zone is part of its sku, the price differs by zone).
* GCP and RunPod place an offer by its zone or data centre (the zone text names its region).
* vast.ai's region is 'Texas, US, NA' (place, country, continent): the continent is dropped.
* GCP's host and GPU-only rows are combined (skypilot_gcp.py).
"""

from __future__ import annotations

import re

from pipelines.backfill.offers import (
    ArchiveOffer,
    Parsed,
    count_left_out,
    csv_rows,
    positive,
    whole_count,
)
from pipelines.backfill.skypilot_gcp import combine_gcp

ARCHIVE_FILE_RE = re.compile(r"^catalogs/v(?P<version>\d+)/(?P<cloud>[^/]+)/vms\.csv$")
PLACED_BY_ZONE = frozenset({"gcp", "runpod"})
CONTINENT_SUFFIX_RE = re.compile(r",\s*[A-Z]{2}\s*,\s*[A-Z]{2}\s*$")


def catalog_file(path: str) -> tuple[str, int] | None:
    """(cloud, schema version) of a catalog file's path; None for any other file."""
    m = ARCHIVE_FILE_RE.match(path)
    return (m["cloud"], int(m["version"])) if m else None


def region_text(cloud: str, row: dict) -> str:
    zone = row.get("AvailabilityZone", "")
    if cloud in PLACED_BY_ZONE and zone:
        return zone
    region = row.get("Region", "")
    if cloud == "vast" and CONTINENT_SUFFIX_RE.search(region):
        return region.rsplit(",", 1)[0].strip()
    return region


def gpu_text(cloud: str, row: dict) -> str:
    """The card as the catalog names it; vast.ai's instance type also says the form factor
    ('1x-H100_SXM-32-65536' -> 'H100 SXM')."""
    name = row.get("AcceleratorName", "")
    if cloud == "vast":
        parts = row.get("InstanceType", "").split("-")
        if len(parts) >= 2 and parts[1]:
            return parts[1].replace("_", " ")
    return name


def machine(row: dict) -> dict:
    out = {}
    if row.get("vCPUs"):
        out["vcpus_text"] = row["vCPUs"]
    if row.get("MemoryGiB"):
        out["memory_text"] = f"{row['MemoryGiB']} GiB"
    return out


def offer_fields(sku: str, gpu: str, count: str | None, place: str, kind: str, price: str,
                 extra: dict) -> dict:
    return {"sku": sku, "gpu_text": gpu, "gpu_count": count, "region_text": place,
            "offer_kind": kind, "price_amount": price, "currency": "USD",
            "billing_period": "hour", **extra}


def parse_vms(text: str, cloud: str) -> Parsed:
    """The offers of one version of `<cloud>/vms.csv`."""
    rows = csv_rows(text)
    if cloud == "gcp":
        return combine_gcp(rows)
    offers: list[ArchiveOffer] = []
    left_out: dict[str, int] = {}
    seen: set[tuple] = set()
    for line, row in rows:
        if not row.get("AcceleratorName"):
            count_left_out(left_out, "no accelerator (a CPU instance)")
            continue
        sku, place, zone = row.get("InstanceType", ""), region_text(cloud, row), \
            row.get("AvailabilityZone", "")
        per_zone = bool(zone) and cloud not in PLACED_BY_ZONE
        common = (gpu_text(cloud, row), whole_count(row.get("AcceleratorCount")), place)
        if (price := positive(row.get("Price"))) and (sku, place, "on_demand") not in seen:
            seen.add((sku, place, "on_demand"))
            offers.append(ArchiveOffer(cloud, line, offer_fields(
                sku, *common, "on_demand", price, machine(row))))
        if spot := positive(row.get("SpotPrice")):
            spot_sku = f"{sku} {zone}" if per_zone else sku
            offers.append(ArchiveOffer(cloud, line, offer_fields(
                spot_sku, *common, "spot", spot, machine(row))))
        if not price and not spot:
            count_left_out(left_out, "no price")
    return Parsed(offers, left_out)
