"""Notices that a run or a source failed: sent at once through the alert channels (for the
run-failure and failed-source sensors) and recorded in the outbox as `run_failure` alerts.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from pipelines.alerts.channels import Channel, load_channels, routed_channels, send
from pipelines.alerts.deliver import deliver_one
from pipelines.alerts.outbox import Alert, delivery_state, ensure_outbox, insert_alerts
from pipelines.alerts.rules import AlertConfigError, AlertRules, DeliverySettings, load_rules
from pipelines.warehouse.db import DUCKDB_CONFIG
from spiders.layout import work_db_path

log = logging.getLogger(__name__)


@dataclass
class FailureNotice:
    alert_key: str
    status: str               # sent | partial | failed | pending (no channel) | duplicate
    recorded: bool            # written to alerts.outbox
    error: str | None = None


def notify_run_failure(title: str, body: str, *, con: duckdb.DuckDBPyConnection | None = None,
                       channels: list[Channel] | None = None,
                       settings: DeliverySettings | None = None,
                       sleep: Callable[[float], None] = time.sleep,
                       route: tuple[str, ...] | None = None) -> FailureNotice:
    """Tell people a run failed, now, through the alert channels, and record it in the outbox.

    For a run-failure sensor: `con` defaults to the working database; when that is locked (a
    new run already holds it) the notice is still sent, just not recorded. The same title and
    body are sent once: a sensor that reports the same failure again is a no-op. It goes to
    `[run_failure] channels` of the rules file (`route`), else to the default channels.
    """
    channels = load_channels() if channels is None else channels
    if settings is None or route is None:
        try:
            rules = load_rules()
        except AlertConfigError as exc:   # a broken rules file must not silence the notice
            log.warning(f"run failure routed to the default channels: {exc}")
            rules = AlertRules()
        settings = settings or rules.delivery
        route = rules.run_failure.channels if route is None else route
    key = "run_failure:" + hashlib.sha256(f"{title}\n{body}".encode()).hexdigest()[:16]
    own = None
    if con is None:
        try:
            work_db_path().parent.mkdir(parents=True, exist_ok=True)
            own = con = duckdb.connect(str(work_db_path()), config=DUCKDB_CONFIG)
        except duckdb.Error as exc:
            log.warning(f"run failure not recorded in alerts.outbox ({exc}); sending it anyway")
    try:
        if con is None:
            return _send_unrecorded(key, title, body,
                                    routed_channels(channels, route or settings.default_channels),
                                    settings, sleep)
        ensure_outbox(con)
        new = insert_alerts(con, [Alert(key, "run_failure", title, body,
                                        {"title": title, "body": body}, route)])
        state = delivery_state(con, key)
        if not new and state.status == "sent":
            return FailureNotice(key, "duplicate", True)
        if not channels:
            return FailureNotice(key, "pending", True, "no notification URLs configured")
        status, error = deliver_one(con, key, title, body, state, channels, {},
                                    settings, sleep, failure=True)
        if status == "unrouted":
            status = "pending"
        return FailureNotice(key, status, True, error)
    finally:
        if own is not None:
            own.close()


def _send_unrecorded(key: str, title: str, body: str, channels: list[Channel],
                     settings: DeliverySettings, sleep: Callable[[float], None]) -> FailureNotice:
    """Without the database: try every channel, a few times with backoff, record nothing."""
    if not channels:
        return FailureNotice(key, "pending", False, "no notification URLs configured")
    remaining, error = list(channels), None
    for attempt in range(settings.attempts):
        if attempt:
            sleep(settings.backoff_seconds * 2 ** (attempt - 1))
        errors = {c.id: send(c, title, body, failure=True) for c in remaining}
        remaining = [c for c in remaining if errors[c.id]]
        error = "; ".join(e for e in errors.values() if e) or None
        if not remaining:
            return FailureNotice(key, "sent", False)
    return FailureNotice(key, "failed", False, error)
