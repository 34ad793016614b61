"""What a price's unit says it is for: one card ("元/卡/时", "per GPU", "卡·时"), one named card
("RMB/V100·HOUR": a V100's card-hour), or one machine ("CNY/Machine/Day", "/台/月", "整机").

The price grammar (prices.py) reads these markers in a price text; is_per_card reads them in a
column header or unit cell. Texts are normalized (NFKC, lower case) before these patterns see
them. A machine price is for as many cards as the machine holds: normalization quarantines one
whose card count neither the page nor the configuration states.
"""

from __future__ import annotations

import re

# The price is one card's, wherever the marker stands: "/卡/月", "/月/卡", "每卡", "单卡", "每张卡",
# "卡时", "卡·时", "per GPU", "/GPU/hr", "GPU-hour". Machine markers say the opposite.
PER_CARD_RE = re.compile(
    r"(?:(?<![a-z])(?:per|a|each)[\s-]+|每\s*|单\s*|/\s*)(?:张卡?|块卡?|卡|gpus?(?![a-z])|cards?(?![a-z]))"
    r"|卡\s*[·・]?\s*(?:小时|时|天|日|周|月|季|年)|(?<![a-z])gpu[-\s]?(?:hours?|hrs?|h)(?![a-z])")
PER_MACHINE_RE = re.compile(
    r"整机|每台|/\s*台|每实例|/\s*实例|(?<![a-z])per\s+(?:node|server|machine|instance)(?![a-z])"
    r"|/\s*(?:node|server|machine|instance)(?![a-z])")
# A machine as the unit a price is per ("/machine/day", "per node per month"): read like 台.
MACHINE_UNIT = r"(?:machines?|nodes?|servers?)(?![a-z])"
# A card named as the unit ("/v100·hour", "per a100-hour", "/4090·时"): a model's letters and
# digits, no bare word ("/card/hour" is PER_CARD_RE's, "/gpu·hour" too).
CARD_IN_UNIT = (r"(?:(?:rtx|gtx|tesla)\s?)?(?:[a-z]{1,2}[0-9]{2,4}[a-z]?|[0-9]{4}(?:\s?ti|d)?)"
                r"(?![a-z0-9])")
# What joins the named card to the period: "v100·hour", "a100-hour", "4090/时", "v100 hour".
CARD_PERIOD_SEP = r"(?:[·・\-/]|\s)"


def is_per_card(normalized: str) -> bool:
    """Whether a normalized header, unit cell or price says the price is one card's; a text that
    names both a card and a machine is not."""
    return bool(PER_CARD_RE.search(normalized)) and not PER_MACHINE_RE.search(normalized)
