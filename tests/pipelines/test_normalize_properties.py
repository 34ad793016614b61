"""Property tests for normalization: any raw offer becomes an observation or a quarantine
reason, never an exception; conversions are monotonic and keep the listed price recoverable."""

from datetime import date
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.normalize import PRICE_BOUNDS_CNY_PER_GPU_HOUR, Quarantined, normalize_offer
from spiders.parsing.currencies import convert
from spiders.parsing.prices import HOURS_PER_PERIOD

CARDS = ["NVIDIA A100 80G SXM4", "A100 40GB PCIe", "H800 80GB", "RTX 4090", "RTX 4090D",
         "A100 80G MIG 2g.20gb", "A100 80G 1/4", "H100 NVL", "Tesla V100", "", "整卡"]
PRICES = ["¥62.00/时", "1,299元/月", "$2.49/hr", "2.1万/月", "面议", "--", "¥0", "20-30元/小时",
          "原价¥3.2 现价¥2.1", "48.00 元/小时起", ""]
REGIONS = ["北京", "西北B区", "内蒙B区", "eastus", "us-west-2", "cn-beijing", "火星", ""]
text = st.one_of(st.sampled_from(CARDS + PRICES + REGIONS), st.text(max_size=30))
BASE = {"source": "idc_x", "vendor": "X IDC", "vendor_kind": "idc", "sku": "s",
        "url": "https://x.test/", "raw_ref": "0" * 64, "observed_at": "2026-11-30T09:00:00Z"}


@settings(max_examples=300, deadline=None)
@given(gpu_text=text, price_text=text, region_text=text,
       gpu_count=st.one_of(st.none(), st.integers(-2, 16), text),
       offer_kind=st.sampled_from(["on_demand", "spot", "reserved", "lease", None]),
       billing_period=st.sampled_from(["hour", "day", "month", "year", "fortnight", None]),
       price_amount=st.one_of(st.none(), st.decimals(-10, 10_000, places=3).map(str), text),
       currency=st.sampled_from([None, "CNY", "USD", "EUR", "XBT", "¥"]))
def test_any_offer_is_an_observation_or_a_quarantine_reason(**fields):
    try:
        row = normalize_offer({**BASE, **fields})
    except Quarantined as exc:
        assert exc.stage and exc.reason
    else:
        assert row["price_per_gpu_hour_cny"] > 0 and 0 < row["gpu_fraction"] <= 1


def _cny_per_gpu_hour(amount: Decimal, period: str) -> Decimal:
    return normalize_offer({**BASE, "gpu_text": "A100 80G", "region_text": "北京",
                            "offer_kind": "on_demand", "price_amount": str(amount),
                            "currency": "CNY", "billing_period": period})["price_per_gpu_hour_cny"]


# Hourly prices inside the A100's plausible bounds (a sum of two halves stays inside).
A100_LOW, A100_HIGH = PRICE_BOUNDS_CNY_PER_GPU_HOUR["A100"]
HALF = (A100_HIGH / 2).quantize(Decimal("0.01"))


@settings(deadline=None)
@given(hourly=st.decimals(max(A100_LOW, 2), HALF, places=2),
       more=st.decimals("0.01", HALF, places=2),
       period=st.sampled_from(["hour", "day", "month"]))
def test_per_gpu_hour_price_is_monotonic_in_the_listed_price(hourly, more, period):
    # listed prices whose hourly equivalent stays inside the A100's plausible bounds
    hours = HOURS_PER_PERIOD[period]
    assert (_cny_per_gpu_hour(hourly * hours, period)
            <= _cny_per_gpu_hour((hourly + more) * hours, period))


@settings(deadline=None)
@given(amount=st.decimals(max(A100_LOW, 2), A100_HIGH, places=2),
       period=st.sampled_from(sorted(HOURS_PER_PERIOD)))
def test_listed_price_is_recoverable(amount, period):
    listed = amount * HOURS_PER_PERIOD[period] if period != "hour" else amount
    per_gpu_hour = _cny_per_gpu_hour(listed, period)
    hours = HOURS_PER_PERIOD[period]
    assert abs(per_gpu_hour * hours - listed) <= Decimal("0.000001") * hours


@settings(deadline=None)
@given(low=st.decimals(1, 10_000, places=2), step=st.decimals("0.01", 1000, places=2),
       day=st.dates(date(2010, 1, 1), date(2026, 11, 30)))
def test_fx_conversion_is_monotonic(low, step, day):
    assert convert(low, "USD", "CNY", day)[0] <= convert(low + step, "USD", "CNY", day)[0]
