"""The SQL models of dbt_like_sql/ as assets, run inside DuckDB."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.execution import DUCKDB_POOL
from pipelines.warehouse.db import ensure_schema, transaction
from pipelines.warehouse.sql_models import SqlModel, load_models, run_model
from spiders.layout import SQL_DIR

# Tables the Python assets build, by the name SQL uses for them.
EXTERNAL_TABLES = {"observations": dg.AssetKey("observations"),
                   "quarantine": dg.AssetKey("quarantine")}


def _asset_key(table: str) -> dg.AssetKey:
    return EXTERNAL_TABLES.get(table) or dg.AssetKey(table.split("."))


def build_model_asset(model: SqlModel) -> dg.AssetsDefinition:
    @dg.asset(
        key=[model.layer, model.name],
        deps=[_asset_key(t) for t in model.reads],
        group_name=model.layer,
        kinds={"sql", "duckdb"},
        pool=DUCKDB_POOL,
        description=model.description,
        metadata={"sql_file": str(model.path.relative_to(SQL_DIR.parent)),
                  "materialized": model.materialized},
    )
    def sql_model(context: dg.AssetExecutionContext,
                  duckdb: DuckDBResource) -> dg.MaterializeResult:
        with duckdb.get_connection() as con:
            ensure_schema(con)
            with transaction(con):
                how = run_model(con, model)
            rows = con.execute(f"select count(*) from {model.table}").fetchone()[0]
        context.log.info(f"{model.table}: {how}, {rows} rows")
        return dg.MaterializeResult(metadata={"row_count": rows, "build": how})

    return sql_model


SQL_MODELS = load_models(SQL_DIR, set(EXTERNAL_TABLES))
model_assets = [build_model_asset(m) for m in SQL_MODELS]
