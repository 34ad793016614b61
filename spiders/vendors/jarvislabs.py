"""JarvisLabs: the GPU list the console's API serves (`/misc/server_meta`), per GPU type and
region: one GPU's hourly price with the vCPUs and RAM that come with it. Key-only.

Where the knowledge comes from: gpuhunt's JarvisLabs provider and its test fixture
(dstackai/gpuhunt src/gpuhunt/providers/jarvislabs.py and src/tests/providers/test_jarvislabs.py
@ 35841515, the endpoint as updated by "[JarvisLabs] ... update API endpoint" @ d58a4a98,
2026-06-11): GET https://backendn.jarvislabs.net/misc/server_meta with
"Authorization: Bearer <JL_API_KEY>"; `server_meta[]` rows with gpu_type, region,
num_free_devices, effective_num_free_devices, price_per_hour, spot_price, vram (a string of GB),
cpus_per_gpu, ram_per_gpu, workload_type ("vm", "container", or null for older VM rows), num_gpus
(the most GPUs per instance).

Only VM rows are read (workload_type "vm" or null), as gpuhunt reads them: a container row lists
the same GPU again for JarvisLabs' container product, and JarvisLabs' spot prices are for
containers only (gpuhunt's note), so neither is read; each is skipped and counted. The price is
one GPU's hour; an instance takes 1 to num_gpus GPUs at that price each (vendor_data).
"""

from __future__ import annotations

from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.items import RawOffer

SERVER_META_URL = "https://backendn.jarvislabs.net/misc/server_meta"
VM_WORKLOADS = ("vm", None)


class JarvislabsSpider(JsonApiSpider):
    name = "jarvislabs"
    vendor = "Jarvis Labs"
    vendor_kind = "gpu_cloud"
    start_urls = [SERVER_META_URL]
    offers_path = "server_meta"
    api_key_required = True
    key_envs = ("JL_API_KEY",)
    bearer_key_env = "JL_API_KEY"
    keyed_path = ("the GPU list of the console API (GET /misc/server_meta, Bearer key), "
                  "as gpuhunt reads it")
    min_offers = 3

    def parse_offer(self, row: dict, response: Response) -> Iterable[RawOffer]:
        if row.get("workload_type") not in VM_WORKLOADS:
            self.skip(f"workload_type {row.get('workload_type')!r}, not a VM row")
            return
        if row.get("price_per_hour") is None or not row.get("gpu_type"):
            self.skip("a row without gpu_type or price_per_hour")
            return
        free = row.get("effective_num_free_devices", row.get("num_free_devices"))
        yield self.offer(
            response, sku=row["gpu_type"], gpu_text=row["gpu_type"], gpu_count=1,
            vram_gb=row.get("vram"), price_per_card=True,
            region_text=row.get("region") or "", offer_kind="on_demand",
            price_amount=row["price_per_hour"], currency="USD", billing_period="hour",
            available=None if free is None else free > 0,
            vcpus=row.get("cpus_per_gpu"), memory=row.get("ram_per_gpu"), memory_unit="GB",
            vendor_data={"workload_type": row.get("workload_type"), "free_devices": free,
                         "max_gpus_per_instance": row.get("num_gpus"),
                         "spot_price": row.get("spot_price")})
