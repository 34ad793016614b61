"""Advice as flat rows: the columns of the table advisor.workload_advice (and of
`gpuprices advise --format json`), with their DuckDB types, and one record per ranked option."""

from __future__ import annotations

from pipelines.advisor.configurations import Option
from pipelines.advisor.recommend import Advice

# The columns of advisor.workload_advice (and of --format json's options), with their types.
ADVICE_COLUMNS = {
    "workload": "varchar",              # the profile's name (or its description)
    "workload_spec": "varchar",         # "13B lora in bf16, 4 h/day for 14 days"
    "params_b": "double", "task": "varchar", "precision": "varchar",
    "hours_per_day": "double", "days": "integer", "gpu_hours": "double",
    "interruptible": "boolean", "region_filter": "varchar",
    "estimate_gb": "double", "assumptions": "varchar",
    "rank": "integer",                  # 1 = the answer (cheapest to finish, no rule refuses it)
    "kind": "varchar",                  # whole card | slice | multi-GPU | spot
    "best_of_kind": "boolean",
    "configuration": "varchar",         # "2 × A100-80GB SXM", "1/2 A100-80GB (40 GB)"
    "gpu_model": "varchar", "gpu_variant": "varchar", "cards": "integer",
    "gpu_fraction": "double", "parallelism": "varchar", "offer_kind": "varchar",
    "interconnect": "varchar",          # the link assumed between the cards ('' for one card)
    "across_servers": "boolean",        # runs across servers (a cluster interconnect is stated)
    "billing_period": "varchar",        # the offer's period, the cheapest of the rental's
    "billing_units": "double",          # hours, days or terms paid per rental
    "rentals": "integer",               # how many of the offer are rented
    "total_cost_cny": "decimal(18,2)",  # the cost of finishing the work (the order)
    "total_cost_usd": "decimal(18,2)",
    "wall_hours": "double", "days_used": "integer",
    "throughput_a100": "double",        # A100-80GB equivalents, every efficiency applied
    "work_gpu_hours": "double",         # A100-80GB GPU-hours of work done
    "cny_per_work_gpu_hour": "double",
    "need_gb_per_card": "double", "vram_gb_per_card": "double",
    "vendor": "varchar", "source": "varchar", "sku": "varchar", "region_code": "varchar",
    "region_group": "varchar", "country": "varchar", "province_or_state": "varchar",
    "city": "varchar", "price_amount": "decimal(18,6)", "currency": "varchar",
    "last_seen_at": "timestamptz",
    "price_as_of": "date",              # the date the price held (pipelines/query/ages.py)
    "price_age_days": "integer",        # days from price_as_of to the day the advice was made
    "url": "varchar", "offer_id": "varchar",
    "why": "varchar",
    "price_basis": "varchar",           # live | captured | published | ... (price_basis.py)
    "rent_cny_per_hour": "double",      # the configuration's rent per hour (not the order)
    "refused_by": "varchar",            # the guides' rules that keep it from rank 1 ('' none)
    "verdicts": "varchar",              # the workload's verdicts of the guides' rules, one a line
}

# What each advisor column means, as the published database's column comments say it
# (pipelines/warehouse/comments.py); the offer's columns (gpu_model, vendor, sku, ...) share the
# observations' comments.
ADVICE_COMMENTS = {
    "workload": "the saved profile's name (or its description)",
    "workload_spec": "the profile in words: size, task, precision, hours per day, days",
    "params_b": "the model's parameters, billions",
    "task": "what the model is run for (docs/advisor.md)", "precision": "the weights' precision",
    "hours_per_day": "hours a day the workload runs", "days": "days it runs",
    "gpu_hours": "the work, in hours on one A100-80GB (null: not stated)",
    "interruptible": "the job checkpoints: spot offers allowed",
    "region_filter": "the profile's region (null: anywhere)",
    "estimate_gb": "GPU memory the workload needs, GB", "assumptions": "what the estimate assumes",
    "rank": "1 = the answer: cheapest to finish the work among the options no rule refuses",
    "kind": "whole card | slice | multi-GPU | spot",
    "best_of_kind": "the cheapest option of its kind",
    "configuration": "the cards rented: 2 × A100-80GB SXM, 1/2 A100-80GB (40 GB), ...",
    "cards": "cards used", "parallelism": "how the cards share the work (model or data parallel)",
    "interconnect": "the link assumed between the cards ('' for one card)",
    "across_servers": "runs across servers (a cluster interconnect is stated)",
    "billing_units": "hours, days or terms paid per rental",
    "rentals": "how many of the offer are rented",
    "total_cost_cny": "the whole workload's cost, CNY", "total_cost_usd": "the same in USD",
    "wall_hours": "hours the configuration runs (and, if hourly, is paid)",
    "days_used": "days the configuration runs",
    "throughput_a100": "A100-80GB equivalents, every efficiency applied",
    "work_gpu_hours": "A100-80GB GPU-hours of work done",
    "cny_per_work_gpu_hour": "CNY per A100-80GB GPU-hour of work done",
    "need_gb_per_card": "GPU memory each card must hold, GB",
    "vram_gb_per_card": "GPU memory of each card (or slice), GB",
    "price_as_of": "the date the price held", "price_age_days": "days from price_as_of to the "
                                                                 "day the advice was made",
    "why": "why the option fits and what it assumes",
    "price_basis": "where the price comes from: live, captured, published (modeled or undated "
                   "only with --include-modeled)",
    "rent_cny_per_hour": "the configuration's rent per hour, CNY",
    "refused_by": "the guides' rules that refuse the option (below the line; '' none)",
    "verdicts": "the workload's verdicts of the guides' rules, one a line",
}


def option_record(advice: Advice, option: Option, rank: int) -> dict:
    """One ranked option as a flat record (the columns of advisor.workload_advice)."""
    w, o = advice.workload, option.offer
    return {
        "workload": w.name or w.describe(),
        "workload_spec": w.describe(),
        "params_b": w.params / 1e9, "task": w.task, "precision": w.precision,
        "hours_per_day": w.hours_per_day, "days": w.days, "gpu_hours": w.gpu_hours,
        "interruptible": w.interruptible, "region_filter": w.region,
        "estimate_gb": round(advice.estimate.total_gb, 2),
        "assumptions": "; ".join(advice.estimate.assumptions),
        "rank": rank,
        "kind": option.kind,
        "best_of_kind": advice.best_per_kind.get(option.kind) is option,
        "configuration": option.config,
        "gpu_model": o.gpu_model, "gpu_variant": o.gpu_variant, "cards": option.cards,
        "gpu_fraction": o.gpu_fraction, "parallelism": option.parallelism,
        "offer_kind": o.offer_kind, "billing_period": o.billing_period,
        "interconnect": option.interconnect, "across_servers": option.across_servers,
        "billing_units": round(option.billing.units, 4), "rentals": option.rentals,
        "total_cost_cny": round(option.cost_cny, 2),
        "total_cost_usd": None if option.cost_usd is None else round(option.cost_usd, 2),
        "wall_hours": round(option.wall_hours, 2), "days_used": option.days_used,
        "throughput_a100": round(option.throughput, 4),
        "work_gpu_hours": round(option.work_gpu_hours, 2),
        "cny_per_work_gpu_hour": round(option.cny_per_work_hour, 2),
        "need_gb_per_card": round(option.need_gb_per_card, 2),
        "vram_gb_per_card": option.vram_gb_per_card,
        "vendor": o.vendor, "source": o.source, "sku": o.sku, "region_code": o.region_code,
        "region_group": o.region_group, "country": o.country,
        "province_or_state": o.province_or_state, "city": o.city,
        "price_amount": o.price_amount, "currency": o.currency,
        "last_seen_at": o.last_seen_at, "price_as_of": o.price_as_of,
        "price_age_days": o.price_age_days, "url": o.url, "offer_id": o.offer_id,
        "why": "; ".join(option.why),
        "price_basis": o.price_basis,
        "rent_cny_per_hour": round(option.rent_per_hour_cny, 4),
        "refused_by": "; ".join(option.refused_by),
        "verdicts": "\n".join(v.line() for v in advice.verdicts),
    }


def verdict_lines(text: str | None) -> list[tuple[str, str, str]]:
    """The `verdicts` column read back: (rule, verdict, because) per line "rule: verdict — because"
    (Verdict.line), for the report."""
    out = []
    for line in (text or "").splitlines():
        head, _, because = line.partition(" — ")
        rule, _, verdict = head.partition(": ")
        if rule and verdict:
            out.append((rule, verdict, because))
    return out


def advice_records(advice: Advice, limit: int | None = None) -> list[dict]:
    """The top `limit` options (all when None), then the best of each kind not among them."""
    chosen = advice.options if limit is None else advice.options[:limit]
    shown = {id(o) for o in chosen}
    extra = [o for o in advice.best_per_kind.values() if id(o) not in shown]
    rank = {id(o): i for i, o in enumerate(advice.options, start=1)}
    return [option_record(advice, o, rank[id(o)]) for o in (*chosen, *extra)]
