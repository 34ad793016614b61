"""cloudpilot-ai/priceserver's `pkg/client/builtin-data/alibabacloud_price.json`: the price data
its Alibaba client starts from, one JSON line, `{<region>: {"instanceTypePrices": {<type>:
{arch, vcpu, memory, gpu, zones, onDemandPricePerHour, spotPricePerHour?: {<zone>: price}}}}}`
(the struct is pkg/apis/types.go's InstanceTypePrice). Pure.

Currency: CNY. pkg/client/alibabacloud.go (at 60cef47 and 93dab41) fills onDemandPricePerHour
from `hours[0].price` of the instancePrice.json that the **zh** pricing page
(www.aliyun.com/price/ecs/ecs-pricing/zh) links, keeping no currency; that file is the one our
alibaba_cn spider reads, whose own `currency` field is what the spider records. The spot prices
come from DescribeSpotPriceHistory per zone (same file, `getSpotPrice`); they sit at a fifth to a
half of the on-demand price of the same type (ecs.c6.large, ap-northeast-1: 0.5874 on demand,
0.502-0.634 spot would be dearer than on demand if either were USD), so they are CNY too.

* Only GPU instance types (`gpu` above zero) are offers; each is resolved to its card through
  our family table spiders/vendors/alibaba_cn_gpus.csv: the type's own row, else its family's
  card when every row of the family names the same whole card (the count is the file's `gpu`).
  A family the table lacks is left out, counted by family.
* A price of 0 is no price (left out, counted). Spot offers are one per zone (the zone is part
  of the sku: the price differs by zone), placed in the zone's region.
* The file is one line: every offer is on line 1.
"""

from __future__ import annotations

import csv
import json
import re
from functools import cache
from pathlib import Path

import numpy

from pipelines.backfill.offers import ArchiveOffer, Parsed, count_left_out, positive, whole_count

CLOUD = "alibaba_cn"
CURRENCY = "CNY"
GPU_TABLE = Path(__file__).resolve().parents[2] / "spiders" / "vendors" / "alibaba_cn_gpus.csv"
FAMILY_RE = re.compile(r"^ecs\.([a-z0-9]+)")
SLICE_RE = re.compile(r"\s\d+/\d+$")


@cache
def gpu_table(path: Path = GPU_TABLE) -> tuple[dict[str, str], dict[str, str | None]]:
    """({instance type: card}, {family: card}) from the family table, a family by its root
    ('vgn7i' for the table's 'vgn7i-vws'); its card is None unless all its rows name one whole
    card (slices depend on the type)."""
    by_type: dict[str, str] = {}
    by_family: dict[str, set[str]] = {}
    with path.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            by_type[row["instance_type"]] = row["gpu_text"]
            by_family.setdefault(row["family"].split("-")[0], set()).add(row["gpu_text"])
    families = {family: next(iter(cards)) if len(cards) == 1 and
                not SLICE_RE.search(next(iter(cards))) else None
                for family, cards in by_family.items()}
    return by_type, families


def family_of(instance_type: str) -> str:
    """'ecs.gn7i-c8g1.2xlarge' -> 'gn7i'; 'ecs.vgn7i-vws-m4.xlarge' -> 'vgn7i'."""
    m = FAMILY_RE.match(instance_type)
    return m[1] if m else instance_type


def card_of(instance_type: str) -> tuple[str | None, str]:
    """(card, why not) of an instance type: its row's card, else its family's."""
    by_type, by_family = gpu_table()
    family = family_of(instance_type)
    if instance_type in by_type:
        return by_type[instance_type], ""
    if family not in by_family:
        return None, f"a GPU family not in alibaba_cn_gpus.csv ({family})"
    if by_family[family] is None:
        return None, f"an instance type not in alibaba_cn_gpus.csv, of a family whose card " \
                     f"differs by type ({family})"
    return by_family[family], ""


def _number(value: object, single: bool = False) -> str | None:
    """A JSON number above zero as a decimal string; `single`: the number was a float32 (the
    spot prices: getSpotPrice widens the API's float32, 3.432 -> 3.431999921798706), written
    back as the float32 it was."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        return positive(str(numpy.float32(value)) if single else str(value))
    except OverflowError:       # an integer beyond any float: no price
        return None


def _type_offers(region: str, itype: str, spec: dict, card: str,
                 left_out: dict[str, int]) -> list[ArchiveOffer]:
    common = {"sku": itype, "gpu_text": card, "gpu_count": whole_count(str(spec["gpu"])),
              "currency": CURRENCY, "billing_period": "hour"}
    if spec.get("vcpu"):
        common["vcpus_text"] = whole_count(str(spec["vcpu"]))
    if spec.get("memory"):
        common["memory_text"] = f"{whole_count(str(spec['memory']))} GiB"
    offers = []
    if price := _number(spec.get("onDemandPricePerHour")):
        offers.append(ArchiveOffer(CLOUD, 1, {**common, "region_text": region,
                                              "offer_kind": "on_demand", "price_amount": price}))
    else:
        count_left_out(left_out, "an on-demand price of 0 or none")
    spot = spec.get("spotPricePerHour")
    for zone, value in sorted(spot.items() if isinstance(spot, dict) else ()):
        if price := _number(value, single=True):
            offers.append(ArchiveOffer(CLOUD, 1, {
                **common, "sku": f"{itype} {zone}", "region_text": region, "offer_kind": "spot",
                "price_amount": price, "vendor_data": {"zone": zone}}))
        else:
            count_left_out(left_out, "a spot price of 0 or none")
    return offers


def parse_alibaba_priceserver(text: str) -> Parsed:
    """The GPU instance types' offers of one version of alibabacloud_price.json."""
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"alibabacloud_price.json is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise ValueError("alibabacloud_price.json: expected an object of regions")
    offers: list[ArchiveOffer] = []
    left_out: dict[str, int] = {}
    for region, regional in sorted(body.items()):
        types = regional.get("instanceTypePrices") if isinstance(regional, dict) else None
        if not isinstance(types, dict):
            count_left_out(left_out, "a region without instanceTypePrices")
            continue
        for itype, spec in sorted(types.items()):
            if not isinstance(spec, dict) or not _number(spec.get("gpu")):
                count_left_out(left_out, "no GPU (a CPU instance type)")
                continue
            card, why_not = card_of(itype)
            if card is None:
                count_left_out(left_out, why_not)
                continue
            offers += _type_offers(region, itype, spec, card, left_out)
    return Parsed(offers, left_out)
