"""The signal marts, listed once: each with the words that head it, the column that says which
day (or month) a row is about, the columns a reader is shown first and their order. `gpuprices
signals` shows their latest day, `pipelines.api.signals` returns any of them; both narrow them by
card and region the same way (signal_scope, signal_query)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipelines.query.errors import UnknownValueError
from pipelines.query.filters import Filter, sql_in
from pipelines.warehouse.sql_files import sql_text


@dataclass(frozen=True)
class SignalMart:
    """One signal mart (marts.<name>): its label, the key columns shown first (as `gpuprices
    signals` shows them), their order, and its day column."""

    name: str
    title: str
    columns: tuple[str, ...]
    order: str
    day: str = "day"

    @property
    def table(self) -> str:
        return f"marts.{self.name}"


SIGNAL_MARTS = (
    SignalMart("slice_to_whole_ratio",
               "slice vs whole card (same vendor, region, card variant, kind, period)",
               ("vendor", "region_code", "gpu_model", "gpu_variant", "offer_kind",
                "billing_period", "gpu_fraction", "slice_vram_gb", "slice_price_cny_per_hour",
                "whole_price_cny_per_hour", "slice_to_whole_ratio", "per_gpu_premium"),
               "gpu_model, slice_to_whole_ratio"),
    SignalMart("regional_discount", "regional discount, each vendor against its own price in "
               "tier-1 cities (CN) or the US, median across vendors of a 14-day ratio; ± the "
               "error to expect",
               ("gpu_model", "offer_kind", "billing_period", "region_group", "vendors",
                "vendors_paired", "distinct_offers", "median_price_cny_per_gpu_hour",
                "reference_price_cny_per_gpu_hour", "ratio_low", "ratio_high", "discount_pct",
                "error_bound_pp", "window_days"),
               "discount_pct desc nulls last"),
    SignalMart("spot_discount", "spot against on-demand of the same SKU (else the same line)",
               ("vendor", "region_code", "gpu_model", "gpu_count", "gpu_fraction",
                "billing_period", "spot_sku", "pairing", "on_demand_price_cny_per_gpu_hour",
                "spot_price_cny_per_gpu_hour", "spot_discount_pct"),
               "spot_discount_pct desc"),
    SignalMart("monthly_vs_hourly_saving",
               "monthly package against paying hourly (same SKU, else the same line)",
               ("vendor", "region_code", "gpu_model", "gpu_fraction", "gpu_count", "offer_kind",
                "monthly_sku", "pairing", "hourly_price_cny_per_gpu_hour",
                "monthly_price_cny_per_gpu_hour", "saving_pct"),
               "saving_pct desc"),
    SignalMart("multi_gpu_discount",
               "multi-GPU server against a single card (same variant, kind, period)",
               ("vendor", "region_code", "gpu_model", "gpu_variant", "offer_kind",
                "billing_period", "server_gpu_count", "server_sku", "server_price_cny_per_gpu_hour",
                "single_price_cny_per_gpu_hour", "server_to_single_ratio", "discount_pct"),
               "discount_pct desc"),
    # The group's test over its complete months sits on every month's row, so the latest
    # (usually unfinished) month still shows it.
    SignalMart("month_end_dip", "month-end dip of the same offers below the line from mid-month "
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
SIGNALS = {signal.name: signal for signal in SIGNAL_MARTS}


def signal_named(name: str) -> SignalMart:
    """The signal mart called `name`; UnknownValueError listing the known ones if none is."""
    if name not in SIGNALS:
        raise UnknownValueError(f"unknown signal {name!r}; known: {', '.join(SIGNALS)}", "signal")
    return SIGNALS[name]


@dataclass(frozen=True)
class SignalScope:
    """What narrows a signal mart (None: not narrowed that way): the card models, and the
    region codes with their region groups (province in China, country elsewhere) of the offers a
    card and region filter matched. The marts have no province or city column, so a region is
    matched by code where a mart has one, else by group."""

    models: list[str] | None = None
    codes: list[str] | None = None
    groups: list[str] | None = None


def signal_scope(con, found: Filter, by_card: bool, by_region: bool) -> SignalScope:
    """The scope of the offers `found` matched (staging.stg_observations' region groups), by
    card and/or by region; the whole market when neither."""
    if not (by_card or by_region):
        return SignalScope()
    rows = con.execute(f"{sql_text(__file__, 'signal_scope')} where {found.sql}",
                       found.params).fetchall()
    models = sorted({r[0] for r in rows})
    codes, groups = sorted({r[1] for r in rows}), sorted({r[2] for r in rows})
    return SignalScope(models if by_card else None, *((codes, groups) if by_region
                                                      else (None, None)))


def mart_columns(con, signal: SignalMart) -> list[str]:
    """The mart's columns in table order; none when it is not built."""
    return [c for (c,) in con.execute(sql_text(__file__, "mart_columns"), {"mart": signal.name})
            .fetchall()]


def signal_query(signal: SignalMart, present: Sequence[str], scope: SignalScope, *,
                 select: Sequence[str] | None = None, order: str | None = None,
                 every_day: bool = False) -> tuple[str, list]:
    """SQL and parameters for the mart's rows in `scope` (`present`: its columns), on its latest
    day unless `every_day`: `select` columns (default all), ordered by `order` (default its day).
    The mart, its columns and its order are this module's constants; values are parameters."""
    where = [] if every_day else [f"{signal.day} = (select max({signal.day}) from {signal.table})"]
    params: list = []
    if scope.models is not None and "gpu_model" in present:
        where.append(sql_in("gpu_model", scope.models) if scope.models else "false")
        params += scope.models
    if scope.codes is not None:   # region codes where the mart has them, else its region groups
        column, values = ("region_code", scope.codes) if "region_code" in present \
            else ("region_group", scope.groups or [])
        where.append(sql_in(column, values) if values else "false")
        params += values
    names = ", ".join(select) if select else "*"
    return (f"select {names} from {signal.table} where {' and '.join(where) or 'true'} "
            f"order by {order or signal.day}", params)
