"""Price alerts as a Dagster asset: detect into alerts.outbox, then deliver through Apprise.

Register `price_alerts` with the other assets; `notify_run_failure` (re-exported here) is for a
run-failure sensor. The rules are in pipelines/alerts/alerts.toml (or GPUPRICES_ALERTS_CONFIG),
the notification URLs in GPUPRICES_NOTIFY_URLS / GPUPRICES_NOTIFY_CONFIG; see docs/alerts.md.
"""

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.alerts import (
    AlertConfigError,
    NotifyConfigError,
    deliver_pending,
    detect_alerts,
    load_channels,
    load_rules,
    notify_run_failure,
)
from pipelines.alerts.detect import tables_read as alert_tables_read
from pipelines.defs.execution import DUCKDB_POOL, OVERLAP_TAGS
from pipelines.warehouse.sql_models import LAYERS as MODEL_LAYERS

__all__ = ["notify_run_failure", "price_alerts"]

# The models the rules' SQL reads (pipelines/alerts/sql and registry/, derived by sql_reads:
# never listed by hand), and the advisor: workload_cheaper reads
# advisor.workload_advice_history, which the advisor asset appends to, so the alerts run after it.
ALERT_INPUTS = [*(dg.AssetKey(table.split(".")) for table in sorted(alert_tables_read())
                  if table.split(".")[0] in MODEL_LAYERS),
                dg.AssetKey(["advisor", "workload_advice"])]


@dg.asset(
    key=["alerts", "price_alerts"],
    deps=ALERT_INPUTS,
    group_name="alerts",
    kinds={"duckdb", "python"},
    pool=DUCKDB_POOL, op_tags=OVERLAP_TAGS,
    description="Price-drop, new-low, month-end-dip, watch-list and saved-workload-cheaper "
                "alerts: new ones are added to "
                "alerts.outbox in the working database (each at most once, by a stable key), then "
                "every unsent alert is delivered through Apprise to GPUPRICES_NOTIFY_URLS. A "
                "delivery failure does not fail the run: the alert stays 'failed' and is retried "
                "next run. See docs/alerts.md.",
)
def price_alerts(context: dg.AssetExecutionContext, duckdb: DuckDBResource) -> dg.MaterializeResult:
    try:
        rules = load_rules()
    except AlertConfigError as exc:   # names the file and the key; nothing written yet
        raise dg.Failure(description=str(exc)) from exc
    with duckdb.get_connection() as con:
        # A failed step must not keep holding the database file: the pipeline's resource
        # (pipelines/resources.py, WorkingDuckDB) closes it however the block ends, and this
        # closes it for a plain DuckDBResource too (the tests' own).
        try:
            detection = detect_alerts(con, rules)
            try:
                channels = load_channels()
            except NotifyConfigError as exc:
                # The new alerts are safe in the outbox and go out on the first run with good
                # URLs; the message holds the URL's position and scheme, never its secrets.
                raise dg.Failure(description=f"{exc}; {detection.detected} new alerts wait in "
                                             "alerts.outbox",
                                 metadata={"detected": detection.detected}) from exc
            delivery = deliver_pending(con, channels, rules.delivery, logger=context.log)
        finally:
            con.close()
    per_rule = {rule: len(keys) for rule, keys in detection.new_keys.items()
                if rule != "run_failure"}   # run failures come from the sensor, not detection
    context.log.info(f"alerts: {detection.detected} new ({per_rule}) from "
                     f"{detection.new_observations} new observations; {delivery.note}")
    return dg.MaterializeResult(metadata={
        "detected": detection.detected,
        "delivered": delivery.delivered,
        "failed": delivery.failed,
        "pending": delivery.pending,
        "detected_by_rule": dg.MetadataValue.json(per_rule),
        "new_observations": detection.new_observations,
        "rules_file": rules.source,
        "channels": dg.MetadataValue.json(delivery.channels),
        "delivery": delivery.note,
    })
