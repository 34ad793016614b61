"""Vultr: the public plan listings (no key): cloud GPU plans incl. fractional A100s, and bare metal.

Every plan lists both an hourly price and a monthly one (Vultr bills hourly up to the monthly
figure), per location in `locations[]`; bare metal adds preemptible (spot) hourly and monthly.

Every GPU plan is yielded, whatever the card (A100, A40, L40S, H100, MI300X ...): which cards are
read is normalization's decision (spiders/parsing/card_catalog.csv), and a card it does not know
is quarantined there with the reason. Plans without a GPU (vc2, vhf, CPU bare metal) are skipped,
counted in the stat `vultr/cpu_plans_skipped`.

Machine specs: vCPUs from `vcpu_count` (bare metal: `cpu_threads`), memory from `ram` (MB), disk
from `disk` (GB each) x `disk_count`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.base.json_api import dig
from spiders.items import RawOffer

PLANS_URL = "https://api.vultr.com/v2/plans?type=all&per_page=500"
METAL_URL = "https://api.vultr.com/v2/plans-metal?per_page=500"
# Bare-metal plan ids carry the GPUs: vbm-112c-2048gb-8-h100-gpu, and without a count for one
# card (vbm-72c-480gb-gh200-gpu; gpuhunt's vultr provider reads them the same way).
METAL_RE = re.compile(r"-(?:(\d+)-)?([a-z0-9]+)-gpu$")
# The A100 and H100 bare-metal plans are HGX (SXM) boards of the 80 GB card.
METAL_CARDS = {"a100": "A100 80GB SXM4", "h100": "H100 80GB SXM5"}
# price field -> (offer kind, billing period)
PRICES = {"hourly_cost": ("on_demand", "hour"), "monthly_cost": ("on_demand", "month"),
          "hourly_cost_preemptible": ("spot", "hour"),
          "monthly_cost_preemptible": ("spot", "month")}


class VultrSpider(JsonApiSpider):
    name = "vultr"
    vendor = "Vultr"
    vendor_kind = "gpu_cloud"
    start_urls = [PLANS_URL, METAL_URL]
    min_offers = 20

    def offers(self, body: dict, response: Response) -> list:
        return self.list_at(body, "plans_metal" if "/plans-metal" in response.url else "plans",
                            response)

    def next_page(self, body: dict, response: Response) -> str | None:
        # Vultr pages with a cursor in meta.links.next ("" on the last page).
        cursor = dig(body, "meta.links.next")
        return f"{response.url.split('&cursor=')[0]}&cursor={cursor}" if cursor else None

    def parse_offer(self, plan: dict, response: Response) -> Iterable[RawOffer]:
        if plan.get("gpu_type"):
            gpus = cloud_gpu(plan["gpu_type"], plan.get("gpu_vram_gb"))
        elif m := METAL_RE.search(plan["id"]):
            gpus = {"gpu_text": METAL_CARDS.get(m[2], m[2].upper()), "gpu_count": int(m[1] or 1)}
        else:
            self.crawler.stats.inc_value("vultr/cpu_plans_skipped")
            return
        for field, (kind, period) in PRICES.items():
            price = plan.get(field)
            if price in (None, ""):   # not sold this way; a 0 goes on to quarantine (stage price)
                continue
            for location in plan.get("locations") or []:
                yield self.offer(
                    response, sku=plan["id"], **gpus, region_text=location, offer_kind=kind,
                    price_amount=str(price),
                    currency="USD", billing_period=period,
                    available=True,
                    vendor_data={"field": field, "gpu_type": plan.get("gpu_type"),
                                 "type": plan.get("type")},
                    **machine_fields(plan))


def machine_fields(plan: dict) -> dict[str, object]:
    """vcpus, memory (typed, as served) and disk_text of a plan (the whole VM or server the price
    buys), in the units of Vultr's plan fields: `ram` MB, `disk` GB per disk, `disk_count` disks
    (the disks as the plan lists them: "2 x 1920 GB NVMe")."""
    said: dict[str, object] = {}
    # a bare-metal plan counts physical cores (cpu_count) and threads; a vCPU is a thread
    if plan.get("cpu_threads"):
        said["vcpus"] = plan["cpu_threads"]
    elif plan.get("vcpu_count"):
        said["vcpus"] = plan["vcpu_count"]
    if plan.get("ram"):
        said.update(memory=plan["ram"], memory_unit="MB")
    if plan.get("disk"):
        count = plan.get("disk_count") or 1
        # on a bare-metal plan `type` is the disk kind (SSD, NVMe); on a cloud plan the plan kind
        kind = f" {plan['type']}" if "cpu_threads" in plan and plan.get("type") else ""
        disks = f"{count} x {plan['disk']}" if count > 1 else str(plan["disk"])
        said["disk_text"] = f"{disks} GB{kind}"
    return said


def cloud_gpu(gpu_type: str, vram_gb: int | None) -> dict[str, object]:
    """The card fields of a cloud GPU plan: its gpu_type ("NVIDIA_A100") as the card's name, and
    gpu_vram_gb, the GPU memory of the whole plan, as served. Vultr's cloud GPUs are vGPU
    partitions of a card (vcg-a100-1c-6g-4vram is 4 GB of an 80 GB A100) or whole cards (96 GB
    of L40S = 2 cards): normalization reads which from the memory (spiders/parsing/slices.py).
    A plan that states no memory is one card."""
    name = gpu_type.split("_", 1)[-1].replace("_", " ")   # NVIDIA_A100 -> A100
    if not vram_gb:
        return {"gpu_text": name, "gpu_count": 1}
    return {"gpu_text": name, "plan_vram": vram_gb, "plan_vram_unit": "GB"}
