"""The one item every spider yields: a raw offer, the vendor's own words and numbers as served.

Normalization (pipelines/normalize/offer.py) turns each RawOffer into one typed `observations`
row or a `quarantine` row with a reason. It reads every text once, in one place, and converts
every unit there. A spider extracts and never interprets:

* Raw text fields (`*_text`, `config_text`) hold what the vendor writes, as written: a page's
  cell ("¥62.00/时", "A100 80G ×8", "64核 / 512GB"), or an API's string field. A spider never
  reads a count, a price, a flag or a size out of a text (normalization does, once), and never
  writes a number it has into a text for normalization to read back.
* Typed fields hold a number the vendor serves as a number (a JSON number, or a numeric string
  copied unchanged), beside the unit the vendor serves it in: `price_amount` with `currency`,
  `billing_period` and, when the amount is not in the currency's major unit, `price_unit`
  (2720 "厘", not 2.72 元); `memory` with `memory_unit` (96636764160 "B", 6144 "MB"); `vram` with
  `vram_unit`; `disk` with `disk_unit`; `vcpus`; `gpu_count`. A spider never converts a unit or a
  currency, and never parses a price (tests/spiders/test_spider_contract.py checks both).
* Stated flags (`price_per_card`, `price_of_machine`, `tax_included`, `range_end`,
  `effective_at`) are what the vendor says apart from the price text (a column header, a note,
  an API field): normalization reads the text's own markers and quarantines an offer whose two
  readings contradict, and does the arithmetic a flag asks for.

Units a typed field may carry: price_unit, a key of spiders/parsing/units.py PRICE_UNITS;
memory_unit and disk_unit "B", "MB", "MiB", "GB", "GiB", "TB", "TiB" (memory's GB is binary,
disk's decimal: spiders/parsing/machine.py); vram_unit and plan_vram_unit "MB", "MiB", "GB",
"GiB" (spiders/parsing/gpu_models.py VRAM_UNITS).
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
    # raw: a GPU count cell as written when the card is named elsewhere (a header): "8颗", "1/4颗"
    gpu_count_text = scrapy.Field()
    # raw: a price calculator's accelerator text, "2 * NVIDIA T4 / 2 * 16G" (cards * card / cards
    # * memory), which normalization reads into the card and the count; gpu_text holds it too
    accelerator_text = scrapy.Field()
    gpu_count = scrapy.Field()     # typed: whole cards in the offer as the vendor states them
    #                                apart from the card text (a count column, an API field);
    #                                1 for a slice; unset when only the texts write it
    # typed: VRAM per card or slice as served, and its unit (49140, "MB"); vram_gb is the older
    # field: a number of GB, or a memory cell as written ("40960 MIB")
    vram = scrapy.Field()
    vram_unit = scrapy.Field()
    # typed: a slice or count the API states as numbers, read by spiders/parsing/slices.py: the
    # fraction of one card as served (0.25), and the GPU memory of the whole offer as served with
    # its unit (Vultr's gpu_vram_gb: 4 "GB" of an A100 is a slice, 96 "GB" of L40S two cards)
    gpu_fraction = scrapy.Field()
    plan_vram = scrapy.Field()
    plan_vram_unit = scrapy.Field()
    vram_gb = scrapy.Field()
    region_text = scrapy.Field()   # region as the vendor writes it: "eastus", "西北B区"
    offer_kind = scrapy.Field()    # "on_demand" | "spot" | "reserved"
    price_text = scrapy.Field()    # raw: the price as written: "¥62.00/时", "1,299元/月";
    #                                absent when the vendor serves a number (price_amount): a
    #                                spider writes no text from a number (the contract checks it)
    # typed: the price as served (a number, or a decimal string copied unchanged) when the
    # vendor gives a number, in `price_unit` when that is not the currency's major unit
    price_amount = scrapy.Field()
    price_unit = scrapy.Field()    # "厘", "millicent", "cents" (units.py); unset: the major unit
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
    # only when the vendor states them apart from price_text (an API field, a column, a header,
    # the page); what price_text and gpu_text write is read by normalization, never here.
    config_text = scrapy.Field()   # raw: the configuration cell ("8卡整机", "2×Xeon, 8×A100")
    # typed: both ends of a range an API serves as two numbers (in price_amount's unit)
    price_low = scrapy.Field()
    price_high = scrapy.Field()
    range_end = scrapy.Field()     # "low" | "high": the end the source declares it lists, else None
    price_per_card = scrapy.Field()  # True: the price is one card's ("元/月/卡", per-card column)
    # True: the row lists the machine's price, so a price stated per card is multiplied by the
    # count in normalization (lambda_cloud: its page prices one GPU, its API the instance, and
    # both list one amount for one instance)
    price_of_machine = scrapy.Field()
    list_price_amount = scrapy.Field()  # typed: the original price (原价) an API serves apart
    tax_included = scrapy.Field()  # True (含税) / False (不含税, "excl. VAT") / None (not said)
    # older items only: the minimum term the base spider once read out of price_text ("3个月起"
    # -> 2190); no spider sets it now (the text is read by normalization), kept so stored raw
    # items still pass the item types
    min_term_hours = scrapy.Field()
    # The machine that comes with the offer. Raw: as the vendor writes it, with its unit ("16核";
    # "200 GiB"; "512 GiB SSD", "2 x 3.84 TB NVMe"). Typed: an API's numbers as served, with the
    # unit its field is documented in (vcpus 30; memory 6144 + memory_unit "MB"; disk 500 +
    # disk_unit "GB"). Normalization reads them (spiders/parsing/machine.py) into vcpus,
    # memory_gib, disk_gb, typed first; unset when not stated. A config_text that lists them
    # ("64核 / 内存 512GB / 2×3.84T NVMe") is read the same way.
    vcpus_text = scrapy.Field()
    memory_text = scrapy.Field()
    disk_text = scrapy.Field()
    vcpus = scrapy.Field()
    memory = scrapy.Field()
    memory_unit = scrapy.Field()
    disk = scrapy.Field()
    disk_unit = scrapy.Field()


REQUIRED_FIELDS = ("source", "vendor", "sku", "gpu_text", "region_text", "offer_kind", "url",
                   "raw_ref", "observed_at")


def missing_fields(item) -> list[str]:
    """The required fields an offer item lacks (empty counts as missing); a price may be given as
    text or as an amount, so only both absent is missing ("price_text|price_amount")."""
    absent = [f for f in REQUIRED_FIELDS if item.get(f) in (None, "")]
    if not item.get("price_text") and not item.get("price_amount"):
        absent.append("price_text|price_amount")
    return absent
