"""TensorDock: the marketplace's public locations list (no key), one GPU offer per card model and
location, priced by the hosts.

Where the knowledge comes from: public clients of GET https://dashboard.tensordock.com/api/v2/
locations at a commit: OpenComputePrices' collector (thatkavish/OpenComputePrices
collectors/tensordock.py @ 4365244, 2026-03-23: "No authentication required for these discovery
endpoints"), which reads `data.locations[]` (id, city, stateprovince, country, tier, gpus[]) and
per GPU v0Name, displayName, max_count, price_per_hr, resources {max_vcpus, max_ram_gb,
max_storage_gb}, pricing {per_vcpu_hr, per_gb_ram_hr, per_gb_storage_hr}, network_features;
its dated rows are the snapshot's values. (gpuhunt's older provider read the v0 hostnodes list,
`marketplace.tensordock.com/api/v0/client/deploy/hostnodes`, dropped there in Feb 2026.)

`price_per_hr` is read as one GPU's hour, as the public clients read it; the vCPU, RAM and
storage a buyer adds are priced apart (`pricing`, kept in vendor_data), and `resources` are the
most a location can give, not the offer's machine (vendor_data too). `max_count` is how many of
the card a location has free now (0: sold out). A GPU without a price is skipped and counted.

The card text is `v0Name` as served ("a100-sxm4-80gb", "geforcertx4090-pcie-24gb"), with one
change: TensorDock glues the GeForce brand to the model, which no card name reads, so the brand is
written as its own word ("geforce rtx4090-pcie-24gb"); gpuhunt's old provider read the same names
through a table (marketplace_gpus, `src/gpuhunt/providers/tensordock.py` @ 3105cb7^).
"""

from __future__ import annotations

from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.items import RawOffer

LOCATIONS_URL = "https://dashboard.tensordock.com/api/v2/locations"
GLUED_BRAND = "geforce"


def card_text(v0_name: str) -> str:
    """v0Name with a glued GeForce brand written apart: "geforcertx4090-pcie-24gb" ->
    "geforce rtx4090-pcie-24gb"; any other name as served."""
    if v0_name.startswith(GLUED_BRAND) and not v0_name.startswith(f"{GLUED_BRAND} "):
        return f"{GLUED_BRAND} {v0_name[len(GLUED_BRAND):]}"
    return v0_name


def place(location: dict) -> str:
    """"Chubbuck, Idaho, United States": the location's city, state or province and country as
    it names them (normalization places the country)."""
    return ", ".join(p for p in (location.get("city"), location.get("stateprovince"),
                                 location.get("country")) if p)


class TensordockSpider(JsonApiSpider):
    name = "tensordock"
    vendor = "TensorDock"
    vendor_kind = "marketplace"
    start_urls = [LOCATIONS_URL]
    offers_path = "data.locations"
    min_offers = 10

    def parse_offer(self, location: dict, response: Response) -> Iterable[RawOffer]:
        for gpu in location.get("gpus") or []:
            if not gpu.get("price_per_hr"):
                self.skip("a GPU without price_per_hr")
                continue
            free = gpu.get("max_count")
            yield self.offer(
                response, sku=f"{location['id']}:{gpu['v0Name']}",
                gpu_text=card_text(gpu["v0Name"]), gpu_count=1, price_per_card=True,
                region_text=place(location), offer_kind="on_demand",
                price_amount=gpu["price_per_hr"], currency="USD", billing_period="hour",
                available=None if free is None else free > 0,
                vendor_data={"location_id": location["id"], "tier": location.get("tier"),
                             "v0_name": gpu["v0Name"],
                             "display_name": gpu.get("displayName"), "max_count": free,
                             "resources": gpu.get("resources"), "pricing": gpu.get("pricing"),
                             "price_covers": "one GPU; vCPU, RAM and storage are priced apart"})
