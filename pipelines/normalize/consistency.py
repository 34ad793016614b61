"""Stage "consistency": a row out of line with its vendor's single card of the same model.

It judges a row against the other rows of its batch, so it runs on the batch (batch.py), after
every offer has been normalized on its own. Pure: no I/O.
"""

from collections import defaultdict
from decimal import Decimal
from statistics import median

# A row whose per-GPU price is this far from the same vendor's single card (either way) carries the
# signature of a GPU count or per-card misread (x8 on an 8-GPU server, /8 when a per-card price is
# divided again). Real spreads stay inside it: a slice costs 1-2x the whole card per GPU-hour, an
# 8-GPU server 70-100 % of 8 single cards, regions of one vendor up to 3x apart (GCP H100).
CONSISTENCY_FACTOR = Decimal(4)


def is_single_card(row: dict) -> bool:
    return row["gpu_count"] == 1 and row["gpu_fraction"] == 1


def inconsistent_rows(rows: list[dict]) -> dict[int, str]:
    """Index -> reason for each row out of line with its vendor's single card of the same model.

    The reference is the median per-GPU-hour price (CNY) of the *other* single-card rows of the
    same source, card and offer kind in the batch (spot is compared with spot). A single card is
    only judged against at least two others: with one, which of the two is wrong is unknown.
    """
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        groups[row["source"], row["gpu_model"], row["offer_kind"]].append(i)
    reasons = {}
    for (_, model, kind), members in groups.items():
        singles = [i for i in members if is_single_card(rows[i])]
        for i in members:
            others = [rows[j]["price_per_gpu_hour_cny"] for j in singles if j != i]
            if len(others) < (2 if is_single_card(rows[i]) else 1):
                continue
            price, reference = rows[i]["price_per_gpu_hour_cny"], median(others)
            if reference * CONSISTENCY_FACTOR < price or price * CONSISTENCY_FACTOR < reference:
                ratio = max(price / reference, reference / price)
                reasons[i] = (
                    f"{price} CNY per GPU-hour is {ratio:.1f}x away from the vendor's single "
                    f"{model} card at {reference.quantize(Decimal('0.01'))} CNY per GPU-hour "
                    f"(median of {len(others)} {kind} single-card offers in this batch; more "
                    f"than {CONSISTENCY_FACTOR}x apart): a GPU count or per-card price misread?")
    return reasons
