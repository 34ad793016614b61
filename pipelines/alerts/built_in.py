"""The five rules older than the registry: `drop`, `new_low`, `month_end_dip`, `watch`,
`workload_cheaper`. Each is a registry entry like any other (`registry/<rule>.sql`, its docs line
and key; `templates/<rule>.j2`), but its settings are typed in rules.py (offer filters, choices,
the `[[watch]]` list) and its template gets prepared text besides `row` (messages.py). Here each
binds its query's parameters and makes its alerts; a rule added to the registry needs nothing
here (docs/alerts.md, "Adding a rule").
"""

from __future__ import annotations

from collections.abc import Callable

import duckdb

from pipelines.alerts.messages import (
    drop_alert,
    month_end_dip_alert,
    new_low_alert,
    watch_alert,
    workload_cheaper_alert,
)
from pipelines.alerts.outbox import Alert
from pipelines.alerts.registry import RegisteredRule
from pipelines.alerts.rules import AlertRules, OfferFilter
from pipelines.alerts.templating import AlertTexts
from pipelines.query.rows import records

# (connection, the rule's entry, the rules file, the templates, new observations) -> alerts
BuiltInRule = Callable[[duckdb.DuckDBPyConnection, RegisteredRule, AlertRules, AlertTexts, int],
                       list[Alert]]


def _filter_params(offers: OfferFilter) -> dict:
    return {"gpu_models": list(offers.gpu_models), "offer_kinds": list(offers.offer_kinds),
            "billing_periods": list(offers.billing_periods)}


def _drop(con, rule, rules, texts, new_observations) -> list[Alert]:
    d = rules.drop
    if not d.enabled or not new_observations:
        return []
    rows = records(con, rule.sql, {
        "median_days": d.median_days, "median_min_days": d.median_min_days,
        "min_drop_pct": d.min_drop_pct, "min_below_median_pct": d.min_below_median_pct,
        "require": d.require, **_filter_params(d.offers)})
    return [drop_alert(row, d, texts) for row in rows]


def _new_low(con, rule, rules, texts, new_observations) -> list[Alert]:
    low = rules.new_low
    if not low.enabled or not new_observations:
        return []
    rows = records(con, rule.sql, {"min_improvement_pct": low.min_improvement_pct,
                                   **_filter_params(low.offers)})
    return [new_low_alert(row, low, texts) for row in rows]


def _month_end_dip(con, rule, rules, texts, new_observations) -> list[Alert]:
    if not rules.month_end_dip.enabled:
        return []
    return [month_end_dip_alert(row, texts, rules.month_end_dip.channels)
            for row in records(con, rule.sql)]


def _watch(con, rule, rules, texts, new_observations) -> list[Alert]:
    alerts: list[Alert] = []
    for watch in rules.watch:   # one query per [[watch]] entry; its key holds the watch's id
        rows = records(con, rule.sql, {
            "gpu_model": watch.gpu_model, "region_column": watch.region_column,
            "region_value": watch.region_value, "offer_kind": watch.offer_kind,
            "billing_period": watch.billing_period,
            "ceiling": watch.max_price_cny_per_gpu_hour})
        alerts += [watch_alert(row, watch, texts) for row in rows]
    return alerts


def _workload_cheaper(con, rule, rules, texts, new_observations) -> list[Alert]:
    cheaper = rules.workload_cheaper
    if not cheaper.enabled:
        return []
    rows = records(con, rule.sql, {"min_drop_pct": cheaper.min_drop_pct})
    return [workload_cheaper_alert(row, texts, cheaper.channels) for row in rows]


BUILT_IN: dict[str, BuiltInRule] = {
    "drop": _drop, "new_low": _new_low, "month_end_dip": _month_end_dip, "watch": _watch,
    "workload_cheaper": _workload_cheaper}
