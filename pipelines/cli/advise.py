"""`gpuprices advise`: from a workload to the cheapest configuration of today's offers that fits it.

Reads the published `data/prices.db` read-only (never the working database), like the other
reading commands. The logic is pipelines/advisor/; the rules of thumb are docs/advisor.md.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pipelines.advisor import (
    KINDS,
    PRECISIONS,
    TASKS,
    Advice,
    AdvisorError,
    Option,
    Workload,
    advice_records,
    advise,
    estimate_memory,
    explain_lines,
    measured_claims_from_db,
    offers_from_db,
)
from pipelines.cli.exit_codes import NoData
from pipelines.cli.options import MAX_AGE, MAX_AGE_HELP, MAX_DAYS, MAX_ROWS, TEXT, FiniteFloatRange
from pipelines.cli.output import make_console
from pipelines.cli.published import published_db
from pipelines.display import age_text, plain_value
from pipelines.query.ages import aged_out_note, old_prices_note
from pipelines.query.prices import latest_prices_query

# Bounds of the workload options (MAX_DAYS and MAX_ROWS are the shared ones, options.py).
MAX_GPU_HOURS = 1e7            # a thousand GPUs for over a year
MAX_BATCH_SIZE = 1 << 16
MAX_SEQ_LEN = 1 << 21          # 2M tokens


def _workload(ctx: click.Context, **values) -> Workload:
    """The options as a Workload; a value the advisor cannot read is a usage error (exit 2)."""
    try:
        workload = Workload.from_mapping({k: v for k, v in values.items() if v is not None})
        estimate_memory(workload)
    except AdvisorError as exc:
        raise click.UsageError(str(exc), ctx) from None
    return workload


def _advice_json(advice: Advice, limit: int | None) -> dict:
    records = advice_records(advice, limit)
    strip = ("workload", "workload_spec", "params_b", "task", "precision", "hours_per_day",
             "days", "gpu_hours", "interruptible", "region_filter", "estimate_gb", "assumptions",
             "verdicts")
    options = [{k: plain_value(v) for k, v in r.items() if k not in strip} for r in records]
    for option, record in zip(options, records, strict=True):
        option["why"] = record["why"].split("; ")
    best = {o["kind"]: o["rank"] for o in options if o["best_of_kind"]}
    w = advice.workload
    return {
        "workload": {"description": w.describe(), "params": w.params, "task": w.task,
                     "precision": w.precision, "hours_per_day": w.hours_per_day,
                     "days": w.days, "gpu_hours": w.gpu_hours,
                     "interruptible": w.interruptible, "region": w.region,
                     "region_read_as": advice.region_note},
        "estimate": {"total_gb": round(advice.estimate.total_gb, 2),
                     "weights_gb": round(advice.estimate.weights_gb, 2),
                     "bytes_per_param": advice.estimate.bytes_per_param,
                     "margin": advice.estimate.margin,
                     "assumptions": list(advice.estimate.assumptions)},
        "verdicts": [{"rule": v.rule, "verdict": v.verdict, "because": v.because,
                      "rule_text": v.rule_text, "holds": list(v.holds),
                      "figures": {k: plain_value(x) for k, x in v.figures.items()}}
                     for v in advice.verdicts],
        "options": options,
        "best_per_kind": best,                                   # kind -> rank in `options`
        "excluded": dict(advice.excluded.most_common()),         # reason -> offers
    }


def _hours(option: Option) -> str:
    """Hours run, over how many days of the usage pattern: "56 h in 14 d"."""
    hours = option.wall_hours
    text = f"{hours:,.1f} h" if hours < 100 else f"{hours:,.0f} h"
    return f"{text} in {option.days_used} d"


def _region(option: Option) -> str:
    o = option.offer
    where = o.region_group if o.country == "CN" else (
        f"{o.province_or_state}, {o.country}" if o.province_or_state else o.country)
    return o.region_code if o.region_code == where else f"{o.region_code} ({where})"


def _as_of(option: Option) -> str:
    """The as-of date of an option's price and its age: "as of 2026-11-30 (1 d)"."""
    o = option.offer
    return (f"as of {o.price_as_of:%Y-%m-%d} " if o.price_as_of else "") \
        + f"({age_text(o.price_age_days)})"


def _print_table(console: Console, advice: Advice, limit: int | None,
                 explain: bool = False) -> None:
    w, estimate = advice.workload, advice.estimate
    console.print(f"[bold]Workload[/]: {escape(w.describe())}")
    console.print(f"[bold]Memory estimate[/]: {estimate.total_gb:,.1f} GB")
    for note in estimate.assumptions:
        console.print(f"  · {escape(note)}")
    if advice.region_note:
        console.print(f"[bold]Region[/]: {escape(w.region or '')} → {escape(advice.region_note)}")
    verdicts = Table(title="The guides' rules", box=box.SIMPLE_HEAD, title_justify="left")
    for column in ("rule", "verdict", "because (your numbers)"):
        verdicts.add_column(column, style="bold" if column == "verdict" else None)
    for v in advice.verdicts:
        verdicts.add_row(v.rule, escape(v.verdict), escape(v.because))
    console.print(verdicts)
    shown = advice.options if limit is None else advice.options[:limit]
    title = f"{len(advice.options)} options, cheapest first"
    if len(shown) < len(advice.options):
        title += f" (showing {len(shown)}; --limit 0 for all)"
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left")
    for column, justify in (("#", "right"), ("kind", "left"), ("configuration", "left"),
                            ("vendor / region", "left"), ("billing", "left"),
                            ("total CNY", "right"), ("USD", "right"), ("wall time", "right"),
                            ("work A100-h", "right"), ("fits", "right")):
        table.add_column(column, justify=justify, style="bold" if column == "total CNY" else None)
    for rank, option in enumerate(shown, start=1):
        usd = "-" if option.cost_usd is None else f"{option.cost_usd:,.0f}"
        config = escape(option.config) + (
            f"\n[dim]{escape(option.interconnect)}[/]" if option.interconnect else "")
        table.add_row(str(rank), option.kind, config,
                      f"{escape(option.offer.vendor)}\n[dim]{escape(_region(option))}[/]"
                      f"\n[dim]{_as_of(option)}[/]",
                      option.offer.billing_period, f"{option.cost_cny:,.0f}", usd,
                      _hours(option), f"{option.work_gpu_hours:,.0f}",
                      f"{option.need_gb_per_card:,.1f}/{option.vram_gb_per_card:g} GB")
    console.print(table)
    console.print("[bold]Best per kind[/]")
    for kind in KINDS:
        option = advice.best_per_kind.get(kind)
        if option is None:
            reason = ("the workload cannot be interrupted (--interruptible allows spot)"
                      if kind == "spot" and not w.interruptible else "no offer of this kind fits")
            console.print(f"  [bold]{kind}[/]: none: {reason}")
            continue
        o = option.offer
        rank = advice.options.index(option) + 1
        seen = o.last_seen_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") \
            if isinstance(o.last_seen_at, datetime) else "unknown"
        console.print(f"  [bold]{kind}[/] (#{rank}): {escape(option.config)}, "
                      f"{escape(o.vendor)} {escape(_region(option))}: "
                      f"[bold]{option.cost_cny:,.0f} CNY[/]"
                      + ("" if option.cost_usd is None else f" ({option.cost_usd:,.0f} USD)")
                      + f", {_hours(option)}")
        console.print(f"      offer: {o.price_amount:,.2f} {o.currency}/{o.billing_period}, "
                      f"{escape(o.sku or '-')}, observed {seen}"
                      + (f", {escape(o.url)}" if o.url else ""))
        console.print(f"      why: {escape('; '.join(option.why))}")
    if advice.excluded:
        reasons = ", ".join(f"{reason} ({n})" for reason, n in advice.excluded.most_common())
        console.print(f"[dim]Left out: {escape(reasons)}[/]")
    if explain:
        console.print("[bold]Figures used[/] (pipelines/advisor/efficiency.toml, card specs in "
                      "spiders/parsing/card_catalog.csv, clusters in "
                      "pipelines/advisor/clusters.toml)")
        for line in explain_lines():
            console.print(f"  · {escape(line)}")
    if not w.gpu_hours:
        console.print(f"[dim]Every option runs {w.hours_per_day:g} h/day × {w.days} days; a "
                      "slower one does less work in that time (work A100-h). Give --gpu-hours "
                      "to rank by the cost of finishing a given amount of work.[/]")


@click.command("advise")
@click.option("--params", required=True, type=TEXT, metavar="N",
              help="Model parameters: 13B, 7e9, 70B, 350M, 130亿.")
@click.option("--task", required=True, type=TEXT, metavar="TASK",
              help=f"{' | '.join(TASKS)} (also full, sft, infer, 推理, 预训练, 全量微调).")
@click.option("--precision", type=TEXT, default="bf16", show_default=True, metavar="P",
              help=f"{' | '.join(PRECISIONS)} (fp16 is read as bf16).")
@click.option("--hours-per-day", required=True, type=FiniteFloatRange(0, 24, min_open=True),
              metavar="H", help="Hours a day the GPUs are used.")
@click.option("--days", required=True, type=click.IntRange(1, MAX_DAYS), metavar="D",
              help="Over how many days.")
@click.option("--gpu-hours", type=FiniteFloatRange(0, MAX_GPU_HOURS, min_open=True), metavar="N",
              help="The work, in hours on one A100-80GB: wall time then follows each option's "
                   "throughput (an option that cannot finish in --days is left out).")
@click.option("--interruptible", is_flag=True,
              help="The job checkpoints and can be interrupted: spot offers are allowed "
                   "(+10 % time for restarts).")
@click.option("--region", type=TEXT, metavar="REGION",
              help="Province/state (江苏 or Jiangsu, 内蒙古 or 'Inner Mongolia'), city, "
                   "country code or vendor region code.")
@click.option("--batch-size", type=click.IntRange(1, MAX_BATCH_SIZE), metavar="B",
              help="Batch size hint for the activation / KV-cache margin (default 1).")
@click.option("--seq-len", type=click.IntRange(1, MAX_SEQ_LEN), metavar="L",
              help="Sequence length hint (default 2048).")
@click.option("--max-age", type=MAX_AGE, metavar="DAYS|all", help=MAX_AGE_HELP)
@click.option("--limit", type=click.IntRange(0, MAX_ROWS), default=10, show_default=True,
              metavar="N",
              help="Options shown (0 = all); the best of each kind is always shown.")
@click.option("--explain", is_flag=True,
              help="Also print every efficiency figure and rule threshold with its source.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"], case_sensitive=False),
              default="table", show_default=True, help="A table for people, or JSON.")
@click.pass_context
def advise_command(ctx: click.Context, params: str, task: str, precision: str,
                   hours_per_day: float, days: int, gpu_hours: float | None,
                   interruptible: bool, region: str | None, batch_size: int | None,
                   seq_len: int | None, max_age: str | None, limit: int, explain: bool,
                   fmt: str) -> None:
    """The cheapest configuration of today's offers that fits a workload.

    Estimates the GPU memory the workload needs, applies the guides' rules (whole card vs slice,
    exclusive vs shared, single vs multi-GPU, spot, monthly vs hourly), tries every current offer
    as a vendor sells it: a slice, a whole card, several cards in one server of a size the vendor
    lists, a server as listed, more servers only where the vendor states a cluster interconnect
    (spot only with --interruptible); bills each for the usage pattern (hours per day × days)
    under the offer's hourly, daily or monthly price, and ranks them by total cost, with the best
    option of each kind. Rules of thumb: docs/advisor.md; --explain lists them with sources.

    \b
    Examples:
      gpuprices advise --params 13B --task lora --hours-per-day 4 --days 14
      gpuprices advise --params 70B --task qlora --hours-per-day 8 --days 10 --interruptible
      gpuprices advise --params 7B --task inference --hours-per-day 24 --days 30 --region 江苏
      gpuprices advise --params 70B --task full-finetune --hours-per-day 24 --days 14 \\
          --gpu-hours 3000 --format json

    Exit codes: 0 options found; 2 a value the advisor cannot read (unknown task, region ...);
    3 no published database yet (run `make run` first), or no offer fits.
    """
    workload = _workload(ctx, params=params, task=task, precision=precision,
                         hours_per_day=hours_per_day, days=days, gpu_hours=gpu_hours,
                         interruptible=interruptible, region=region, batch_size=batch_size,
                         seq_len=seq_len)
    with published_db("marts.latest_prices", "marts.price_outliers") as con:
        offers = offers_from_db(con, max_age)
        ages = latest_prices_query(con, max_age=max_age)     # how many the max age left out
        measured = measured_claims_from_db(con)
    old, aged_out = old_prices_note(ages.ages), ages.aged_out
    left_out = aged_out_note(aged_out, ages.max_age, ages.delisted)
    try:
        advice = advise(workload, offers, measured)
    except AdvisorError as exc:   # the only one left once the workload is valid: --region
        raise click.BadParameter(str(exc), ctx, param_hint="--region") from None
    shown = None if limit == 0 else limit
    if fmt == "json":
        answer = _advice_json(advice, shown)
        answer |= {"aged_out": aged_out, "delisted": ages.delisted, "old_prices": old}
        if explain:
            answer["explain"] = explain_lines()
        click.echo(json.dumps(answer, ensure_ascii=False, indent=2))
    else:
        out = make_console(file=sys.stdout)
        if old:
            out.print(f"[bold yellow]{escape(old)}[/]")
        _print_table(out, advice, shown, explain)
        if left_out:
            out.print(f"[dim]{escape(left_out)}[/]")
    if not advice.options:
        reasons = ", ".join(f"{r} ({n})" for r, n in advice.excluded.most_common())
        raise NoData(f"no current offer fits {workload.describe()} "
                     f"(needs {advice.estimate.total_gb:,.1f} GB): {reasons or 'no offers'}"
                     + (f"; {left_out}" if left_out else ""))
