"""The alert outbox in DuckDB: its tables, the alert row, and every read and write of it.

Outbox first: an alert is stored (`alerts.outbox`, keyed by a stable `alert_key`, inserted with
`on conflict do nothing`) before anyone is told, so a re-run adds nothing and a crash or a dead
channel loses nothing. `alerts.state` holds the detection watermark.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import duckdb

from pipelines.display import clean_text
from pipelines.warehouse.sql_files import sql_text

OUTBOX_SQL = sql_text(__file__, "outbox")
MAX_TITLE_CHARS, MAX_LINE_CHARS = 200, 400   # per alert title and per line of its body


def ensure_outbox(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(OUTBOX_SQL)


@dataclass(frozen=True)
class Alert:
    alert_key: str
    rule: str
    title: str
    body: str
    payload: dict

    def __post_init__(self) -> None:
        # Scraped text reaches people's phones: cut each line, make invisible characters visible.
        object.__setattr__(self, "title", clean_text(self.title, MAX_TITLE_CHARS))
        object.__setattr__(self, "body", "\n".join(clean_text(line, MAX_LINE_CHARS)
                                                   for line in self.body.split("\n")))


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat() if value.tzinfo else value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def insert_alerts(con: duckdb.DuckDBPyConnection, alerts: list[Alert]) -> list[str]:
    """Insert into the outbox; returns the keys that were new (an existing key is left alone)."""
    new = []
    for alert in alerts:
        inserted = con.execute(sql_text(__file__, "insert_alert"), {
            "alert_key": alert.alert_key, "rule": alert.rule, "title": alert.title,
            "body": alert.body,
            "payload": json.dumps(alert.payload, default=_json_default, ensure_ascii=False),
        }).fetchall()
        new.extend(row[0] for row in inserted)
    return new


def unsent_alerts(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    """(alert_key, title, body, delivered_to, rule) of every pending or failed alert, oldest
    first."""
    return con.execute(sql_text(__file__, "unsent_alerts")).fetchall()


def count_unsent(con: duckdb.DuckDBPyConnection) -> int:
    return con.execute(sql_text(__file__, "count_unsent")).fetchone()[0]


def delivery_state(con: duckdb.DuckDBPyConnection, key: str) -> tuple[str, list[str]] | None:
    """(status, delivered_to) of one alert, None when the key is not in the outbox."""
    row = con.execute("select status, delivered_to from alerts.outbox where alert_key = ?",
                      [key]).fetchone()
    return (row[0], row[1] or []) if row else None


def record_sent(con: duckdb.DuckDBPyConnection, key: str, tries: int,
                delivered_to: list[str]) -> None:
    """Every channel has the alert now."""
    con.execute(sql_text(__file__, "mark_sent"),
                {"alert_key": key, "tries": tries, "delivered_to": delivered_to})


def record_unsent(con: duckdb.DuckDBPyConnection, key: str, tries: int, delivered_to: list[str],
                  error: str | None) -> None:
    """Some channel still lacks the alert: 'failed' when tried (tries > 0), with why."""
    con.execute(sql_text(__file__, "mark_unsent"),
                {"alert_key": key, "tries": tries, "delivered_to": delivered_to,
                 "last_error": error})


def read_state(con: duckdb.DuckDBPyConnection, name: str) -> datetime | None:
    """A detection watermark from alerts.state (max_observed_at, detected_at), None when unset."""
    row = con.execute("select value from alerts.state where name = ?", [name]).fetchone()
    return row[0] if row else None


def write_state(con: duckdb.DuckDBPyConnection, name: str, value: datetime | None) -> None:
    con.execute("insert or replace into alerts.state values (?, ?, now())", [name, value])
