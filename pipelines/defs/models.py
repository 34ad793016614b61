"""The SQL models of dbt_like_sql/ as assets, run inside DuckDB.

Every model is its own asset (its own key, lineage, materializations and metadata in the UI), and
all of them are built by one step, as dagster-dbt builds a dbt project: one connection, each model
in its own transaction, in dependency order. A step per model cost a DuckDB open and checkpoint
and Dagster's per-step bookkeeping, about 0.1 s each of 26, for a build of 10-20 ms. The step can
be subset (`can_subset`): a run that selects some models builds those alone.

Each model that declares a contract (its grain and audits, pipelines/warehouse/model_contract.py)
has a blocking check, `contract`, run right after the model is built: a failure names the model,
the audit, the bad rows' count and a sample, fails the step, and so stops the feeds and the
publish (data/prices.db is one copy of the whole working database: a bad mart holds back all of
it, and the last published copy stays)."""

from collections import Counter
from collections.abc import Iterator

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.execution import DUCKDB_POOL, DUCKDB_TAGS
from pipelines.defs.ingest import RAW_KEYS
from pipelines.warehouse.contract_scope import (
    ALL_ROWS,
    Rows,
    audit_scope,
    passes_on_record,
    record_checks,
    rows_changed,
)
from pipelines.warehouse.db import ensure_schema
from pipelines.warehouse.model_batch import ModelBatch
from pipelines.warehouse.model_contract import AuditFailure, check_contract, model_contract
from pipelines.warehouse.sql_models import PYTHON_TABLES, SqlModel, load_models
from spiders.layout import SQL_DIR

# Who answers for the models in the Dagster UI.
OWNERS = ["team:gpuprices"]
# Tables the Python assets build, by the name SQL uses for them (raw.crawls: every source's
# raw asset writes its crawls' rows).
EXTERNAL_TABLES = {"observations": [dg.AssetKey("observations")],
                   "quarantine": [dg.AssetKey("quarantine")],
                   "raw.crawls": RAW_KEYS}


def _asset_key(table: str) -> dg.AssetKey:
    return dg.AssetKey(table.split("."))


def _asset_keys(table: str) -> list[dg.AssetKey]:
    """The assets that write `table`: a model's own, or the Python assets behind it."""
    return EXTERNAL_TABLES.get(table) or [_asset_key(table)]


def model_spec(model: SqlModel) -> dg.AssetSpec:
    return dg.AssetSpec(
        key=[model.layer, model.name],
        deps=[key for t in model.reads for key in _asset_keys(t)],
        group_name=model.layer,
        kinds={"sql", "duckdb"},
        description=model.description,
        owners=OWNERS,
        metadata={"sql_file": str(model.path.relative_to(SQL_DIR.parent)),
                  "materialized": model.materialized},
    )


def column_schema(model: SqlModel, columns: list[tuple]) -> dg.TableSchema:
    """The built table's columns and types (`describe`), each with the model's trailing comment
    on its select line: the column schema the Dagster UI shows."""
    # cached by the SQL's digest; sqlglot imported only for a text not in the cache
    from pipelines.warehouse.comments import cached_select_comments

    try:
        notes = cached_select_comments(model.sql)
    except Exception:   # a comment the parser cannot read must not fail a built model
        notes = {}
    return dg.TableSchema(columns=[dg.TableColumn(name, str(kind), description=notes.get(name))
                                   for name, kind, *_ in columns])


# The blocking check of a model's grain and audits.
CONTRACT_CHECK = "contract"
# What a passing check's description says of the rows it read (contract_scope.py).
SCOPE_NOTES = {"all": "", "from": " on the rebuilt rows ({where})",
               "none": " (unchanged since the last passing check)"}


def contract_spec(model: SqlModel) -> dg.AssetCheckSpec:
    contract = model_contract(model)
    audits = ", ".join(a.name for a in contract.audits) or "none"
    return dg.AssetCheckSpec(
        CONTRACT_CHECK, asset=_asset_key(model.table), blocking=True,
        description=f"One row per {', '.join(contract.grain) or '(no grain declared)'}; audits "
                    f"({model.path.name}'s header): {audits}. Blocking: a failure stops the "
                    "publish.")


def contract_result(model: SqlModel, failures: list[AuditFailure], rows: Rows = ALL_ROWS
                    ) -> dg.AssetCheckResult:
    """The check's result; `rows`: the rows it read (contract_scope.py: none when the model's
    rows did not change since its last passing check)."""
    contract = model_contract(model)
    return dg.AssetCheckResult(
        asset_key=_asset_key(model.table), check_name=CONTRACT_CHECK,
        passed=not failures, severity=dg.AssetCheckSeverity.ERROR,
        description=("; ".join(f.message for f in failures) if failures else
                     f"grain ({', '.join(contract.grain) or 'none'}) and "
                     f"{len(contract.audits)} audits hold" + SCOPE_NOTES[rows.kind].format(
                         where=rows.where())),
        metadata={"failures": dg.MetadataValue.json(
            [{"audit": f.audit, "bad_rows": f.bad_rows, "sample": f.sample} for f in failures])})


def has_contract(model: SqlModel) -> bool:
    contract = model_contract(model)
    return bool(contract.grain or contract.audits)


class ModelsFailed(Exception):
    """Some models failed to build; the models that do not read them were built."""


def build_models(con, models: list[SqlModel], log, checked: set[str] | None = None
                 ) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """Build `models` (in dependency order) on one connection, each in its own transaction, and
    yield each one's materialization, then its contract's check result (for the tables in
    `checked`, whose check is selected; None: every model with a contract). A model that fails
    is rolled back alone: the models that read it (directly or not) are not built, every other
    model is, and ModelsFailed names them all at the end."""
    ensure_schema(con)
    batch = ModelBatch(con)     # the catalog and the models' state, read once for the step
    failed: dict[str, str] = {}     # table -> why
    hows: Counter[str] = Counter()
    changed: dict[str, Rows] = {}   # table -> the rows its build may have changed
    audited = {m.table: m for m in models
               if has_contract(m) and (checked is None or m.table in checked)}
    # the last passes, read before this step builds anything
    holding = passes_on_record(con, list(audited.values()))
    passed: dict[str, bool] = {}
    try:
        for model in models:
            broken = [t for t in model.reads if t in failed]
            if broken:
                failed[model.table] = f"not built: it reads {', '.join(broken)}, which failed"
                continue
            try:
                how = batch.build(model)
                changed[model.table] = rows_changed(model, how, changed)
                check = audit_scope(changed[model.table], model.table in holding)
                rows, failures = None, []
                if model.table in audited and check.kind != "none":
                    rows, failures = check_contract(con, model, check)
                    rows = rows if check.kind == "all" else None
                if rows is None:    # metadata-fast for a table; a view is computed
                    rows = con.execute(f"select count(*) from {model.table}").fetchone()[0]
                columns = con.execute(f"describe {model.table}").fetchall()
            except Exception as exc:
                failed[model.table] = f"{type(exc).__name__}: {exc}"
                log.error(f"{model.table} failed: {failed[model.table]}")
                continue
            hows[how.split(" from ")[0]] += 1
            yield dg.MaterializeResult(
                asset_key=_asset_key(model.table),
                metadata={"row_count": rows, "build": how,
                          "dagster/column_schema": column_schema(model, columns)})
            if model.table in audited:
                for failure in failures:
                    log.error(f"{failure.message}; first rows: {failure.sample}")
                passed[model.table] = not failures
                yield contract_result(model, failures, check)
    finally:
        record_checks(con, list(audited.values()), passed, batch.started)
    # one line for the step (each model's build and rows are in its materialization's metadata;
    # every log line is an event Dagster stores)
    log.info(f"{sum(hows.values())} models built ("
             + ", ".join(f"{n} {how}" for how, n in sorted(hows.items())) + ")"
             + (f", {len(failed)} failed" if failed else ""))
    if failed:
        raise ModelsFailed("; ".join(f"{table}: {why}" for table, why in failed.items()))


SQL_MODELS = load_models(SQL_DIR, PYTHON_TABLES)
assert set(EXTERNAL_TABLES) == PYTHON_TABLES, "every table the Python assets write has its assets"


@dg.multi_asset(
    name="sql_models",
    specs=[model_spec(m) for m in SQL_MODELS],
    check_specs=[contract_spec(m) for m in SQL_MODELS if has_contract(m)],
    can_subset=True,
    pool=DUCKDB_POOL, op_tags=DUCKDB_TAGS,
    description="Every SQL model of dbt_like_sql/, in dependency order, inside DuckDB.",
)
def sql_models(context: dg.AssetExecutionContext,
               duckdb: DuckDBResource) -> Iterator[dg.MaterializeResult]:
    selected = context.selected_asset_keys
    checked = {".".join(key.asset_key.path) for key in context.selected_asset_check_keys}
    with duckdb.get_connection() as con:
        yield from build_models(con, [m for m in SQL_MODELS if _asset_key(m.table) in selected],
                                context.log, checked)
