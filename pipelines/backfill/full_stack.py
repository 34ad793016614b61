"""the-full-stack/the-full-stack-website's `docs/cloud-gpus/cloud-gpus.csv`: a curated table,
one row per cloud and instance (Cloud, GPU Type, GPU Arch, GPUs, GPU RAM, vCPUs, RAM, On-demand,
Per-GPU, Spot, Name), prices in USD per instance-hour. Each row is an on-demand offer, and a
spot offer where Spot is given. The table states no place: its prices are the clouds' headline
USD list prices, placed in the US (cloud_gpus.HEADLINE_REGION). Pure.
"""

from __future__ import annotations

from pipelines.backfill.cloud_gpus import HEADLINE_REGION
from pipelines.backfill.offers import ArchiveOffer, Parsed, count_left_out, csv_rows, positive


def _money(text: str | None) -> str | None:
    return positive((text or "").replace("$", "").replace(",", "").strip())


def parse_full_stack(text: str) -> Parsed:
    """The offers of one version of cloud-gpus.csv."""
    offers: list[ArchiveOffer] = []
    left_out: dict[str, int] = {}
    for line, row in csv_rows(text):
        cloud, card = row.get("Cloud", ""), row.get("GPU Type", "")
        if not cloud or not card:
            count_left_out(left_out, "a row without a cloud or a card")
            continue
        count = row.get("GPUs") or "1"
        sku = row.get("Name") or f"{card} x{count}"
        extra = {}
        if row.get("vCPUs"):
            extra["vcpus_text"] = row["vCPUs"]
        if row.get("RAM"):
            extra["memory_text"] = f"{row['RAM']} GB"
        priced = False
        for kind, column in (("on_demand", "On-demand"), ("spot", "Spot")):
            if price := _money(row.get(column)):
                priced = True
                offers.append(ArchiveOffer(cloud, line, {
                    "sku": sku, "gpu_text": card, "gpu_count": count,
                    "region_text": HEADLINE_REGION, "offer_kind": kind, "price_amount": price,
                    "currency": "USD", "billing_period": "hour", **extra}))
        if not priced:
            count_left_out(left_out, "no price")
    return Parsed(offers, left_out)
