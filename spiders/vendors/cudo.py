"""CUDO Compute: the public machine-types list (no key), one GPU price per machine type and data
centre.

Where the knowledge comes from: gpuhunt's former CUDO provider and its test fixture
(dstackai/gpuhunt src/gpuhunt/providers/cudo.py and src/tests/providers/test_cudo.py @ ed6d79e2,
the last commit before "Drop Cudo provider", 2026-06-12), which GET
https://rest.compute.cudo.org/v1/vms/machine-types with no key and read `machineTypes[]`:
dataCenterId, machineType, gpuModel, gpuModelId, vcpuPriceHr / memoryGibPriceHr / gpuPriceHr
({"value": "<decimal string>"}), maxGpuFree ...; and OpenComputePrices' collector
(thatkavish/OpenComputePrices collectors/cudo.py @ 079e5f2, 2026-03-22: "No authentication
required"), whose dated rows are the snapshot's values.

CUDO prices a VM by its parts: `gpuPriceHr` is one GPU's hour, the vCPUs and memory a buyer adds
are priced apart (`vcpuPriceHr` per vCPU, `memoryGibPriceHr` per GiB, kept in vendor_data). The
offer is that one GPU at its GPU price, as the two public clients read it; a machine type with no
GPU (gpuModelId empty) is skipped and counted.

The card is read from `gpuModelId` ("nvidia-a100-pcie"), the field the dated record kept as
served; `gpuModel` (a display name) is kept in vendor_data when present.
"""

from __future__ import annotations

from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.base.json_api import dig
from spiders.items import RawOffer

MACHINE_TYPES_URL = "https://rest.compute.cudo.org/v1/vms/machine-types"


class CudoSpider(JsonApiSpider):
    name = "cudo"
    vendor = "CUDO Compute"
    vendor_kind = "gpu_cloud"
    start_urls = [MACHINE_TYPES_URL]
    offers_path = "machineTypes"
    min_offers = 5

    def parse_offer(self, machine: dict, response: Response) -> Iterable[RawOffer]:
        if not machine.get("gpuModelId"):
            self.skip("a machine type with no GPU (gpuModelId empty)")
            return
        price = dig(machine, "gpuPriceHr.value")
        if price in (None, ""):
            self.skip("a GPU machine type without gpuPriceHr")
            return
        free = machine.get("maxGpuFree")
        yield self.offer(
            response, sku=f"{machine['machineType']}:{machine['gpuModelId']}",
            gpu_text=machine["gpuModelId"], gpu_count=1, price_per_card=True,
            region_text=machine["dataCenterId"], offer_kind="on_demand",
            price_amount=price, currency="USD", billing_period="hour",
            available=None if free is None else free > 0,
            vendor_data={"machine_type": machine["machineType"],
                         "gpu_model": machine.get("gpuModel"),
                         "cpu_model": machine.get("cpuModel"),
                         "vcpu_price_hr": dig(machine, "vcpuPriceHr.value"),
                         "memory_gib_price_hr": dig(machine, "memoryGibPriceHr.value"),
                         "max_gpu_free": free,
                         "price_covers": "one GPU; vCPUs and memory are priced apart"})
