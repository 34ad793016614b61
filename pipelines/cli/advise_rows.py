"""`gpuprices advise` as rows: one dict per option and the column list, the form every listing
command prints through pipelines/cli/output.py (a table for people, csv or json for scripts).
Every line states its price basis and as-of date; an option a rule refuses is below the line,
with the rule."""

from __future__ import annotations

from pipelines.advisor import Advice, Option
from pipelines.advisor.advisable import basis_text
from pipelines.display import age_text

# The columns of the listing, in order (the table shows them, csv / json carry them).
ADVISE_COLUMNS = ["rank", "kind", "configuration", "vendor", "region", "price_basis",
                  "billing", "rent_cny_per_hour", "cost_to_finish_cny", "cost_to_finish_usd",
                  "time_to_finish", "throughput_a100", "memory", "refused_by"]


def _region(option: Option) -> str:
    o = option.offer
    where = o.region_group if o.country == "CN" else (
        f"{o.province_or_state}, {o.country}" if o.province_or_state else o.country)
    return o.region_code if o.region_code == where else f"{o.region_code} ({where})"


def time_to_finish(option: Option) -> str:
    """Hours run, over how many days of the usage pattern: "56 h in 14 d"."""
    hours = option.wall_hours
    text = f"{hours:,.1f} h" if hours < 100 else f"{hours:,.0f} h"
    return f"{text} in {option.days_used} d"


def option_row(option: Option, rank: int) -> dict:
    o = option.offer
    return {
        "rank": rank if not option.refused_by else None,
        "kind": option.kind,
        "configuration": option.config,
        "vendor": o.vendor,
        "region": _region(option),
        "price_basis": basis_text(o) + (f" ({age_text(o.price_age_days)})"
                                        if o.price_age_days is not None else ""),
        "billing": o.billing_period,
        "rent_cny_per_hour": round(option.rent_per_hour_cny, 2),
        "cost_to_finish_cny": round(option.cost_cny, 2),
        "cost_to_finish_usd": None if option.cost_usd is None else round(option.cost_usd, 2),
        "time_to_finish": time_to_finish(option),
        "throughput_a100": round(option.throughput, 3),
        "memory": f"{option.need_gb_per_card:,.1f}/{option.vram_gb_per_card:g} GB",
        "refused_by": "; ".join(option.refused_by),
    }


def advise_rows(advice: Advice, limit: int | None) -> tuple[list[dict], list[str]]:
    """The options shown: the top `limit` allowed ones (all when None), then the refused ones
    below the line (at most `limit` of them), each with its rank (none below the line)."""
    allowed = [o for o in advice.options if not o.refused_by]
    refused = [o for o in advice.options if o.refused_by]
    if limit is not None:
        allowed, refused = allowed[:limit], refused[:limit]
    rows = [option_row(o, rank) for rank, o in enumerate(allowed, start=1)]
    rows += [option_row(o, 0) for o in refused]
    return rows, list(ADVISE_COLUMNS)
