"""Delivery: every pending or failed alert of the outbox to every channel that lacks it, a few
attempts with backoff, the outcome recorded on the alert's row.

A delivery failure never fails the run: the alert stays 'failed' and is tried again next run. A
channel that fails every attempt is not tried again for the rest of the run, so one dead webhook
costs one backoff per run, not one per alert.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import duckdb

from pipelines.alerts.channels import (
    NOTIFY_CONFIG_ENV,
    NOTIFY_URLS_ENV,
    Channel,
    routed_channels,
    send,
)
from pipelines.alerts.outbox import (
    DeliveryState,
    count_unsent,
    ensure_outbox,
    record_sent,
    record_unsent,
    unsent_alerts,
)
from pipelines.alerts.rules import DeliverySettings

log = logging.getLogger(__name__)


@dataclass
class Delivery:
    delivered: int = 0
    failed: int = 0           # reached no channel of their route this run
    partial: int = 0          # reached some channels of their route, not all
    unrouted: int = 0         # no configured channel carries their route's tags
    pending: int = 0          # left unsent in the outbox after this run (pending + failed)
    channels: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def note(self) -> str:
        if not self.channels:
            return (f"no notification URLs configured ({NOTIFY_URLS_ENV} / {NOTIFY_CONFIG_ENV}):"
                    f" {self.pending} alerts wait in alerts.outbox")
        return (f"{self.delivered} delivered, {self.partial} partial, {self.failed} failed, "
                f"{self.unrouted} without a channel, {self.pending} unsent, via "
                f"{', '.join(self.channels)}")


def _default_route_text(route: tuple[str, ...]) -> str:
    return (f"no notification URL tagged {' or '.join(route)} is configured" if route
            else "no notification URL without a tag is configured (the default channels)")


def deliver_one(con: duckdb.DuckDBPyConnection, key: str, title: str, body: str,
                state: DeliveryState, channels: list[Channel], down: dict[str, str],
                settings: DeliverySettings, sleep: Callable[[float], None],
                failure: bool = False) -> tuple[str, str | None]:
    """Deliver one outbox row to every channel of its route that does not have it yet; record
    the outcome per channel.

    The route is the alert's own tags, else `settings.default_channels`, else the untagged
    URLs. `down` maps the channels that failed every attempt earlier in this run to why; they
    are skipped, and this call adds its own. Returns (sent | partial | failed | unsent |
    unrouted, last error)."""
    route = state.route or settings.default_channels
    targets = routed_channels(channels, route)
    outcomes = dict(state.channel_status)
    if not targets:
        # Kept pending: it goes out once a URL carries the tag.
        error = _default_route_text(route)
        record_unsent(con, key, 0, list(state.delivered_to), error, channel_status=outcomes)
        return "unrouted", error
    remaining = [c for c in targets if c.id not in state.delivered_to and c.id not in down]
    skipped = {c.id: down[c.id] for c in targets
               if c.id not in state.delivered_to and c.id in down}
    done = list(state.delivered_to)
    errors: dict[str, str] = {}
    tries = 0
    for attempt in range(settings.attempts):
        if not remaining:
            break
        if attempt:
            sleep(settings.backoff_seconds * 2 ** (attempt - 1))
        tries += 1
        still = []
        for channel in remaining:
            error = send(channel, title, body, failure)
            if error is None:
                done.append(channel.id)
                errors.pop(channel.id, None)
            else:
                errors[channel.id] = error
                still.append(channel)
        remaining = still
    for channel in remaining:
        # Down for the rest of this run: the next alerts do not wait out its backoff again.
        down[channel.id] = (f"not tried: {channel.label} failed {settings.attempts} times earlier "
                            "in this run")
    for channel in targets:
        if channel.id in done:
            outcomes[channel.id] = {"channel": channel.label, "status": "sent"}
        elif channel.id in errors or channel.id in skipped:
            outcomes[channel.id] = {"channel": channel.label, "status": "failed",
                                    "error": errors.get(channel.id) or skipped[channel.id]}
    if all(c.id in done for c in targets):
        record_sent(con, key, tries, done, outcomes)
        return "sent", None
    error = "; ".join([*errors.values(), *skipped.values()]) or None
    status = "partial" if any(c.id in done for c in targets) else "failed"
    record_unsent(con, key, tries, done, error, status, outcomes)
    return (status if tries else "unsent"), error


def deliver_pending(con: duckdb.DuckDBPyConnection, channels: list[Channel],
                    settings: DeliverySettings | None = None,
                    sleep: Callable[[float], None] = time.sleep,
                    logger: Any = None) -> Delivery:
    """Send every pending or failed alert, oldest first, each up to `settings.attempts` times
    (default: DeliverySettings())."""
    settings = DeliverySettings() if settings is None else settings
    ensure_outbox(con)
    logger = logger or log
    result = Delivery(channels=[c.label for c in channels])
    if channels:
        down: dict[str, str] = {}
        not_tried = 0
        for key, title, body, rule, state in unsent_alerts(con):
            status, error = deliver_one(con, key, title, body, state, channels, down, settings,
                                        sleep, failure=rule == "run_failure")
            if status == "sent":
                result.delivered += 1
            elif status in ("failed", "partial", "unrouted"):
                setattr(result, status, getattr(result, status) + 1)
                result.errors.append(f"{key}: {error}")
                logger.warning(f"alert {key} not delivered ({status}): {error}")
            else:
                not_tried += 1
        if not_tried:
            logger.warning(f"{not_tried} alerts not tried: every channel that lacks them failed "
                           "earlier in this run; they go out next run")
    result.pending = count_unsent(con)
    return result
