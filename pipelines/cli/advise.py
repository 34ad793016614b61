"""`gpuprices advise`: from a workload to the cheapest configuration of today's offers that fits it.

Reads the published `data/prices.db` read-only (never the working database), like the other
reading commands. The logic is pipelines/advisor/; the rules of thumb are docs/advisor.md.
"""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console
from rich.markup import escape

from pipelines.advisor import (
    PRECISIONS,
    TASKS,
    Advice,
    AdvisorError,
    Workload,
    advice_records,
    advise,
    estimate_memory,
    explain_lines,
    measured_claims_from_db,
    offers_from_db,
)
from pipelines.advisor.advisable import basis_text
from pipelines.advisor.inputs import input_notes
from pipelines.advisor.savings import savings_lines, signal_evidence_from_db
from pipelines.cli.advise_rows import advise_rows, time_to_finish
from pipelines.cli.exit_codes import NoData
from pipelines.cli.listing import Column, show_listing
from pipelines.cli.options import MAX_AGE, MAX_AGE_HELP, MAX_DAYS, MAX_ROWS, TEXT, FiniteFloatRange
from pipelines.cli.output import listing_options, make_console, write_rows
from pipelines.cli.published import published_db
from pipelines.display import plain_value
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
        "inputs": input_notes(w),
        "answer_rank": 1 if advice.answer else None,
        "savings": savings_lines(advice),
        "include_modeled": advice.include_modeled,
        "options": options,
        "best_per_kind": best,                                   # kind -> rank in `options`
        "excluded": dict(advice.excluded.most_common()),         # reason -> offers
    }


def _cell(value) -> str:
    return f"{value:,.2f}" if isinstance(value, float) else str(value)


def _option_columns(refused: bool) -> list[Column]:
    """The options' columns for a table that fits the terminal: the cost to finish, the
    configuration and the vendor always; the rest left out first as the width shrinks."""
    def cell(key: str):
        return lambda row: "-" if row[key] is None else escape(_cell(row[key]))
    first = Column("rule that refused it", cell("refused_by"), wrap=True, style="red") \
        if refused else Column("#", cell("rank"), justify="right")
    return [first,
            Column("cost CNY", cell("cost_to_finish_cny"), justify="right", style="bold"),
            Column("configuration", cell("configuration"), wrap=True),
            Column("vendor", cell("vendor"), wrap=True),
            Column("time to finish", cell("time_to_finish"), rank=1, justify="right"),
            Column("price basis", cell("price_basis"), rank=2, wrap=True),
            Column("region", cell("region"), rank=3, wrap=True),
            Column("rent CNY/h", cell("rent_cny_per_hour"), rank=4, justify="right"),
            Column("memory", cell("memory"), rank=5, justify="right"),
            Column("× A100", cell("throughput_a100"), rank=6, justify="right"),
            Column("kind", cell("kind"), rank=7),
            Column("billing", cell("billing"), rank=8)]


def _print_options(console: Console, advice: Advice, limit: int | None, wide: bool) -> None:
    """The ranked options (advise_rows), then the refused ones below the line with their rule,
    each a listing fitted to the terminal's width (pipelines/cli/listing.py)."""
    rows, _ = advise_rows(advice, limit)
    allowed = len(advice.allowed)
    title = f"{allowed} options, cheapest to finish the work first"
    if allowed > sum(1 for r in rows if r["rank"]):
        title += " (--limit 0 for all)"
    ranked = [r for r in rows if r["rank"]]
    refused = [r for r in rows if not r["rank"]]
    if ranked:
        show_listing(ranked, _option_columns(False), title=title, wide=wide, out=console)
    if refused:
        show_listing(refused, _option_columns(True), wide=wide, out=console,
                     title="Below the line: refused by the guides' rules")


def _print_table(console: Console, advice: Advice, limit: int | None,
                 explain: bool = False, wide: bool = False) -> None:
    w, estimate = advice.workload, advice.estimate
    console.print(f"[bold]Workload[/]: {escape(w.describe())}")
    console.print(f"[bold]Memory[/]: {estimate.total_gb:,.1f} GB")
    for note in estimate.assumptions:
        console.print(f"  · {escape(note)}")
    for note in input_notes(w):
        console.print(f"  · {escape(note)}")
    if advice.region_note:
        console.print(f"[bold]Region[/]: {escape(w.region or '')} → {escape(advice.region_note)}")
    answer = advice.answer
    title = "The answer's verdicts (the guides' rules)" if answer else \
        "The guides' rules (no option passes them)"
    verdicts = [{"rule": v.rule, "verdict": v.verdict, "because": v.because}
                for v in advice.verdicts]
    show_listing(verdicts, [Column("rule", lambda r: escape(r["rule"])),
                            Column("verdict", lambda r: escape(r["verdict"]), style="bold"),
                            Column("because (your numbers)", lambda r: escape(r["because"]),
                                   wrap=True)],
                 title=title, wide=wide, out=console)
    if answer:
        o = answer.offer
        console.print(f"[bold]Answer[/]: {escape(answer.config)}, {escape(o.vendor)} "
                      f"{escape(o.region_code)}: [bold]{answer.cost_cny:,.0f} CNY[/] to finish "
                      f"({time_to_finish(answer)}, {answer.rent_per_hour_cny:,.2f} CNY/h; "
                      f"{escape(basis_text(o))})")
        console.print(f"      offer: {o.price_amount:,.2f} {o.currency}/{o.billing_period}, "
                      f"{escape(o.sku or '-')}" + (f", {escape(o.url)}" if o.url else ""))
        console.print(f"      why: {escape('; '.join(answer.why))}")
    _print_options(console, advice, limit, wide)
    for line in savings_lines(advice):
        console.print(f"[bold]Saving[/]: {escape(line)}")
    if advice.excluded:
        reasons = ", ".join(f"{reason} ({n})" for reason, n in advice.excluded.most_common())
        console.print(f"[dim]Left out: {escape(reasons)}[/]")
    if explain:
        console.print("[bold]Figures used[/] (pipelines/advisor/efficiency.toml, card specs in "
                      "spiders/parsing/card_catalog.csv, clusters in "
                      "pipelines/advisor/clusters.toml)")
        for line in explain_lines():
            console.print(f"  · {escape(line)}")


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
@click.option("--peak-memory-gb", type=FiniteFloatRange(0, 1e6, min_open=True), metavar="GB",
              help="A measured peak GPU memory: replaces the estimate from parameters.")
@click.option("--runs", type=click.IntRange(1, 10_000), default=1, show_default=True,
              metavar="N", help="Concurrent experiments (a parameter search): N times the work.")
@click.option("--qps", type=FiniteFloatRange(0, 1e9, min_open=True), metavar="Q",
              help="Peak queries per second (inference).")
@click.option("--p99-ms", type=FiniteFloatRange(0, 1e7, min_open=True), metavar="MS",
              help="The p99 latency bound at peak: below 50 ms, no shared card or slice.")
@click.option("--deadline", "deadline_days", type=FiniteFloatRange(0, MAX_DAYS, min_open=True),
              metavar="DAYS", help="The work must finish within DAYS days (at --hours-per-day).")
@click.option("--utilisation", type=FiniteFloatRange(0, 1, min_open=True), metavar="SHARE",
              help="Share of the project's hours the cards are busy (0-1): cloud vs bare metal "
                   "vs a dedicated host.")
@click.option("--project-months", type=FiniteFloatRange(0, 120, min_open=True), metavar="M",
              help="How long the project lasts, months (with --utilisation).")
@click.option("--include-modeled", is_flag=True,
              help="Also advise on modeled (template, illustrative), undated and unstated "
                   "prices, labelled; by default only real, counted, dated prices.")
@click.option("--max-age", type=MAX_AGE, metavar="DAYS|all", help=MAX_AGE_HELP)
@click.option("--limit", type=click.IntRange(0, MAX_ROWS), default=10, show_default=True,
              metavar="N",
              help="Options shown (0 = all); the best of each kind is always shown.")
@click.option("--explain", is_flag=True,
              help="Also print every efficiency figure and rule threshold with its source.")
@listing_options("one row per option (csv, tsv); json holds the whole answer")
@click.pass_context
def advise_command(ctx: click.Context, params: str, task: str, precision: str,
                   hours_per_day: float, days: int, gpu_hours: float | None,
                   interruptible: bool, region: str | None, batch_size: int | None,
                   seq_len: int | None, peak_memory_gb: float | None, runs: int,
                   qps: float | None, p99_ms: float | None, deadline_days: float | None,
                   utilisation: float | None, project_months: float | None,
                   include_modeled: bool, max_age: str | None, limit: int, explain: bool,
                   fmt: str, wide: bool) -> None:
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
                         seq_len=seq_len, peak_memory_gb=peak_memory_gb, runs=runs, qps=qps,
                         p99_ms=p99_ms, deadline_days=deadline_days, utilisation=utilisation,
                         project_months=project_months)
    with published_db("marts.latest_prices", "marts.price_outliers") as con:
        offers = offers_from_db(con, max_age)
        ages = latest_prices_query(con, max_age=max_age)     # how many the max age left out
        measured = measured_claims_from_db(con)
        signals = signal_evidence_from_db(con)
    old, aged_out = old_prices_note(ages.ages), ages.aged_out
    left_out = aged_out_note(aged_out, ages.max_age, ages.delisted)
    try:
        advice = advise(workload, offers, measured, include_modeled)
        advice.signals = signals
    except AdvisorError as exc:   # the only one left once the workload is valid: --region
        raise click.BadParameter(str(exc), ctx, param_hint="--region") from None
    shown = None if limit == 0 else limit
    if fmt in ("csv", "tsv"):
        write_rows(*advise_rows(advice, shown), fmt)
    elif fmt == "json":
        answer = _advice_json(advice, shown)
        answer |= {"aged_out": aged_out, "delisted": ages.delisted, "old_prices": old}
        if explain:
            answer["explain"] = explain_lines()
        click.echo(json.dumps(answer, ensure_ascii=False, indent=2))
    else:
        out = make_console(file=sys.stdout)
        if old:
            out.print(f"[bold yellow]{escape(old)}[/]")
        _print_table(out, advice, shown, explain, wide)
        if left_out:
            out.print(f"[dim]{escape(left_out)}[/]")
    if advice.answer is None:
        if advice.options:
            advice.excluded["refused by the guides' rules (below the line)"] += \
                len(advice.options)
        reasons = ", ".join(f"{r} ({n})" for r, n in advice.excluded.most_common())
        raise NoData(f"no current offer fits {workload.describe()} "
                     f"(needs {advice.estimate.total_gb:,.1f} GB): {reasons or 'no offers'}"
                     + (f"; {left_out}" if left_out else ""))
