"""adriannutiu/gpu-rental-prices' daily snapshots, `data/snapshots/YYYY-MM-DD.json` (CC BY 4.0;
"GPU rental price data by gpurentalprices.com"): `{date, generated_at, offers: [{provider, gpu,
vram_gb, usd_hr, kind, source_url, fetched_at, min_gpus?}], providers: {<slug>: {ok, stale,
last_verified, error?}}, meta?}`, one file per day a fetcher read each provider's own pricing
source. Pure.

What the dataset's README says, and how it is read here:
* `usd_hr` is "price per GPU per hour, USD" ("Prices are normalized to USD per GPU per hour"):
  a price per card (price_per_card), hourly, in USD. `min_gpus` (not in the README) is the
  smallest count one can rent; the price is not that machine's, so it is kept in vendor_data and
  the offer is one card priced per card.
* `kind`: "secure"/on-demand (firm) or "community"/spot (interruptible), so `secure` and
  `on-demand` are on_demand and `community` and `spot` are spot. `serverless` (per-use GPU time,
  which the README does not class) is not interruptible: on_demand; the dataset's word stays in
  the sku and vendor_data. Any other word is passed as written (normalization quarantines it).
* "When a fetch fails, that provider's rows are carried forward and flagged with their
  last-verified date": the rows of a provider flagged `stale` (or not `ok`) are not that day's
  prices and are left out, as is any row fetched on another day than the snapshot's.
* The dataset names no region: each price is the provider's headline USD list price, placed as
  cloud-gpus places one (HEADLINE_REGION).
* The card is read from the dataset's GPU id ('a100-pcie-80' -> 'A100 PCIe 80GB') with its
  `vram_gb`; an id our card catalog does not know is kept (normalization quarantines it).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import date

from pipelines.backfill.cloud_gpus import HEADLINE_REGION
from pipelines.backfill.offers import ArchiveOffer, Parsed, count_left_out, positive

CURRENCY = "USD"
SNAPSHOT_RE = re.compile(r"(?:^|/)(\d{4}-\d{2}-\d{2})\.json$")
# The dataset's kind -> our offer_kind (the README's words above)
OFFER_KINDS = {"secure": "on_demand", "on-demand": "on_demand", "serverless": "on_demand",
               "community": "spot", "spot": "spot"}
# A GPU id's words as a card is written; any other word upper-cased ('h100' -> 'H100'). A number
# after a form factor is the card's memory ('a100-sxm-40' -> 'A100 SXM 40GB').
ID_WORDS = {"sxm": "SXM", "sxm2": "SXM2", "pcie": "PCIe", "nvl": "NVL", "ti": "Ti",
            "ada": "Ada", "quadro": "Quadro", "maxq": "Max-Q"}
FORM_FACTORS = frozenset({"sxm", "sxm2", "pcie"})


def snapshot_day(path: str) -> date | None:
    """The day a snapshot file's name says it was read ('data/snapshots/2026-07-20.json')."""
    m = SNAPSHOT_RE.search(path)
    try:
        return date.fromisoformat(m[1]) if m else None
    except ValueError:
        return None


def card_text(gpu_id: str) -> str:
    """'h100-sxm' -> 'H100 SXM', 'a100-pcie-80' -> 'A100 PCIe 80GB', 'rtx-3090-ti' ->
    'RTX 3090 Ti'."""
    words = gpu_id.strip().lower().split("-")
    return " ".join(f"{w}GB" if w.isdigit() and n and words[n - 1] in FORM_FACTORS
                    else ID_WORDS.get(w, w.upper()) for n, w in enumerate(words))


def _price(value: object) -> str | None:
    """A JSON number above zero as a decimal string; None for anything else."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    return positive(str(value))


def _offer_lines(text: str, count: int) -> list[int]:
    """The line of each offer's `"usd_hr"` key, in order; 0 where the layout does not tell."""
    lines = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(r'"usd_hr"\s*:', text)]
    return lines if len(lines) == count else [0] * count


def _carried_forward(providers: object) -> set[str]:
    """The providers whose rows this day are carried forward from an earlier fetch."""
    if not isinstance(providers, dict):
        return set()
    return {name for name, state in providers.items()
            if isinstance(state, dict) and (state.get("stale") or state.get("ok") is False)}


def _key(row: dict) -> tuple:
    return row.get("provider"), row.get("gpu"), row.get("kind"), row.get("min_gpus")


def _why_not(row: object, day: str, stale: set[str], repeated: set[tuple]) -> str | None:
    """Why a row of the offers list is not an offer of the day; None when it is one."""
    if not isinstance(row, dict):
        return "an offer that is not an object"
    if not str(row.get("provider") or "").strip():
        return "an offer without a provider"
    if not str(row.get("gpu") or "").strip():
        return "an offer without a GPU id"
    if row["provider"] in stale:
        return "a provider's rows carried forward from an earlier fetch (stale)"
    if day and not str(row.get("fetched_at") or "").startswith(day):
        return "a row fetched on another day than the snapshot's"
    if _price(row.get("usd_hr")) is None:
        return "usd_hr is not a number above zero"
    if _key(row) in repeated:
        return "a provider, GPU, kind and minimum count listed twice in one snapshot"
    return None


def _offer(row: dict, line: int) -> ArchiveOffer:
    kind = str(row.get("kind") or "").strip()
    min_gpus = row.get("min_gpus")
    sku = " ".join([row["gpu"], kind] + ([f"min {min_gpus}"] if min_gpus is not None else []))
    vendor_data = {"kind": kind, "fetched_at": row.get("fetched_at"),
                   **({"min_gpus": min_gpus} if min_gpus is not None else {})}
    fields = {"sku": sku, "gpu_text": card_text(row["gpu"]), "gpu_count": "1",
              "region_text": HEADLINE_REGION, "offer_kind": OFFER_KINDS.get(kind, kind),
              "price_amount": _price(row["usd_hr"]), "currency": CURRENCY,
              "billing_period": "hour", "price_per_card": True,
              "url_listed": row.get("source_url"), "vendor_data": vendor_data}
    if isinstance(row.get("vram_gb"), int | float) and not isinstance(row["vram_gb"], bool):
        fields["vram_gb"] = row["vram_gb"]
    return ArchiveOffer(str(row["provider"]).strip(), line, fields)


def parse_gpu_rental_prices(text: str, path: str = "") -> Parsed:
    """The offers one daily snapshot lists as that day's prices."""
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"a gpu-rental-prices snapshot is not JSON: {exc}") from exc
    if not isinstance(body, dict) or not isinstance(body.get("offers"), list):
        raise ValueError("a gpu-rental-prices snapshot: expected an object with an offers list")
    named = snapshot_day(path)
    day = str(body.get("date") or (named.isoformat() if named else ""))
    rows = body["offers"]
    stale = _carried_forward(body.get("providers"))
    counts = Counter(_key(r) for r in rows if isinstance(r, dict))
    repeated = {k for k, n in counts.items() if n > 1}
    offers: list[ArchiveOffer] = []
    left_out: dict[str, int] = {}
    for row, line in zip(rows, _offer_lines(text, len(rows)), strict=True):
        why = _why_not(row, day, stale, repeated)
        if why:
            count_left_out(left_out, why)
        else:
            offers.append(_offer(row, line))
    return Parsed(offers, left_out)
