"""vast.ai: the public marketplace search (POST /api/v0/bundles/, no key), one offer per machine.

The search asks for every card of spiders/parsing/card_catalog.csv (VAST_GPU_NAMES), not only the
mission cards; which are read is normalization's decision.

Each listing is a host's machine (or part of one): `dph_base` is the on-demand USD/hour for all
`num_gpus` cards without storage, `min_bid` the interruptible (spot) floor for the same bundle.
`geolocation` is "State or City, CC" (vast-cli tests/test_georegions.py), or "CC", or missing when
the host hides it. An offer without a location is not dropped: it is yielded with the region text
`NO_LOCATION`, which normalization quarantines (stage "region") with that reason, and counted in
the stat `vastai/offers_without_location` and a warning at the end of the crawl.

Machine specs: vCPUs from `cpu_cores_effective`, disk from `disk_space` (GB), memory from `cpu_ram`
(MB) only when the listing is the whole host.
"""

from __future__ import annotations

from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.items import RawOffer
from spiders.parsing.regions import NO_LOCATION

API_URL = "https://console.vast.ai/api/v0/bundles/"
# Every card family of spiders/parsing/card_catalog.csv as vast.ai spells its gpu_name (a name no
# host lists matches nothing). Seen: names in SkyPilot's vast catalog (skypilot-catalog v8
# vast/vms.csv instance types, spaces written "_") or in gpuhunt's vastai name mapping. Assumed:
# vast's plain pattern, not seen in either; a wrong guess only finds no offers. () = vast.ai has
# no such card (A10G is AWS-only; no MI308X/MI325X spelling was seen).
VAST_GPU_NAMES: dict[str, tuple[str, ...]] = {
    "A100": ("A100 PCIE", "A100 SXM4"),          # seen
    "A800": ("A800 PCIE",),                      # gpuhunt
    "H100": ("H100 SXM", "H100 PCIE", "H100 NVL"),  # seen
    "H800": ("H800 PCIE",),                      # assumed
    "H20": ("H20",),                             # assumed
    "H200": ("H200", "H200 NVL"),                # seen, gpuhunt
    "GH200": ("GH200",),                         # assumed
    "B200": ("B200",),                           # seen
    "L20": ("L20",),                             # assumed
    "L40S": ("L40S",), "L40": ("L40",), "L4": ("L4",),  # seen, gpuhunt
    "A10G": (),
    "A10": ("A10",),                             # gpuhunt
    "A30": ("A30",),                             # assumed
    "A40": ("A40",),                             # seen
    "V100": ("Tesla V100",), "T4": ("Tesla T4",),  # seen, gpuhunt
    "RTX3090": ("RTX 3090",),                    # seen
    "RTX4090D": ("RTX 4090D",),                  # gpuhunt's RTX rule ("RTX4090D" -> "RTX 4090D")
    "RTX4090": ("RTX 4090",), "RTX5090": ("RTX 5090",),  # seen
    "RTXA6000": ("RTX A6000",), "RTX6000ADA": ("RTX 6000Ada",),  # seen
    "MI300X": ("MI300X",),                       # assumed
    "MI308X": (), "MI325X": (),
    # consumer cards of the Chinese marketplaces' published tables: assumed (vast's plain pattern)
    "RTX2080TI": ("RTX 2080 Ti",), "RTX2080": ("RTX 2080",), "RTX3080TI": ("RTX 3080 Ti",),
    "RTX3080": ("RTX 3080",), "GTX1080TI": ("GTX 1080 Ti",), "GTX1660": ("GTX 1660",),
    "V100S": ("Tesla V100S",),                   # assumed
    "P106": (),                                  # a mining card: no vast.ai spelling was seen
    # cards of the price archives' years (and Tencent's, Compshare's P40): not asked yet, no
    # vast.ai spelling was seen for them; asking changes the recorded search's body
    "RTXA5000": (), "RTXA4000": (), "QRTX8000": (), "QRTX6000": (), "QRTX5000": (),
    "QRTX4000": (), "P6000": (), "P5000": (), "P4000": (), "P100": (), "P4": (), "P40": (),
    "K80": (), "M60": (), "MI250X": (), "GTX1080": (),
    "B300": (),                                  # no vast.ai spelling seen yet (the body unchanged)
}
# vast's search syntax: field -> {operator: value}; no cursor, so one big ordered page.
QUERY = {
    "gpu_name": {"in": [name for names in VAST_GPU_NAMES.values() for name in names]},
    "rentable": {"eq": True},
    "rented": {"eq": False},
    "order": [["score", "desc"]],
    "limit": 3000,
}
# No "datacenter": it is a search filter, not an offer field (vast-cli vastai/data/offer.py).
_KEPT = ("machine_id", "host_id", "dph_total", "storage_cost", "hosting_type", "verification",
         "reliability2", "geolocation")


class VastaiSpider(JsonApiSpider):
    name = "vastai"
    vendor = "vast.ai"
    vendor_kind = "marketplace"
    start_urls = [API_URL]
    post_json = QUERY
    offers_path = "offers"
    min_offers = 10

    def parse_offer(self, offer: dict, response: Response) -> Iterable[RawOffer]:
        place = (offer.get("geolocation") or "").strip(" ,")
        if not place:
            # Hosts may hide their location: the offer goes to quarantine with the reason, counted.
            self.crawler.stats.inc_value("vastai/offers_without_location")
        common = dict(
            sku=str(offer["id"]), gpu_text=offer["gpu_name"], gpu_count=offer["num_gpus"],
            # gpu_ram is MB per card: 49140 MB says a 48 GB modded "RTX 4090", a different SKU.
            vram=offer["gpu_ram"], vram_unit="MB",
            region_text=offer["geolocation"] if place else NO_LOCATION,
            currency="USD", billing_period="hour", available=True,
            vendor_data={k: offer.get(k) for k in _KEPT},
            **machine_fields(offer),
        )
        prices = (("on_demand", offer.get("dph_base")), ("spot", offer.get("min_bid")))
        for kind, price in prices:
            # a listing without a bid floor has no spot offer; a 0 goes on to quarantine
            if price not in (None, ""):
                yield self.offer(response, offer_kind=kind, price_amount=str(price),
                                 **common)

    def closed(self, reason: str) -> None:
        hidden = self.crawler.stats.get_value("vastai/offers_without_location", 0)
        if hidden:
            self.logger.warning("vastai: %d listings have no location; their offers go to "
                                "quarantine (stage region)", hidden)


def machine_fields(offer: dict) -> dict[str, object]:
    """vcpus, memory and disk of a listing as served, in the units vast-cli documents:
    `cpu_cores_effective` "virtual cpus you get", `disk_space` GB, `cpu_ram` MB (the host's)."""
    said: dict[str, object] = {}
    if offer.get("cpu_cores_effective"):
        said["vcpus"] = offer["cpu_cores_effective"]
    # the disk the listing may allocate; dph_base excludes it (billed at storage_cost $/GB/month)
    if offer.get("disk_space"):
        said.update(disk=offer["disk_space"], disk_unit="GB")
    # cpu_ram is the host's RAM; a listing of part of the host gets a share vast does not state
    # (gpuhunt prorates it by cores), so it is the offer's only when the offer is the whole host.
    frac = offer.get("gpu_frac")
    whole = frac == 1 if frac is not None else (
        bool(offer.get("cpu_cores")) and offer.get("cpu_cores_effective") == offer["cpu_cores"])
    if whole and offer.get("cpu_ram"):
        said.update(memory=offer["cpu_ram"], memory_unit="MB")
    return said
