"""Why a comparison signal is empty, in words with counts: the offers on one side of each
comparison among the counted latest prices (sql/signal_candidates.sql, narrowed by a reader's
filter), so an empty table says whether there was nothing to compare or nothing to compare with.
The report's signal tables and `gpuprices signals` both say it."""

from __future__ import annotations

from pipelines.query.filters import Filter
from pipelines.query.rows import records
from pipelines.warehouse.sql_files import sql_text

# What each comparison pairs: the side counted in sql/signal_candidates.sql, and what it needs.
COMPARISONS = {
    "slices": ("slice offers (a fraction of a GPU)", "a whole card of the same line and day"),
    "spot": ("spot offers", "an on-demand offer of the same configuration and day"),
    "monthly": ("monthly offers", "an hourly offer of the same line and day"),
    "multi_gpu": ("multi-GPU servers", "a single card of the same line and day"),
    "hourly_whole": ("hourly on-demand whole-card prices",
                     "a reference region of the same card to compare with"),
}


def signal_candidates(con, found: Filter | None = None) -> dict:
    """How many counted latest offers (of those `found` matches) each comparison could pair."""
    found = found or Filter()
    return records(con, sql_text(__file__, "signal_candidates").format(matched=found.sql),
                   found.params)[0]


def nothing_to_compare(candidates: dict, side: str) -> str:
    """An empty comparison's true reason: none of its offers at all, or none with a partner."""
    what, partner = COMPARISONS[side]
    n = candidates.get(side) or 0
    if not n:
        return f"No {what} among the latest prices: nothing to compare."
    with_what = partner if partner.endswith("compare with") else f"{partner} to compare with"
    return f"None of the {n} {what} among the latest prices has {with_what}."


def no_signal_rows_reason(candidates: dict) -> str:
    """Why no signal has a row for a reader's filter: how many offers it matched, and of each
    comparison's side."""
    if not candidates.get("offers"):
        return "no counted latest offer matches"
    sides = ", ".join(f"{candidates.get(side) or 0} {what.split(' (')[0]}"
                      for side, (what, _) in COMPARISONS.items())
    return (f"{candidates['offers']} counted latest offers match ({sides}), but none has a "
            "comparable offer (a slice and its whole card, spot and on-demand, ...) on the "
            "same day")
