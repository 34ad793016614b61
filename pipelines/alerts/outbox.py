"""The alert outbox in DuckDB: its tables, the alert row, and every read and write of it.

Outbox first: an alert is stored (`alerts.outbox`, keyed by a stable `alert_key`, inserted with
`on conflict do nothing`) before anyone is told, so a re-run adds nothing and a crash or a dead
channel loses nothing. `alerts.state` holds the detection watermark.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
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
    route: tuple[str, ...] = ()      # the rule's channel tags; empty: the default channels

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
            "route": list(alert.route),
        }).fetchall()
        new.extend(row[0] for row in inserted)
    return new


@dataclass(frozen=True)
class DeliveryState:
    """Where one alert stands: the channels that have it, its route, per-channel outcomes."""
    status: str = "pending"
    delivered_to: tuple[str, ...] = ()
    route: tuple[str, ...] = ()
    channel_status: dict = field(default_factory=dict)

    @classmethod
    def from_row(cls, status: str, delivered_to: list | None, route: list | None,
                 channel_status: str | dict | None) -> DeliveryState:
        if isinstance(channel_status, str):
            channel_status = json.loads(channel_status)
        return cls(status, tuple(delivered_to or ()), tuple(route or ()),
                   dict(channel_status or {}))


def unsent_alerts(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str, str,
                                                                   DeliveryState]]:
    """(alert_key, title, body, rule, state) of every pending, partial or failed alert, oldest
    first."""
    return [(key, title, body, rule, DeliveryState.from_row("", delivered, route, channel_status))
            for key, title, body, delivered, rule, route, channel_status
            in con.execute(sql_text(__file__, "unsent_alerts")).fetchall()]


def count_unsent(con: duckdb.DuckDBPyConnection) -> int:
    return con.execute(sql_text(__file__, "count_unsent")).fetchone()[0]


def delivery_state(con: duckdb.DuckDBPyConnection, key: str) -> DeliveryState | None:
    """Where one alert stands, None when the key is not in the outbox."""
    row = con.execute(sql_text(__file__, "delivery_state"), {"alert_key": key}).fetchone()
    return DeliveryState.from_row(*row) if row else None


def record_sent(con: duckdb.DuckDBPyConnection, key: str, tries: int,
                delivered_to: list[str], channel_status: dict) -> None:
    """Every channel the alert is routed to has it now."""
    con.execute(sql_text(__file__, "mark_sent"),
                {"alert_key": key, "tries": tries, "delivered_to": delivered_to,
                 "channel_status": json.dumps(channel_status, ensure_ascii=False)})


def record_unsent(con: duckdb.DuckDBPyConnection, key: str, tries: int, delivered_to: list[str],
                  error: str | None, status: str = "failed",
                  channel_status: dict | None = None) -> None:
    """Some channel still lacks the alert: `status` ('partial' or 'failed') when tried
    (tries > 0), with why."""
    con.execute(sql_text(__file__, "mark_unsent"),
                {"alert_key": key, "tries": tries, "delivered_to": delivered_to,
                 "last_error": error, "status": status,
                 "channel_status": json.dumps(channel_status or {}, ensure_ascii=False)})


def read_state(con: duckdb.DuckDBPyConnection, name: str) -> datetime | None:
    """A detection watermark from alerts.state (max_observed_at, detected_at), None when unset."""
    row = con.execute("select value from alerts.state where name = ?", [name]).fetchone()
    return row[0] if row else None


def write_state(con: duckdb.DuckDBPyConnection, name: str, value: datetime | None) -> None:
    con.execute("insert or replace into alerts.state values (?, ?, now())", [name, value])
