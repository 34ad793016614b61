"""The SQL models of dbt_like_sql/ as assets, run inside DuckDB."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.execution import DUCKDB_POOL, DUCKDB_TAGS
from pipelines.warehouse.db import ensure_schema, transaction
from pipelines.warehouse.sql_models import SqlModel, load_models, run_model
from spiders.layout import SQL_DIR

# Who answers for the models in the Dagster UI.
OWNERS = ["team:gpuprices"]
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
        pool=DUCKDB_POOL, op_tags=DUCKDB_TAGS,
        description=model.description,
        owners=OWNERS,
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
            columns = con.execute(f"describe {model.table}").fetchall()
        context.log.info(f"{model.table}: {how}, {rows} rows")
        return dg.MaterializeResult(metadata={"row_count": rows, "build": how,
                                              "dagster/column_schema": column_schema(model,
                                                                                     columns)})

    return sql_model


def column_schema(model: SqlModel, columns: list[tuple]) -> dg.TableSchema:
    """The built table's columns and types (`describe`), each with the model's trailing comment
    on its select line: the column schema the Dagster UI shows."""
    from pipelines.warehouse.comments import select_comments  # sqlglot: only when a model runs

    try:
        notes = select_comments(model.sql)
    except Exception:   # a comment the parser cannot read must not fail a built model
        notes = {}
    return dg.TableSchema(columns=[dg.TableColumn(name, str(kind), description=notes.get(name))
                                   for name, kind, *_ in columns])


SQL_MODELS = load_models(SQL_DIR, set(EXTERNAL_TABLES))
model_assets = [build_model_asset(m) for m in SQL_MODELS]
