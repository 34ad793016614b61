"""GCP's SkyPilot catalog lists a VM's price and its GPUs' price apart, as the catalog documents
(skypilot-catalog issue #31): a host row (InstanceType set, no accelerator: the VM without its
GPUs) and a GPU-only row per accelerator, count and zone (no InstanceType). An instance that
comes with its GPUs (A2, A3, A4, G2) costs host + GPUs in the same zone; that sum is the offer,
never either row alone. Its line is the host row's (the GPU row's is kept as
vendor_data.accelerator_line). GPUs attached to any N1 VM (T4, V100, P100, P4, K80) have no
host of their own in the catalog: they are left out, counted. Pure.
"""

from __future__ import annotations

import re
from decimal import Decimal

from pipelines.backfill.offers import ArchiveOffer, Parsed, count_left_out, positive, whole_count

# machine type -> (accelerator, count) of the GPUs it comes with
HOST_FAMILIES: tuple[tuple[re.Pattern, str, int | None], ...] = (
    (re.compile(r"^a2-highgpu-(\d+)g$"), "A100", None),
    (re.compile(r"^a2-megagpu-(16)g$"), "A100", None),
    (re.compile(r"^a2-ultragpu-(\d+)g$"), "A100-80GB", None),
    (re.compile(r"^a3-(?:highgpu|edgegpu)-(\d+)g$"), "H100", None),
    (re.compile(r"^a3-megagpu-(8)g$"), "H100-MEGA", None),
    (re.compile(r"^a3-ultragpu-(8)g$"), "H200", None),
    (re.compile(r"^a4-highgpu-(8)g$"), "B200", None),
)
# G2 machines come with L4s, by vCPUs (GCP's machine-type table)
G2_L4_BY_VCPUS = {4: 1, 8: 1, 12: 1, 16: 1, 32: 1, 24: 2, 48: 4, 96: 8}
G2_RE = re.compile(r"^g2-standard-(\d+)$")


def host_accelerator(instance_type: str) -> tuple[str, int] | None:
    """The (accelerator, count) a GCP machine type comes with; None for one without GPUs."""
    for pattern, name, _ in HOST_FAMILIES:
        if m := pattern.match(instance_type):
            return name, int(m[1])
    if (m := G2_RE.match(instance_type)) and int(m[1]) in G2_L4_BY_VCPUS:
        return "L4", G2_L4_BY_VCPUS[int(m[1])]
    return None


def _count(text: str | None) -> int | None:
    counted = whole_count(text)
    return int(counted) if counted and counted.isdigit() else None


def _sum(*prices: str | None) -> str | None:
    if any(p is None for p in prices):
        return None
    return str(sum(Decimal(p) for p in prices))  # type: ignore[arg-type]


def combine_gcp(rows: list[tuple[int, dict]]) -> Parsed:
    gpus: dict[tuple[str, int, str], tuple[int, dict]] = {}
    for line, row in rows:
        if row.get("AcceleratorName") and not row.get("InstanceType"):
            key = (row["AcceleratorName"], _count(row.get("AcceleratorCount")) or 0,
                   row.get("AvailabilityZone", ""))
            gpus.setdefault(key, (line, row))
    used: set[tuple] = set()
    offers: list[ArchiveOffer] = []
    left_out: dict[str, int] = {}
    for line, row in rows:
        instance = row.get("InstanceType", "")
        if not instance:
            continue
        if row.get("AcceleratorName"):      # a row that states its GPUs is an instance whole
            attached = (row["AcceleratorName"], _count(row.get("AcceleratorCount")) or 0)
            gpu_row, gpu_line = None, None
        else:
            attached = host_accelerator(instance)
            if attached is None:
                count_left_out(left_out, "no accelerator (a CPU instance)")
                continue
            key = (*attached, row.get("AvailabilityZone", ""))
            if key not in gpus:
                count_left_out(left_out, "host row without its GPU row in the zone")
                continue
            used.add(key)
            gpu_line, gpu_row = gpus[key]
        on_demand = _sum(positive(row.get("Price")),
                         *([positive(gpu_row.get("Price"))] if gpu_row else []))
        spot = _sum(positive(row.get("SpotPrice")),
                    *([positive(gpu_row.get("SpotPrice"))] if gpu_row else []))
        extra = {"vendor_data": {"accelerator_line": gpu_line}} if gpu_line else {}
        if row.get("vCPUs"):
            extra["vcpus_text"] = row["vCPUs"]
        if row.get("MemoryGiB"):
            extra["memory_text"] = f"{row['MemoryGiB']} GiB"
        for kind, price in (("on_demand", on_demand), ("spot", spot)):
            if price:
                offers.append(ArchiveOffer("gcp", line, {
                    "sku": instance, "gpu_text": attached[0], "gpu_count": str(attached[1]),
                    "region_text": row.get("AvailabilityZone") or row.get("Region", ""),
                    "offer_kind": kind, "price_amount": price, "currency": "USD",
                    "billing_period": "hour", **extra}))
    if unpaired := len(gpus.keys() - used):
        left_out["GPU-only row with no host of its own (attached to any N1 VM)"] = unpaired
    return Parsed(offers, left_out)
