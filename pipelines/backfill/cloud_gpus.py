"""cloud-gpus/cloud-gpus.github.io's `cloud_gpu.json`: a curated table, one object per GPU
cloud (`{"data": [...]}`, or a bare list in early versions) with a `cost<card>` cell per card
('$3.06', '-' for none), a `region` and the pricing page. Each cell is one GPU's hourly list
price: an on-demand offer of one card. Pure.

The table names a broad area more often than a place: 'Worldwide' and 'Global' (and no region)
are the vendor's headline USD list price, placed in the US (HEADLINE_REGION); any other text is
passed as written, so a country ('India') is placed and an area ('Europe') is refused by
normalization, as any unplaceable offer is.
"""

from __future__ import annotations

import json
import re

from pipelines.backfill.offers import ArchiveOffer, Parsed, count_left_out

HEADLINE_REGION = "US"
HEADLINE_AREAS = frozenset({"", "worldwide", "global"})
NO_PRICE = frozenset({"", "-", "n/a", "na", "none", "?"})
# cost<key> -> the card as it is named (any other key: its letters upper-cased, 'costl4' -> 'L4')
CARD_KEYS = {
    "a100_40": "A100 40GB", "a100_80": "A100 80GB", "a100": "A100", "h100": "H100",
    "h200": "H200", "b200": "B200", "hb200": "B200", "a10": "A10", "a30": "A30", "a40": "A40",
    "l4": "L4", "l40": "L40", "l40s": "L40S", "t4": "T4", "v100": "V100", "p100": "P100",
    "p4": "P4", "k80": "K80", "m60": "M60", "a5000": "RTX A5000", "a6000": "RTX A6000",
    "rtx4000": "RTX 4000", "rtx5000": "RTX 5000", "rtx6000": "Quadro RTX 6000",
    "rtx6000ada": "RTX 6000 Ada", "rtxpro6000": "RTX PRO 6000", "p4000": "Quadro P4000",
    "p5000": "Quadro P5000", "p6000": "Quadro P6000", "1080": "GTX 1080", "2080": "RTX 2080",
    "3080": "RTX 3080", "3090": "RTX 3090", "4090": "RTX 4090", "5090": "RTX 5090",
    "mi250x": "MI250X", "mi300x": "MI300X", "mi325x": "MI325X", "ml100": "ML100",
}
COST_KEY_RE = re.compile(r"^cost(?P<card>[a-z0-9_]+)$")


def card_text(key: str) -> str | None:
    """'costa100_80' -> 'A100 80GB'; None for a key that is not a price."""
    m = COST_KEY_RE.match(key)
    if not m:
        return None
    return CARD_KEYS.get(m["card"], m["card"].upper())


def region_text(region: object) -> str:
    text = str(region or "").strip()
    return HEADLINE_REGION if text.lower() in HEADLINE_AREAS else text


def _object_lines(text: str, count: int) -> list[int]:
    """The line of each provider's `"name"` key, in order (one per object); 0 where the file's
    layout does not allow telling."""
    lines = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(r'"name"\s*:', text)]
    return lines if len(lines) == count else [0] * count


def parse_cloud_gpus(text: str) -> Parsed:
    """The offers of one version of cloud_gpu.json."""
    body = json.loads(text)
    providers = body.get("data", []) if isinstance(body, dict) else body
    if not isinstance(providers, list):
        raise ValueError("cloud_gpu.json: expected a list of providers under 'data'")
    providers = [p for p in providers if isinstance(p, dict)]
    offers: list[ArchiveOffer] = []
    left_out: dict[str, int] = {}
    for provider, line in zip(providers, _object_lines(text, len(providers)), strict=True):
        name = str(provider.get("name") or "").strip()
        if not name:
            count_left_out(left_out, "a provider without a name")
            continue
        for key, cell in provider.items():
            card = card_text(key)
            if card is None:
                continue
            price = str(cell if cell is not None else "").strip()
            if price.lower() in NO_PRICE:
                continue
            offers.append(ArchiveOffer(name, line, {
                "sku": f"{name} {card}", "gpu_text": card, "gpu_count": "1",
                "region_text": region_text(provider.get("region")), "offer_kind": "on_demand",
                "price_text": price, "billing_period": "hour",
                "url_listed": provider.get("pricing-source") or provider.get("url")}))
    return Parsed(offers, left_out)
