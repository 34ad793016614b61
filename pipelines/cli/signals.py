"""`gpuprices signals`: the latest day of each signal mart (latest month for the month-end dip),
narrowed by --card/--region, then the market-claims scorecard."""

from __future__ import annotations

from decimal import Decimal

import click

from pipelines.cli.claims import claim_rows, show_claims
from pipelines.cli.exit_codes import NoData
from pipelines.cli.filters import option_errors
from pipelines.cli.listing import Column, show_listing
from pipelines.cli.options import CARD_HELP, MAX_ROWS, REGION_HELP, TEXT
from pipelines.cli.output import console, listing_options, write_rows
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
# Columns that stay however narrow the terminal: the card, each signal's headline figure and
# its verdict; then the vendor and the region.
ALWAYS_SHOWN = frozenset({"gpu_model", "slice_to_whole_ratio", "discount_pct",
                          "spot_discount_pct", "saving_pct", "strength_pct", *VERDICT_COLUMNS})
SHOWN_NEXT = ("vendor", "region_code", "region_group")
# Columns left out first: identifiers a person rarely reads in a terminal (csv/json have them).
LEFT_OUT_FIRST = frozenset({"spot_sku", "monthly_sku", "server_sku", "pairing", "gpu_variant"})


@click.command("signals")
@click.option("--card", type=TEXT, metavar="CARD", help=CARD_HELP)
@click.option("--region", type=TEXT, metavar="REGION", help=REGION_HELP)
@click.option("--limit", type=click.IntRange(0, MAX_ROWS), default=10, show_default=True,
              metavar="N",
              help="Rows per signal table (0 = all).")
@listing_options("the signal rows shown (a `signal` and a `day` column, then every mart's "
                 "columns), not the scorecard: `gpuprices claims --format` has it")
def signals_command(card: str | None, region: str | None, limit: int, fmt: str,
                    wide: bool) -> None:
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
                  if (t := _signal_rows(con, signal, scope, limit)) is not None]
        _, claims = claim_rows(con)
        reason = no_signal_rows_reason(signal_candidates(con, found)) if not tables else ""
    if fmt != "table":
        columns = ["signal", "day", *dict.fromkeys(c for _, cols, _ in tables for c in cols)]
        write_rows([{c: row.get(c) for c in columns} for _, _, rows in tables for row in rows],
                   columns, fmt)
    else:
        if found.notes:
            console.print("[dim]" + terminal_text(" · ".join(found.notes)) + "[/]")
        for title, columns, rows in tables:
            show_listing(rows, [_column(c, i) for i, c in enumerate(columns)], title=title,
                         wide=wide)
            console.print("", soft_wrap=False)
        if not tables:
            console.print("[yellow]no signal rows" + (" for " + terminal_text(", ".join(
                found.notes)) if found.notes else "") + "[/]")
        show_claims(claims)
    if not tables:
        raise NoData("no signal rows match " + (", ".join(found.notes) or "yet") + ": "
                     + reason)


def _signal_rows(con, signal: SignalMart, scope: SignalScope,
                 limit: int) -> tuple[str, list[str], list[dict]] | None:
    """The title, columns and rows of the mart's latest day in scope (each row with its
    `signal` and `day`), or None when the mart is not built or has no such rows."""
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
    return title, columns, [{"signal": signal.name, "day": row[signal.day], **row}
                            for row in shown]


def _column(name: str, position: int) -> Column:
    """A signal mart's column in a table: the card and verdicts always shown, the identifiers
    a person rarely reads left out first, the others in the mart's order."""
    rank = 0 if name in ALWAYS_SHOWN else 1 + SHOWN_NEXT.index(name) if name in SHOWN_NEXT \
        else 50 if name in LEFT_OUT_FIRST else 10 + position
    return Column(HEADERS.get(name, name), lambda row: _cell(name, row[name]), rank=rank,
                  justify="left" if name in TEXT_COLUMNS else "right",
                  wrap=name in ("vendor", "region_code", "region_group"))


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
