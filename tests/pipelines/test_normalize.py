"""Raw offer -> observation row or quarantine reason (pure function, table-driven)."""

from datetime import date
from decimal import Decimal

import pytest

from pipelines.normalize import Quarantined, normalize_offer

BASE = {"source": "idc_x", "vendor": "X IDC", "vendor_kind": "idc", "sku": "row 1",
        "gpu_count": "1", "region_text": "北京", "offer_kind": "on_demand",
        "url": "https://idc.test/price", "raw_ref": "0" * 64, "observed_at": "2026-11-30T09:15:00Z"}


def offer(**fields) -> dict:
    return {**BASE, **fields}


@pytest.mark.parametrize("fields, gpu_model, fraction, period, per_gpu_hour_cny", [
    (dict(gpu_text="NVIDIA A100 80G SXM4 整卡", price_text="¥62.00/时"), "A100-80GB", 1, "hour",
     "62"),
    # a 1/4 slice at 13.50 CNY/h is 54.00 per GPU-hour (the worked example of the price unit)
    (dict(gpu_text="A100 80G 1/4", price_text="¥13.50/时"), "A100-80GB", Decimal("0.25"), "hour",
     "54"),
    # an 8-GPU server at 250 CNY/h is 31.25 per GPU-hour
    (dict(gpu_text="A100 80G SXM4 整机", gpu_count="8", price_text="¥250/时"), "A100-80GB", 1,
     "hour", "31.25"),
    (dict(gpu_text="A100 80G SXM4 MIG 2g.20gb", price_text="¥4,600/月"), "A100-80GB",
     Decimal("0.25"), "month",
     str((Decimal(4600) / 730 / Decimal("0.25")).quantize(Decimal("0.000001")))),
    (dict(gpu_text="RTX 4090 24GB", price_text="¥45.00/日"), "RTX4090-24GB", 1, "day", "1.875"),
    (dict(gpu_text="H800 80GB", price_text="3.5万元/年"), "H800-80GB", 1, "year",
     str((Decimal(35000) / 8760).quantize(Decimal("0.000001")))),
    # written per card: an 8-card server's row priced "/卡/月" is not divided by 8 again
    (dict(gpu_text="A100 80G SXM4 整机", gpu_count="8", price_text="￥8000/卡/月"), "A100-80GB", 1,
     "month", str((Decimal(8000) / 730).quantize(Decimal("0.000001")))),
    (dict(gpu_text="RTX 4090", gpu_count="4", price_text="¥2.10/卡时"), "RTX4090-24GB", 1, "hour",
     "2.1"),
])
def test_cny_listings(fields, gpu_model, fraction, period, per_gpu_hour_cny):
    row = normalize_offer(offer(**fields))
    assert row["gpu_model"] == gpu_model
    assert row["gpu_fraction"] == fraction
    assert row["billing_period"] == period
    assert row["currency"] == "CNY"
    assert row["price_per_gpu_hour_cny"] == Decimal(per_gpu_hour_cny)


def test_usd_api_price_with_dated_rate():
    row = normalize_offer(offer(source="azure", gpu_text="H100 80GB SXM5", gpu_count=8,
                                region_text="eastus", price_amount="98.32", currency="USD",
                                billing_period="hour", observed_at="2026-10-17T10:00:00Z"))
    assert row["price_per_gpu_hour_usd"] == Decimal("12.29")
    assert row["fx_rate_date"] == date(2026, 10, 16)  # a Saturday observation: Friday's ECB rate
    cny_per_usd = row["price_per_gpu_hour_cny"] / row["price_per_gpu_hour_usd"]
    assert Decimal("6") < cny_per_usd < Decimal("8")
    assert (row["country"], row["province_or_state"]) == ("US", "Virginia")


def test_listed_amount_and_period_are_kept():
    row = normalize_offer(offer(gpu_text="RTX 4090", price_text="1,299元/月"))
    assert (row["price_amount"], row["billing_period"]) == (Decimal("1299"), "month")


def test_observed_hour_is_the_natural_key_bucket():
    row = normalize_offer(offer(gpu_text="RTX 4090", price_text="¥2/时"))
    assert row["observed_hour"].isoformat() == "2026-11-30T09:00:00+00:00"


def test_same_offer_same_id_across_observations():
    a = normalize_offer(offer(gpu_text="RTX 4090", price_text="¥2/时"))
    b = normalize_offer(offer(gpu_text="RTX 4090", price_text="¥1.8/时",
                              observed_at="2026-12-01T00:00:00Z"))
    c = normalize_offer(offer(gpu_text="RTX 4090", price_text="¥1200/月"))
    assert a["offer_id"] == b["offer_id"] != c["offer_id"]


@pytest.mark.parametrize("fields, stage, reason", [
    (dict(gpu_text="A100 80G", price_text="面议"), "price", "面议"),
    (dict(gpu_text="A100 80G", price_text="售罄"), "price", "售罄"),
    # a card nobody makes cannot be read (V100 & co. are tracked cards now: issue 12)
    (dict(gpu_text="Tesla Z999 32G", price_text="¥8/时"), "card", "Z999"),
    (dict(gpu_text="RTX 4090", price_text="¥2/时", region_text="火星"), "region", "火星"),
    (dict(gpu_text="RTX 4090", price_text="¥2/时", offer_kind="lease"), "offer_kind", "lease"),
    (dict(gpu_text="RTX 4090", price_text="¥2/时", gpu_count="0"), "card", "at least 1"),
    # 2720 元/时 for a 4090: a 厘 (1/1000 元) price read as 元 — caught by the plausibility bounds
    (dict(gpu_text="RTX 4090", price_text="¥2720/时"), "bounds", "outside the plausible range"),
    (dict(gpu_text="RTX 4090", price_amount="-1", currency="USD", billing_period="hour"),
     "price", "positive"),
    (dict(gpu_text="RTX 4090", price_amount="0.4", currency=None, billing_period="hour"),
     "currency", "without a currency"),
])
def test_quarantine_reasons(fields, stage, reason):
    with pytest.raises(Quarantined) as exc:
        normalize_offer(offer(**fields))
    assert exc.value.stage == stage
    assert reason in exc.value.reason


@pytest.mark.parametrize("fields, specs", [
    (dict(vcpus_text="30", memory_text="200 GiB", disk_text="512 GiB SSD"),
     (Decimal(30), Decimal(200), Decimal("549.76"))),
    (dict(config_text="2×Xeon 8358 64核 / 内存 512GB / 2×3.84T NVMe"),
     (Decimal(64), Decimal(512), Decimal(7680))),
    (dict(memory_text="65536 MB"), (None, Decimal(64), None)),
    (dict(), (None, None, None)),                                  # not stated: null, not 0
    (dict(vcpus_text="many", memory_text="lots"), (None, None, None)),  # unreadable: still priced
])
def test_the_machine_is_carried_where_the_source_states_it(fields, specs):
    row = normalize_offer(offer(gpu_text="A100 80G SXM4", price_text="¥62.00/时", **fields))
    assert (row["vcpus"], row["memory_gib"], row["disk_gb"]) == specs
    assert row["price_per_gpu_hour_cny"] == Decimal("62")
