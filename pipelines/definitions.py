"""The gpuprices Dagster code location: crawl -> normalize -> check -> SQL models -> feeds."""

import dagster as dg

from pipelines.defs.ingest import raw_offers
from pipelines.defs.models import model_assets
from pipelines.defs.normalize import observation_batch, observations
from pipelines.defs.quality import (
    observation_batch_meets_expectations,
    observation_batch_sources_consistent,
    sources_are_fresh,
)
from pipelines.defs.serve import feed_assets, published_prices_db
from pipelines.resources import crawler_from_env, duckdb_from_env

gpuprices_job = dg.define_asset_job(
    "gpuprices_job",
    selection=dg.AssetSelection.all(),
    description="Crawl every source, normalize, validate, rebuild the SQL models and the feeds.",
    executor_def=dg.in_process_executor,  # a handful of steps: process-per-step costs ~2 s each
)

scrape_hourly_schedule = dg.ScheduleDefinition(
    name="scrape_hourly_schedule", job=gpuprices_job, cron_schedule="0 * * * *", execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.STOPPED,
)

defs = dg.Definitions(
    assets=[raw_offers, observation_batch, observations, *model_assets, *feed_assets,
            published_prices_db],
    asset_checks=[observation_batch_meets_expectations, observation_batch_sources_consistent,
                  sources_are_fresh],
    jobs=[gpuprices_job],
    schedules=[scrape_hourly_schedule],
    resources={"crawler": crawler_from_env(), "duckdb": duckdb_from_env()},
)
