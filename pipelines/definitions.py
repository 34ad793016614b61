"""The gpuprices Dagster code location: crawl -> normalize -> check -> SQL models -> feeds."""

import dagster as dg

from pipelines.defs.advisor import workload_advice
from pipelines.defs.alerts import price_alerts
from pipelines.defs.automation import (
    failed_source_alert_sensor,
    gpuprices_job,
    report_daily_schedule,
    report_job,
    run_failure_alert_sensor,
    scrape_hourly_schedule,
)
from pipelines.defs.ingest import raw_offers
from pipelines.defs.models import model_assets
from pipelines.defs.normalize import observation_batch, observations
from pipelines.defs.quality import (
    observation_batch_meets_expectations,
    observation_batch_sources_consistent,
    sources_are_fresh,
)
from pipelines.defs.report import price_report
from pipelines.defs.feeds import feed_assets, published_prices_db
from pipelines.resources import crawler_from_env, duckdb_from_env

defs = dg.Definitions(
    assets=[raw_offers, observation_batch, observations, *model_assets, *feed_assets,
            published_prices_db, price_alerts, price_report, workload_advice],
    asset_checks=[observation_batch_meets_expectations, observation_batch_sources_consistent,
                  sources_are_fresh],
    jobs=[gpuprices_job, report_job],
    schedules=[scrape_hourly_schedule, report_daily_schedule],
    sensors=[run_failure_alert_sensor, failed_source_alert_sensor],
    resources={"crawler": crawler_from_env(), "duckdb": duckdb_from_env()},
)
