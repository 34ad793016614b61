"""Detection: run each enabled rule's SQL (`registry/<rule>.sql`) over the working database and
add the new alerts to the outbox, moving the watermark, in one transaction.

`drop` and `new_low` look only at observations loaded since the previous detection
(`sql/new_observations.sql`); `month_end_dip`, `watch` and `workload_cheaper` read the current
state of their tables each run, and their keys keep them to one alert. A possible outlier (a price
far from its card's market, marts.price_outliers) alerts nobody until a later crawl confirms it
(marts.held_observations; `watch` skips offers the mart holds back).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

from pipelines.alerts.built_in import BUILT_IN
from pipelines.alerts.messages import registered_alert
from pipelines.alerts.outbox import Alert, ensure_outbox, insert_alerts, read_state, write_state
from pipelines.alerts.registry import registered_rules
from pipelines.alerts.rules import RULES, AlertRules, RegisteredRuleSettings
from pipelines.alerts.templating import alert_texts
from pipelines.query.rows import records
from pipelines.warehouse.db import transaction
from pipelines.warehouse.sql_files import sql_text
from pipelines.warehouse.sql_reads import tables_read as sql_tables_read
from pipelines.warehouse.sql_reads import tables_read_by_sql_dir

# Built by the SQL models; a database whose models predate it holds nothing back.
HELD_TABLE = "marts.held_observations"


@dataclass
class Detection:
    new_keys: dict[str, list[str]] = field(default_factory=lambda: {r: [] for r in RULES})
    found: dict[str, int] = field(default_factory=lambda: dict.fromkeys(RULES, 0))
    new_observations: int = 0

    @property
    def detected(self) -> int:
        return sum(len(keys) for keys in self.new_keys.values())


def _table_exists(con: duckdb.DuckDBPyConnection, qualified: str) -> bool:
    schema, name = qualified.split(".")
    return con.execute(sql_text(__file__, "table_exists"),
                       {"schema_name": schema, "table_name": name}).fetchone()[0]


def find_alerts(con: duckdb.DuckDBPyConnection, rules: AlertRules) -> tuple[list[Alert], int]:
    """Every alert the rules see in the observations loaded since the previous detection (and
    the current watch and month-end state); (alerts, new observations looked at)."""
    con.execute(sql_text(__file__, "new_observations"), {
        "max_observed_at": read_state(con, "max_observed_at"),
        "detected_at": read_state(con, "detected_at"),
        "lookback_hours": rules.initial_lookback_hours})
    new_observations = con.execute(sql_text(__file__, "count_new_observations")).fetchone()[0]
    if _table_exists(con, HELD_TABLE):
        con.execute(sql_text(__file__, "copy_held_observations"))
    else:
        con.execute(sql_text(__file__, "no_held_observations"))
    texts = alert_texts(rules.templates_dir)   # checked when the rules were loaded
    alerts = registered_alerts(con, rules, texts, new_observations)
    con.execute("drop table if exists alert_new_observations")
    con.execute("drop table if exists alert_held_observations")
    return alerts, new_observations


def registered_alerts(con: duckdb.DuckDBPyConnection, rules: AlertRules, texts,
                      new_observations: int = 0) -> list[Alert]:
    """The alerts of every enabled rule of the registry (pipelines/alerts/registry/): its query,
    bound to its settings (the rules file's, else the entry's defaults), one alert per row; the
    five older rules bind and word theirs in built_in.py. A rule whose tables a database does not
    hold yet (one made before its models, the advisor's history before its first run) finds
    nothing."""
    configured = dict(rules.registered)
    alerts: list[Alert] = []
    for rule in registered_rules():
        tables = [t for t in sql_tables_read(rule.sql, str(rule.path)) if "." in t]
        if not all(_table_exists(con, t) for t in tables):
            continue
        if rule.name in BUILT_IN:
            alerts += BUILT_IN[rule.name](con, rule, rules, texts, new_observations)
            continue
        settings = configured.get(rule.name, RegisteredRuleSettings(settings=rule.settings))
        if settings.enabled:
            rows = records(con, rule.sql, dict(settings.settings))
            alerts += [registered_alert(rule, row, texts, settings.channels) for row in rows]
    return alerts


def detect_alerts(con: duckdb.DuckDBPyConnection, rules: AlertRules) -> Detection:
    """Find alerts and add the new ones to the outbox, moving the watermark, in one transaction."""
    ensure_outbox(con)
    with transaction(con):
        started = con.execute("select now()").fetchone()[0]
        alerts, new_observations = find_alerts(con, rules)
        new = set(insert_alerts(con, alerts))
        write_state(con, "max_observed_at",
                    con.execute("select max(observed_at) from observations").fetchone()[0])
        write_state(con, "detected_at", started)
    result = Detection(new_observations=new_observations)
    for alert in alerts:
        result.found[alert.rule] += 1
        if alert.alert_key in new:
            result.new_keys[alert.rule].append(alert.alert_key)
    return result


def tables_read() -> frozenset[str]:
    """Every table the rules' SQL (sql/ beside this module, and the registry's) reads: the
    alerts' inputs (not the tables detection stages for the rules, which have no schema)."""
    registry = {t for rule in registered_rules() for t in sql_tables_read(rule.sql, str(rule.path))
                if "." in t}
    return tables_read_by_sql_dir(__file__) | registry
