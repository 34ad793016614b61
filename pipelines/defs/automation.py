"""Jobs, schedules and sensors: the hourly crawl-to-alerts run, and telling people when a run or a
source fails (through the same Apprise channels as price alerts)."""

import os

import dagster as dg

from pipelines.defs.alerts import notify_run_failure
from pipelines.defs.execution import DUCKDB_POOL_NAME, DUCKDB_TAG_KEY, MULTIPROCESS
from pipelines.defs.ingest import CRAWL_CHECK
from pipelines.defs.run_lock_executor import run_locked
from pipelines.defs.step_overlap import overlapping_in_process_executor

# Each step process is forked from a server that has loaded the code location once: spawning a
# fresh interpreter per step re-imports Dagster and the definitions (seconds per step).
# One step tagged as a DuckDB step in flight at a time (pipelines/defs/execution.py says why).
MULTIPROCESS_EXECUTOR = dg.multiprocess_executor.configured(
    {"start_method": {"forkserver": {"preload_modules": ["pipelines.step_preload"]}},
     "tag_concurrency_limits": [{"key": DUCKDB_TAG_KEY, "value": DUCKDB_POOL_NAME, "limit": 1}]})

gpuprices_job = dg.define_asset_job(
    "gpuprices_job",
    selection=dg.AssetSelection.all(),
    description="Crawl every source, normalize, validate, rebuild the SQL models, feeds and the "
                "published database, detect and deliver alerts, and write the report.",
    # In process by default: a handful of steps, and process-per-step costs ~2 s each here; the
    # steps after the models side by side on threads (pipelines/defs/step_overlap.py).
    # GPUPRICES_EXECUTOR=multiprocess: one process per step, one step per source's crawl, the
    # steps that open DuckDB taking turns in the duckdb_writer pool (pipelines/defs/execution.py).
    # Either way the run holds the data directory's lock (pipelines/defs/run_lock_executor.py).
    executor_def=run_locked(MULTIPROCESS_EXECUTOR if MULTIPROCESS
                            else overlapping_in_process_executor),
)

report_job = dg.define_asset_job(
    "report_job", selection=dg.AssetSelection.assets(["report", "price_report"]),
    description="Write the price-history report from the current data.",
    executor_def=run_locked(dg.in_process_executor),   # it opens the working database too
)

report_daily_schedule = dg.ScheduleDefinition(
    name="report_daily_schedule", job=report_job, cron_schedule="30 6 * * *",
    execution_timezone="UTC", default_status=dg.DefaultScheduleStatus.STOPPED,
)

# GPUPRICES_SCRAPE_CRON: for tests of the deployed schedule (tests/deploy/), which tick every
# minute; read when the code location loads, like GPUPRICES_EXECUTOR.
SCRAPE_CRON = os.environ.get("GPUPRICES_SCRAPE_CRON") or "0 * * * *"

scrape_hourly_schedule = dg.ScheduleDefinition(
    name="scrape_hourly_schedule", job=gpuprices_job, cron_schedule=SCRAPE_CRON,
    execution_timezone="UTC", default_status=dg.DefaultScheduleStatus.STOPPED,
)


def failed_sources(instance: dg.DagsterInstance, run_id: str) -> list[tuple[str, str]]:
    """(source, reason) for every crawl that failed its monitors in a run."""
    records = instance.get_records_for_run(
        run_id=run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION).records
    failed = []
    for record in records:
        evaluation = record.event_log_entry.dagster_event.event_specific_data
        if (evaluation.check_name == CRAWL_CHECK and not evaluation.passed
                and evaluation.severity == dg.AssetCheckSeverity.ERROR):
            failed.append((evaluation.asset_key.path[-1], evaluation.description or ""))
    return sorted(failed)


def held_sources(instance: dg.DagsterInstance, run_id: str) -> list[tuple[str, str]]:
    """(source, since when) for every source a blocking rule holds a crawl of after a run (the
    run's sources_are_fresh check says so)."""
    records = instance.get_records_for_run(
        run_id=run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION).records
    held = []
    for record in records:
        evaluation = record.event_log_entry.dagster_event.event_specific_data
        if evaluation.check_name == "sources_are_fresh" and "held" in evaluation.metadata:
            held += [(h["source"], h["held_since"]) for h in evaluation.metadata["held"].value]
    return sorted(held)


@dg.run_failure_sensor(monitored_jobs=[gpuprices_job],
                       default_status=dg.DefaultSensorStatus.RUNNING,
                       description="A failed run is reported through the alert channels.")
def run_failure_alert_sensor(context: dg.RunFailureSensorContext) -> None:
    run = context.dagster_run
    notify_run_failure(f"gpuprices run failed: {run.job_name}",
                       f"run {run.run_id}: {context.failure_event.message}")


@dg.run_status_sensor(run_status=dg.DagsterRunStatus.SUCCESS, monitored_jobs=[gpuprices_job],
                      default_status=dg.DefaultSensorStatus.RUNNING,
                      description="A run that succeeded with some sources failed reports those "
                                  "sources and why, through the alert channels; and the sources "
                                  "a blocking rule holds a crawl of (once per hold: the same "
                                  "notice is not sent again).")
def failed_source_alert_sensor(context: dg.RunStatusSensorContext) -> None:
    failed = failed_sources(context.instance, context.dagster_run.run_id)
    if failed:
        body = "\n".join(f"{source}: {reason}" for source, reason in failed)
        notify_run_failure(f"gpuprices: {len(failed)} source(s) failed to crawl", body)
    held = held_sources(context.instance, context.dagster_run.run_id)
    if held:
        body = "\n".join(f"{source}: held since {since} (`gpuprices sources` says why; it "
                         "settles by rule, or gpuprices accept / reject)" for source, since in held)
        notify_run_failure(f"gpuprices: {len(held)} source(s) held by a blocking rule", body)
