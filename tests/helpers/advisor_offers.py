"""Current offers as marts.latest_prices has them, for the advisor tests."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from tests.helpers.observations import BEIJING, HOURS

SEEN = datetime(2026, 11, 30, 9, tzinfo=UTC)
VRAM = {"A100-80GB": 80, "A100-40GB": 40, "H100-80GB": 80, "H800-80GB": 80, "RTX4090-24GB": 24}


def row(price: float, period: str = "hour", **overrides) -> dict:
    """One current offer as marts.latest_prices has it: `price` is the instance's listed price in
    CNY per `period`; price_per_gpu_hour_cny is normalized as the pipeline does."""
    r = {"source": "idc_test", "vendor": "Test IDC", **BEIJING, "gpu_model": "A100-80GB",
         "gpu_variant": "SXM", "gpu_count": 1, "gpu_fraction": 1.0, "offer_kind": "on_demand",
         "billing_period": period, "currency": "CNY", "available": True, "last_seen_at": SEEN}
    # a real, dated price counted once (pipelines/advisor/advisable.py advises no other by default)
    r.update({"price_basis": "published", "price_as_of": SEEN.date(), "reaches_via": "direct",
              "counted": True})
    r.update(overrides)
    if "vram_gb" not in r:
        r["vram_gb"] = VRAM[r["gpu_model"]] * r["gpu_fraction"]
    r.setdefault("sku", f"{r['gpu_model']} {r['gpu_count']}x{r['gpu_fraction']:g} "
                        f"{r['offer_kind']}")
    r["price_amount"] = price
    r["price_per_gpu_hour_cny"] = price / HOURS[period] / (r["gpu_count"] * r["gpu_fraction"])
    r["price_per_gpu_hour_usd"] = r["price_per_gpu_hour_cny"] / 7.0
    r.setdefault("url", f"https://example.test/{r['source']}")
    key = "|".join(str(r[k]) for k in ("source", "region_code", "sku", "gpu_model", "gpu_count",
                                        "gpu_fraction", "offer_kind", "billing_period"))
    r.setdefault("offer_id", hashlib.sha256(key.encode()).hexdigest()[:16])
    return r
