"""Values shown to people, in one place.

Scraped text in the report and alerts (`clean_text`): cut to a sane length, invisible characters
made visible. A vendor's ESC [2J or U+202E is displayed, never executed; a 1 MB sku stays short.
Scraped text in the terminal's tables (`terminal_text`): controls shown as "?", rich markup
escaped. Numbers and times as people write them, the same in the CLI, the report and the alerts
(`fraction_text`, `amount_text`, `card_share_text` "1/6 card (8 GB)", `count_text` "8 ×",
`price_text` "9,000.00 CNY/month", `as_of_text` "2026-11-30 (3 d)", `age_text`, `utc_text`),
and values for JSON and CSV output (`plain_value`)."""

import re
import unicodedata
from datetime import UTC, date, datetime
from decimal import Decimal
from fractions import Fraction
from typing import Any

from rich.markup import escape

MAX_TEXT_CHARS = 120
# Characters that would be invisible or reorder text (controls, zero-width, bidi overrides).
HIDDEN_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029"
                          "\u202a-\u202e\u2060-\u2069\ufeff]")
# C0/C1 control characters and bidi overrides: scraped text must not drive the terminal. Unlike
# HIDDEN_CHARS it also takes tab and line breaks, and leaves zero-width characters alone.
TERMINAL_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def fold(text: str | None) -> str:
    """Compare spellings loosely: full-width folded (NFKC), case-folded, spaces collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text or "").casefold().split())


def clean_text(value: Any, limit: int = MAX_TEXT_CHARS) -> str:
    """A value as one readable line of text: cut to `limit` characters (saying how much was
    cut) and with control, zero-width and bidi characters shown as `\\xNN` / `\\uNNNN`."""
    s = "" if value is None else str(value)
    if len(s) > limit:
        s = f"{s[:limit]}… (+{len(s) - limit:,} characters)"
    return HIDDEN_CHARS.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                            else f"\\u{ord(m.group()):04x}", s)


def without_controls(text: str) -> str:
    """`text` with every terminal control character (TERMINAL_CONTROLS) shown as "?"."""
    return TERMINAL_CONTROLS.sub("?", text)


def terminal_text(value: Any, limit: int = 300) -> str:
    """Text from the data, for a rich table: control characters shown as "?" (a vendor's
    ESC [2J is displayed, never executed), [markup] escaped, cut to `limit` characters."""
    text = without_controls(str(value))
    if len(text) > limit:
        text = text[:limit - 1] + "…"
    return escape(text)


def fraction_text(value: Any) -> str:
    """A share of a GPU as a fraction: 0.25 -> "1/4", 1 -> "1", None -> ""."""
    if value is None:
        return ""
    share = Fraction(Decimal(value)).limit_denominator(64)
    if share.denominator == 1:
        return str(share.numerator)
    return f"{share.numerator}/{share.denominator}"


def amount_text(value: Any) -> str:
    """A listed amount as a person writes it: 62.00, 3.673, 11,800.00, 0.0035."""
    value = Decimal(value)
    text = f"{value:,.6f}".rstrip("0")
    whole, _, decimals = text.partition(".")
    return f"{whole}.{decimals.ljust(2, '0')}"


def utc_text(value: datetime) -> str:
    """A time in UTC, ISO 8601 to the second: 2026-11-30T09:00:00Z."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def plain_value(value: Any, exact: bool = False) -> Any:
    """A value for JSON (exact=False: decimals as numbers) or CSV (exact=True: as written)."""
    if isinstance(value, Decimal):
        return str(value) if exact else float(value)
    if isinstance(value, bool) and exact:
        return "true" if value else "false"   # as DuckDB writes the feeds
    if isinstance(value, datetime):
        return utc_text(value)
    if isinstance(value, date):
        return value.isoformat()
    return value


# Months in a day count (365.25 / 12): an age is said in the unit a person reads it in.
DAYS_PER_MONTH = 30.4375
DAYS_PER_YEAR = 365.25
AGE_IN_DAYS_BELOW = 60        # "45 d" reads better than "1 mo"; "2 mo" from two months on


def age_text(days: int | None) -> str:
    """An age in days in words a person reads: "3 d", "5 mo", "2.1 y"; "?" for no age."""
    if days is None:
        return "?"
    if days < AGE_IN_DAYS_BELOW:
        return f"{days} d"
    if days < int(DAYS_PER_YEAR):      # a year from its 365th day on
        return f"{round(days / DAYS_PER_MONTH)} mo"
    return f"{days / DAYS_PER_YEAR:.1f} y"


def count_text(count: Any) -> str:
    """How many of a thing, as a person writes it before the thing: 8 -> "8 ×"."""
    return f"{int(count):,} ×"


def card_share_text(fraction: Any, vram_gb: Any = None, count: Any = 1) -> str:
    """What an offer rents, in words: "1/6 card (8 GB)" for a slice (its own memory), "8 × card"
    for a server, "1 card" for one whole card."""
    if fraction is not None and Decimal(fraction) < 1:
        memory = f" ({Decimal(vram_gb).normalize():f} GB)" if vram_gb is not None else ""
        return f"{fraction_text(fraction)} card{memory}"
    count = int(count or 1)
    return "1 card" if count == 1 else f"{count_text(count)} card"


def price_text(amount: Any, currency: str | None, period: str | None) -> str:
    """A listed price with its currency and period: "9,000.00 CNY/month"."""
    return f"{amount_text(amount)} {currency or '?'}/{period or '?'}"


def as_of_text(as_of: date | datetime | None, age_days: int | None) -> str:
    """The day a price held and its age: "2026-11-30 (3 d)"; "(age ?)" for an undated one."""
    day = as_of.date() if isinstance(as_of, datetime) else as_of
    return f"{day:%Y-%m-%d} ({age_text(age_days)})" if day else f"({age_text(age_days)})"
