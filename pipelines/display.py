"""Scraped text shown to people (report, alerts): cut to a sane length, invisible characters
made visible. A vendor's ESC [2J or U+202E is displayed, never executed; a 1 MB sku stays short."""

import re
from typing import Any

MAX_TEXT_CHARS = 120
# Characters that would be invisible or reorder text (controls, zero-width, bidi overrides).
HIDDEN_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029"
                          "\u202a-\u202e\u2060-\u2069\ufeff]")


def clean_text(value: Any, limit: int = MAX_TEXT_CHARS) -> str:
    """A value as one readable line of text: cut to `limit` characters (saying how much was
    cut) and with control, zero-width and bidi characters shown as `\\xNN` / `\\uNNNN`."""
    s = "" if value is None else str(value)
    if len(s) > limit:
        s = f"{s[:limit]}… (+{len(s) - limit:,} characters)"
    return HIDDEN_CHARS.sub(lambda m: "\\x%02x" % ord(m.group()) if ord(m.group()) < 0x100
                            else "\\u%04x" % ord(m.group()), s)
