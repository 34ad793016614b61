"""`gpuprices signals`: the latest day of each signal mart (latest month for the month-end dip),
narrowed by --card/--region, then the market-claims scorecard."""

from __future__ import annotations

from decimal import Decimal

import click
from rich import box
from rich.table import Table

from pipelines.cli.claims import claims_table
from pipelines.cli.exit_codes import NoData
from pipelines.cli.filters import option_errors
from pipelines.cli.options import CARD_HELP, MAX_ROWS, REGION_HELP, TEXT
from pipelines.cli.output import console
from pipelines.cli.published import published_db
from pipelines.display import fraction_text, terminal_text
from pipelines.query.comparisons import no_signal_rows_reason, signal_candidates
from pipelines.query.filters import offer_filter
from pipelines.query.rows import records
from pipelines.query.signals import (
    SIGNAL_MARTS,
    SignalMart,
    SignalScope,
    mart_columns,
    signal_query,
    signal_scope,
)
from pipelines.verdicts import TERMINAL_MARKUP

# Short headers for the terminal; the marts' own column names are in README.md.
HEADERS = {"region_code": "region", "gpu_model": "card", "offer_kind": "kind",
           "gpu_variant": "variant", "vendors_paired": "paired", "distinct_offers": "offers",
           "ratio_low": "lowest ratio", "ratio_high": "highest ratio", "spot_sku": "spot SKU",
           "monthly_sku": "package SKU", "server_sku": "server SKU", "pairing": "paired by",
           "billing_period": "period", "gpu_fraction": "fraction", "slice_vram_gb": "slice GB",
           "slice_price_cny_per_hour": "slice CNY/h", "whole_price_cny_per_hour": "whole CNY/h",
           "slice_to_whole_ratio": "slice/whole", "per_gpu_premium": "premium/GPU",
           "region_group": "region", "median_price_cny_per_gpu_hour": "median CNY/GPU-h",
           "reference_price_cny_per_gpu_hour": "reference", "discount_pct": "discount %",
           "on_demand_price_cny_per_gpu_hour": "on-demand CNY/GPU-h",
           "spot_price_cny_per_gpu_hour": "spot CNY/GPU-h", "spot_discount_pct": "discount %",
           "gpu_count": "GPUs", "hourly_price_cny_per_gpu_hour": "hourly CNY/GPU-h",
           "monthly_price_cny_per_gpu_hour": "monthly CNY/GPU-h", "saving_pct": "saving %",
           "server_gpu_count": "GPUs", "server_price_cny_per_gpu_hour": "server CNY/GPU-h",
           "single_price_cny_per_gpu_hour": "single CNY/GPU-h",
           "server_to_single_ratio": "server/single", "dip_pct": "dip %",
           "months_observed": "months",
           "offer_months": "offer-months", "positive_offer_months": "below line",
           "p_value": "p", "strength_pct": "depth %", "depth_ci_low_pct": "CI low %",
           "depth_ci_high_pct": "CI high %", "median_recovery_pct": "recovery %",
           "noise_pct": "noise %", "error_bound_pp": "± pp", "window_days": "days",
           "month_verdict": "this month", "dip_verdict": "recurring",
           "months_needed": "+months"}
VERDICT_COLUMNS = frozenset({"month_verdict", "dip_verdict"})
TEXT_COLUMNS = frozenset({"vendor", "region_code", "gpu_model", "offer_kind", "billing_period",
                          "region_group", "gpu_variant", "pairing", "spot_sku", "monthly_sku",
                          "server_sku", *VERDICT_COLUMNS})


@click.command("signals")
@click.option("--card", type=TEXT, metavar="CARD", help=CARD_HELP)
@click.option("--region", type=TEXT, metavar="REGION", help=REGION_HELP)
@click.option("--limit", type=click.IntRange(0, MAX_ROWS), default=10, show_default=True,
              metavar="N",
              help="Rows per signal table (0 = all).")
def signals_command(card: str | None, region: str | None, limit: int) -> None:
    """The signals on the latest day of each mart, then the market-claims scorecard.

    Slice vs whole card, regional discount, spot discount, monthly vs hourly saving, multi-GPU
    discount, month-end dip (latest month: this month's verdict and the recurring one, each
    holds / does not hold / not enough evidence, with the months still needed). --card/--region
    narrow the signal tables (regional_discount by province in China, by country elsewhere); the
    scorecard always covers the whole market.

    \b
    Examples:
      gpuprices signals
      gpuprices signals --card A100-80GB --region 内蒙古

    Exit codes: 0 shown; 2 unknown card/region; 3 no database yet, or no signal rows match.
    """
    with published_db("marts.latest_prices", "marts.market_claims") as con:
        with option_errors():
            found = offer_filter(con, card, region)
        scope = signal_scope(con, found, by_card=bool(card), by_region=bool(region))
        tables = [t for signal in SIGNAL_MARTS
                  if (t := _signal_table(con, signal, scope, limit)) is not None]
        scorecard, _ = claims_table(con)
        reason = no_signal_rows_reason(signal_candidates(con, found)) if not tables else ""
    if found.notes:
        console.print("[dim]" + terminal_text(" · ".join(found.notes)) + "[/]")
    for table in tables:
        console.print(table)
    if not tables:
        console.print("[yellow]no signal rows" + (" for " + terminal_text(", ".join(found.notes))
                                                  if found.notes else "") + "[/]")
    console.print(scorecard)
    if not tables:
        raise NoData("no signal rows match " + (", ".join(found.notes) or "yet") + ": "
                     + reason)


def _signal_table(con, signal: SignalMart, scope: SignalScope, limit: int) -> Table | None:
    """The mart's rows of its latest day in scope, or None when the mart is not built or has no
    such rows."""
    present = mart_columns(con, signal)
    if not present:
        return None
    columns = [c for c in signal.columns if c in present]
    sql, params = signal_query(signal, present, scope, select=[signal.day, *columns],
                               order=signal.order)
    rows = records(con, sql, params)
    if not rows:
        return None
    latest = rows[0][signal.day]
    title = f"{signal.name}: {signal.title}, {latest:%Y-%m-%d}" if signal.day == "day" \
        else f"{signal.name}: {signal.title}, month of {latest:%Y-%m}"
    shown = rows if limit == 0 else rows[:limit]
    if len(shown) < len(rows):
        title += f" ({len(shown)} of {len(rows)}; --limit 0 for all)"
    table = Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD)
    for column in columns:
        table.add_column(HEADERS.get(column, column),
                         justify="left" if column in TEXT_COLUMNS else "right")
    for row in shown:
        table.add_row(*(_cell(c, row[c]) for c in columns))
    return table


def _cell(column: str, value) -> str:
    if value is None:
        return "[dim]–[/]"
    if column in VERDICT_COLUMNS:
        return TERMINAL_MARKUP.get(value, terminal_text(str(value)))
    if isinstance(value, bool):
        return f"[dim]{'yes' if value else 'no'}[/]"
    if column == "gpu_fraction":
        return fraction_text(value)
    if column.endswith("_gb"):
        return f"{float(value):g}"
    if isinstance(value, (Decimal, float)):
        digits = 2 if column.endswith(("_pct", "_hour", "_gpu_hour")) else 3
        return f"{float(value):,.{digits}f}"
    return terminal_text(value)
