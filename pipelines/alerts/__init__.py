"""Price alerts: rules from a TOML file, detection in SQL, an outbox in DuckDB, Apprise delivery.

The flow is outbox-first so that nothing is lost and nothing is sent twice:
1. `detect_alerts` runs each rule's SQL against the working database and inserts what it finds
   into `alerts.outbox` with a stable `alert_key` (`on conflict do nothing`): a re-run, or a price
   that has not changed, finds the same key and adds nothing.
2. `deliver_pending` sends every pending or failed alert through Apprise to the URLs configured in
   the environment, a few attempts with backoff, and records the outcome on the alert's row; a
   failed alert is tried again on the next run.

The modules, in that order:
    rules.py     the rules file (alerts.toml beside it) read into dataclasses, every key checked
    outbox.py    alerts.outbox and alerts.state: the tables, the alert row, reads and writes
    templating.py  the Jinja2 templates of titles and bodies (templates/*.j2), user overrides
    messages.py  what each alert says: key, title, body
    detect.py    each rule's SQL (sql/*.sql) over the working database, into the outbox
    channels.py  the Apprise channels from the environment (tags route alerts), secrets kept out
    deliver.py   the outbox to each alert's channels, with retries, status per channel
    notices.py   run-failure notices, sent at once and recorded
"""

from pipelines.alerts.channels import (
    NOTIFY_CONFIG_ENV,
    NOTIFY_URLS_ENV,
    Channel,
    NotifyConfigError,
    load_channels,
    routed_channels,
    send,
    split_entries,
    split_urls,
)
from pipelines.alerts.deliver import Delivery, deliver_pending
from pipelines.alerts.detect import Detection, detect_alerts, find_alerts
from pipelines.alerts.notices import FailureNotice, notify_run_failure
from pipelines.alerts.outbox import OUTBOX_SQL, Alert, ensure_outbox, insert_alerts
from pipelines.alerts.rules import (
    CONFIG_ENV,
    DEFAULT_CONFIG,
    AlertConfigError,
    AlertRules,
    load_rules,
    parse_rules,
)

__all__ = [
    "CONFIG_ENV",
    "DEFAULT_CONFIG",
    "NOTIFY_CONFIG_ENV",
    "NOTIFY_URLS_ENV",
    "OUTBOX_SQL",
    "Alert",
    "AlertConfigError",
    "AlertRules",
    "Channel",
    "Delivery",
    "Detection",
    "FailureNotice",
    "NotifyConfigError",
    "deliver_pending",
    "detect_alerts",
    "ensure_outbox",
    "find_alerts",
    "insert_alerts",
    "load_channels",
    "load_rules",
    "notify_run_failure",
    "parse_rules",
    "routed_channels",
    "send",
    "split_entries",
    "split_urls",
]
