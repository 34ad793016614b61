"""The one item every spider yields: a raw offer, the vendor's own strings kept next to parsed
values.

Normalization (pipelines/defs/normalize) turns each RawOffer into one typed `observations` row or
a `quarantine` row with a reason. Spiders only extract; they never convert units or currencies.
"""

import scrapy


class RawOffer(scrapy.Item):
    source = scrapy.Field()        # spider name, e.g. "azure"
    vendor = scrapy.Field()        # display name, e.g. "Microsoft Azure"
    vendor_kind = scrapy.Field()   # "hyperscaler" | "gpu_cloud" | "marketplace" | "idc"
    # how the source reaches the offer: unset = "direct"; "aggregator" | "second_path" |
    # "archive" (the spider's `reaches_via`): such an offer is counted once (docs/signals.md)
    reaches_via = scrapy.Field()
    # what the spider declares that its source's name does not imply (unset: the name's default):
    # the zone of the vendor's billing calendar ("Asia/Shanghai"; spiders/parsing/calendars.py)
    # and the source's key in spiders/parsing/regions.csv ("tencent_cn" for tencent_cn_list)
    local_time_zone = scrapy.Field()
    region_key = scrapy.Field()
    sku = scrapy.Field()           # the vendor's instance / plan / row id
    gpu_text = scrapy.Field()      # the card as the vendor writes it: "A100 80G SXM4", "2g.20gb"
    # why the row's card cannot be named: a partition or queue no public evidence maps to a card
    # (the source's configuration says so); normalization quarantines the row with this reason
    no_card_reason = scrapy.Field()
    gpu_count = scrapy.Field()     # whole cards in the offer (int); 1 for a slice
    vram_gb = scrapy.Field()       # VRAM per card or slice when the vendor states it separately
    region_text = scrapy.Field()   # region as the vendor writes it: "eastus", "西北B区"
    offer_kind = scrapy.Field()    # "on_demand" | "spot" | "reserved"
    price_text = scrapy.Field()    # the price as written: "¥62.00/时", "1,299元/月"
    price_amount = scrapy.Field()  # the price as a decimal string when the vendor gives a number
    currency = scrapy.Field()      # ISO 4217 when the vendor states it (APIs), else None
    billing_period = scrapy.Field()  # "hour" | "day" | "week" | "month" | "year" when known
    available = scrapy.Field()     # True / False / None (unknown)
    url = scrapy.Field()           # the live URL the offer was read from
    raw_ref = scrapy.Field()       # sha256 of the response body (see the raw archive)
    observed_at = scrapy.Field()   # UTC ISO time: fetch time, or the snapshot's capture time
    # Where the price comes from (spiders/price_basis.py): `live` when read from the vendor,
    # else the replayed snapshot entry's basis (published, undated, illustrative, ...), and the
    # date it held (a live price: the day it was read; null when no one could date it)
    price_basis = scrapy.Field()
    prices_as_of = scrapy.Field()
    effective_at = scrapy.Field()  # ISO date/time the vendor states the price took effect (a
    #                                dated price list or announcement); normalization then uses
    #                                it as the observation time instead of observed_at
    vendor_data = scrapy.Field()   # vendor-specific extras (dict)
    # What a listing says about its price and count besides the price itself. A spider sets them
    # when the vendor states them apart from price_text (an API field, a column, a header, the
    # page); the base spider fills the rest from price_text and gpu_text (spiders/parsing/).
    config_text = scrapy.Field()   # the configuration cell as written ("8卡整机", "2×Xeon, 8×A100")
    price_low = scrapy.Field()     # both ends of a listed range ("20-30元/小时"), decimal strings
    price_high = scrapy.Field()
    range_end = scrapy.Field()     # "low" | "high": the end the source declares it lists, else None
    price_per_card = scrapy.Field()  # True: the price is one card's ("元/月/卡", per-card column)
    list_price_amount = scrapy.Field()  # original / struck-through price (原价) as a decimal string
    tax_included = scrapy.Field()  # True (含税) / False (不含税, "excl. VAT") / None (not said)
    min_term_hours = scrapy.Field()  # minimum rental term in hours ("3个月起" -> 2190)
    # The machine that comes with the offer, as the vendor states it, with its unit: "30",
    # "16核"; "200 GiB", "65536 MB"; "512 GiB SSD", "2 x 3.84 TB NVMe". Normalization reads them
    # (spiders/parsing/machine.py) into vcpus, memory_gib, disk_gb; unset when not stated. A
    # config_text that lists them ("64核 / 内存 512GB / 2×3.84T NVMe") is read the same way.
    vcpus_text = scrapy.Field()
    memory_text = scrapy.Field()
    disk_text = scrapy.Field()


REQUIRED_FIELDS = ("source", "vendor", "sku", "gpu_text", "region_text", "offer_kind", "url",
                   "raw_ref", "observed_at")


def missing_fields(item) -> list[str]:
    """The required fields an offer item lacks (empty counts as missing); a price may be given as
    text or as an amount, so only both absent is missing ("price_text|price_amount")."""
    absent = [f for f in REQUIRED_FIELDS if item.get(f) in (None, "")]
    if not item.get("price_text") and not item.get("price_amount"):
        absent.append("price_text|price_amount")
    return absent
