"""How the report writes a value as text: prices, percentages, counts, fractions, times. Each
returns plain text (never markup; the templates escape it) and "—" for a missing value."""

from datetime import UTC, date, datetime
from typing import Any

from pipelines.display import clean_text

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
    v = number(value)
    return MISSING if v is None else ("whole" if v == 1 else f"{v:g}")


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
    """The observed span with its number of days, or a sentence when nothing is observed."""
    if not first:
        return "no observations yet"
    return f"{utc(first)} → {utc(last)} ({days:,} day{'s' if days != 1 else ''})"


def listed(row: dict) -> str:
    """An offer's price as the vendor lists it: 9,000.00 CNY / month."""
    amount = number(row.get("price_amount"))
    if amount is None:
        return MISSING
    return (f"{amount:,.2f} {clean_text(row.get('currency'), 8)} / "
            f"{clean_text(row.get('billing_period'))}")


def instance(row: dict) -> str:
    """What an offer rents: "0.25 of a card" or "8 × card"."""
    gpus, part = row.get("gpu_count"), number(row.get("gpu_fraction"))
    return f"{part:g} of a card" if part is not None and part < 1 else f"{gpus} × card"


def value_range(low: Any, high: Any) -> str:
    """An interval of measured figures; open-ended when one side is missing ("saves 20-40 %+")."""
    if low is None and high is None:
        return MISSING
    if high is None:
        return f"≥ {plain(low)}"
    if low is None:
        return f"≤ {plain(high)}"
    return f"{plain(low)} – {plain(high)}"
