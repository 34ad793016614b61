"""How the report writes a value as text: prices, percentages, counts, fractions, times. Each
returns plain text (never markup; the templates escape it) and "—" for a missing value."""

from datetime import UTC, date, datetime
from typing import Any

from pipelines.display import card_share_text, clean_text, fraction_text, price_text

MISSING = "—"


def number(value: Any) -> float | None:
    return None if value is None else float(value)


def price(value: Any) -> str:
    v = number(value)
    return MISSING if v is None else f"{v:,.2f}"


def pct(value: Any, signed: bool = False) -> str:
    v = number(value)
    if v is None:
        return MISSING
    v = round(v, 1) + 0.0       # no "-0.0 %"
    return f"{v:+.1f} %" if signed else f"{v:.1f} %"


def ratio_pct(value: Any) -> str:
    """A ratio (0.33) as a percentage (33.0 %)."""
    v = number(value)
    return MISSING if v is None else f"{100 * v:.1f} %"


def times(value: Any) -> str:
    v = number(value)
    return MISSING if v is None else f"×{v:.2f}"


def count(value: Any) -> str:
    return MISSING if value is None else f"{int(value):,}"


def fraction(value: Any) -> str:
    """A share of a card: "whole", "1/6" (pipelines/display.py's fraction_text)."""
    v = number(value)
    return MISSING if v is None else ("whole" if v == 1 else fraction_text(value))


def gigabytes(value: Any) -> str:
    v = number(value)
    return MISSING if v is None else f"{v:g}"


def plain(value: Any) -> str:
    """A measured figure: thousands without decimals (9,350), others with at most two (33.2)."""
    v = number(value)
    if v is None:
        return MISSING
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.2f}".rstrip("0").rstrip(".")


def p_value(value: Any) -> str:
    v = number(value)
    return MISSING if v is None else f"{v:.3g}"


def kind(value: Any) -> str:
    return clean_text(value).replace("_", "-")


def utc(value: Any) -> str:
    if value is None:
        return MISSING
    if isinstance(value, datetime):
        value = value.astimezone(UTC) if value.tzinfo else value
        return value.strftime("%Y-%m-%d %H:%M UTC")
    if isinstance(value, date):
        return value.isoformat()
    return clean_text(value)


def time_range(first: Any, last: Any, days: int) -> str:
    """The observed span as its first and last dates and the number of days that have data
    ("2025-10-01 to 2026-11-30: data on 4 of 426 days"), or a sentence when nothing is
    observed."""
    if not first:
        return "no observations yet"
    first_day, last_day = (v.date() if isinstance(v, datetime) else v for v in (first, last))
    span = (last_day - first_day).days + 1
    if span == days:
        return f"{first_day} to {last_day}: data on each of its {days:,} day{'s' * (days != 1)}"
    return f"{first_day} to {last_day}: data on {days:,} of {span:,} days"


def listed(row: dict) -> str:
    """An offer's price as the vendor lists it: 9,000.00 CNY/month (pipelines/display.py)."""
    if row.get("price_amount") is None:
        return MISSING
    return price_text(row["price_amount"], clean_text(row.get("currency"), 8),
                      clean_text(row.get("billing_period")))


def instance(row: dict) -> str:
    """What an offer rents: "1/4 card (20 GB)" or "8 × card" (pipelines/display.py)."""
    return card_share_text(row.get("gpu_fraction"), row.get("vram_gb"), row.get("gpu_count"))


def value_range(low: Any, high: Any) -> str:
    """An interval of measured figures; open-ended when one side is missing ("saves 20-40 %+")."""
    if low is None and high is None:
        return MISSING
    if high is None:
        return f"≥ {plain(low)}"
    if low is None:
        return f"≤ {plain(high)}"
    return f"{plain(low)} – {plain(high)}"
