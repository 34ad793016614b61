"""`gpuprices signals`: the latest day of each signal mart (latest month for the month-end dip),
narrowed by --card/--region, then the market-claims scorecard."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import click
from rich import box
from rich.table import Table

from pipelines.cli.claims import claims_table
from pipelines.cli.exit_codes import NoData
from pipelines.cli.filters import Filter, card_filter, region_filter, signal_scope, sql_in
from pipelines.cli.options import CARD_HELP, REGION_HELP
from pipelines.cli.output import console
from pipelines.cli.published import published_db, records
from pipelines.display import fraction_text, terminal_text
from pipelines.verdicts import TERMINAL_MARKUP
from pipelines.warehouse.sql_files import sql_text


@dataclass(frozen=True)
class SignalView:
    """How `gpuprices signals` shows one mart: its latest day, a few columns, sorted."""

    mart: str
    title: str
    columns: tuple[str, ...]
    order: str
    day: str = "day"


SIGNAL_VIEWS = (
    SignalView("slice_to_whole_ratio",
               "slice vs whole card (same vendor, region, card variant, kind, period)",
               ("vendor", "region_code", "gpu_model", "gpu_variant", "offer_kind",
                "billing_period", "gpu_fraction", "slice_vram_gb", "slice_price_cny_per_hour",
                "whole_price_cny_per_hour", "slice_to_whole_ratio", "per_gpu_premium"),
               "gpu_model, slice_to_whole_ratio"),
    SignalView("regional_discount", "regional discount, each vendor against its own price in "
               "tier-1 cities (CN) or the US, median across vendors of a 14-day ratio; ± the "
               "error to expect",
               ("gpu_model", "offer_kind", "billing_period", "region_group", "vendors",
                "vendors_paired", "distinct_offers", "median_price_cny_per_gpu_hour",
                "reference_price_cny_per_gpu_hour", "ratio_low", "ratio_high", "discount_pct",
                "error_bound_pp", "window_days"),
               "discount_pct desc nulls last"),
    SignalView("spot_discount", "spot against on-demand of the same SKU (else the same line)",
               ("vendor", "region_code", "gpu_model", "gpu_count", "gpu_fraction",
                "billing_period", "spot_sku", "pairing", "on_demand_price_cny_per_gpu_hour",
                "spot_price_cny_per_gpu_hour", "spot_discount_pct"),
               "spot_discount_pct desc"),
    SignalView("monthly_vs_hourly_saving",
               "monthly package against paying hourly (same SKU, else the same line)",
               ("vendor", "region_code", "gpu_model", "gpu_fraction", "gpu_count", "offer_kind",
                "monthly_sku", "pairing", "hourly_price_cny_per_gpu_hour",
                "monthly_price_cny_per_gpu_hour", "saving_pct"),
               "saving_pct desc"),
    SignalView("multi_gpu_discount",
               "multi-GPU server against a single card (same variant, kind, period)",
               ("vendor", "region_code", "gpu_model", "gpu_variant", "offer_kind",
                "billing_period", "server_gpu_count", "server_sku", "server_price_cny_per_gpu_hour",
                "single_price_cny_per_gpu_hour", "server_to_single_ratio", "discount_pct"),
               "discount_pct desc"),
    # The group's test over its complete months sits on every month's row, so the latest
    # (usually unfinished) month still shows it.
    SignalView("month_end_dip", "month-end dip of the same offers below the line from mid-month "
               "to the next month's start (hourly, listed currency, judged against each "
               "offer's own noise)",
               ("vendor", "region_code", "gpu_model", "gpu_variant", "offer_kind",
                "months_observed", "offer_months", "noise_pct", "strength_pct",
                "depth_ci_low_pct", "depth_ci_high_pct", "p_value", "month_verdict",
                "dip_verdict", "months_needed"),
               "case dip_verdict when 'holds' then 0 when 'not enough evidence' then 1 else 2 "
               "end, p_value nulls last, strength_pct desc nulls last",
               day="month"),
)
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
@click.option("--card", metavar="CARD", help=CARD_HELP)
@click.option("--region", metavar="REGION", help=REGION_HELP)
@click.option("--limit", type=click.IntRange(min=0), default=10, show_default=True, metavar="N",
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
        found, models, codes, groups = Filter(), None, None, None
        if card:
            card_filter(card, found)
        if region:
            region_filter(con, region, found)
        if card or region:
            in_scope, codes, groups = signal_scope(con, found)
            models = in_scope if card else None
            codes, groups = (codes, groups) if region else (None, None)
        tables = [t for view in SIGNAL_VIEWS
                  if (t := _signal_table(con, view, models, codes, groups, limit)) is not None]
        scorecard, _ = claims_table(con)
    if found.notes:
        console.print("[dim]" + terminal_text(" · ".join(found.notes)) + "[/]")
    for table in tables:
        console.print(table)
    if not tables:
        console.print("[yellow]no signal rows" + (" for " + terminal_text(", ".join(found.notes))
                                                  if found.notes else "") + "[/]")
    console.print(scorecard)
    if not tables:
        raise NoData("no signal rows match " + (", ".join(found.notes) or "yet")
                     + "; signals need comparable offers (a slice and its whole card, spot and "
                       "on-demand, ...) on the same day")


def _signal_table(con, view: SignalView, models: list[str] | None, codes: list[str] | None,
                  groups: list[str] | None, limit: int) -> Table | None:
    """The mart's rows of its latest day in scope (None: no filter on models / regions), or
    None when the mart is not built or has no such rows."""
    present = [c for (c,) in con.execute(sql_text(__file__, "mart_columns"), {"mart": view.mart})
               .fetchall()]
    if not present:
        return None
    columns = [c for c in view.columns if c in present]
    where, params = [f"{view.day} = (select max({view.day}) from marts.{view.mart})"], []
    if models is not None and "gpu_model" in present:
        where.append(sql_in("gpu_model", models) if models else "false")
        params += models
    if codes is not None:   # region codes where the mart has them, else its region groups
        column, values = ("region_code", codes) if "region_code" in present \
            else ("region_group", groups)
        where.append(sql_in(column, values) if values else "false")
        params += values
    # The mart, its columns and its order are this module's constants; values are parameters.
    names, conditions = ", ".join([view.day, *columns]), " and ".join(where)
    sql = f"select {names} from marts.{view.mart} where {conditions} order by {view.order}"
    rows = records(con, sql, params)
    if not rows:
        return None
    latest = rows[0][view.day]
    title = f"{view.mart}: {view.title}, {latest:%Y-%m-%d}" if view.day == "day" \
        else f"{view.mart}: {view.title}, month of {latest:%Y-%m}"
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
