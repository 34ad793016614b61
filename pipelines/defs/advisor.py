"""The advisor's saved workloads, recomputed on every run: `advisor.workload_advice` holds, for
each profile of workloads.yaml, the cheapest configurations of the current offers that fit it.

Each run also appends every workload's best option (rank 1) to `advisor.workload_advice_history`,
which is never replaced: the `workload_cheaper` alert rule compares a workload's latest best cost
with its previous one there.

The profiles come from `pipelines/workloads.yaml`, or the file GPUPRICES_WORKLOADS names. A bad
profile (or an unreadable file) is logged as an error and listed in the materialization's
metadata; the other profiles are still advised, so a typo in a profile never stops a run from
publishing its prices.
"""

import os
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.advisor import (
    ADVICE_COLUMNS,
    AdvisorError,
    Workload,
    advice_records,
    advise,
    measured_claims_from_db,
    offers_from_db,
    parse_profiles,
)
from pipelines.defs.execution import DUCKDB_POOL, OVERLAP_TAGS
from pipelines.warehouse.db import transaction
from pipelines.warehouse.tables import ADVICE_HISTORY_TABLE, ADVICE_TABLE

DEFAULT_WORKLOADS = Path(__file__).resolve().parents[1] / "workloads.yaml"
# The best option of each run, per workload; the columns are those of ADVICE_COLUMNS.
HISTORY_COLUMNS = ("workload", "total_cost_cny", "total_cost_usd", "configuration", "kind",
                   "gpu_model", "offer_kind", "billing_period", "vendor", "source", "offer_id",
                   "sku", "region_code", "region_group", "url")
# One history row per workload and run.
HISTORY_KEY = "computed_at timestamptz, primary key (workload, computed_at)"
ROWS_PER_WORKLOAD = 10   # the top options of each profile, plus the best of each kind beyond them


def _insert_rows(con, table: str, columns: list[str], rows: list[list]) -> None:
    """`rows` into `table` in one statement, `insert into table (columns) values (?, ...), ...`:
    one bound parameter per cell (a statement per row cost a few ms each)."""
    if not rows:
        return
    row = f"({', '.join('?' * len(columns))})"
    con.execute(f"insert into {table} ({', '.join(columns)}) values "
                + ", ".join([row] * len(rows)), [cell for r in rows for cell in r])


def workloads_path() -> Path:
    return Path(os.environ.get("GPUPRICES_WORKLOADS") or DEFAULT_WORKLOADS)


def load_profiles(path: Path) -> tuple[list[Workload], list[str]]:
    """The profiles of `path` and the errors of those that cannot be used."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        return [], [f"cannot read the workload profiles {path}: {exc.strerror or exc}"]
    try:
        return parse_profiles(text, str(path))
    except AdvisorError as exc:
        return [], [str(exc)]


def append_history(con, best_records: list[dict], computed_at: datetime) -> int:
    """Append each workload's best option of this run to advisor.workload_advice_history
    (created on first use, never replaced). Returns the rows appended."""
    ddl = ", ".join(f"{name} {ADVICE_COLUMNS[name]}" for name in HISTORY_COLUMNS)
    con.execute("create schema if not exists advisor")
    con.execute(f"create table if not exists {ADVICE_HISTORY_TABLE} ({ddl}, {HISTORY_KEY})")
    # A table of another shape fails this step on every run, not only on a run with an answer to
    # append (the alerts read it too).
    con.execute(f"select {', '.join([*HISTORY_COLUMNS, 'computed_at'])} "
                f"from {ADVICE_HISTORY_TABLE} limit 0")
    _insert_rows(con, ADVICE_HISTORY_TABLE, [*HISTORY_COLUMNS, "computed_at"],
                 [[*(row[c] for c in HISTORY_COLUMNS), computed_at] for row in best_records])
    return len(best_records)


def write_advice(con, workloads: list[Workload], computed_at: datetime,
                 rows_per_workload: int = ROWS_PER_WORKLOAD) -> dict[str, dict]:
    """Advise every workload on the current offers and replace advisor.workload_advice in one
    transaction, appending each workload's best option to advisor.workload_advice_history.
    Returns, per workload: options found, rows written, the best cost or an error."""
    offers = offers_from_db(con)
    # the price claims the verdicts cite: marts.market_claims, built by the same op as the marts
    # above (no claim is measured where it is missing)
    measured = measured_claims_from_db(con)
    summary: dict[str, dict] = {}
    records: list[dict] = []
    best_records: list[dict] = []
    for workload in workloads:
        name = workload.name or workload.describe()
        try:
            advice = advise(workload, offers, measured)
        except AdvisorError as exc:
            summary[name] = {"error": str(exc)}
            continue
        rows = advice_records(advice, rows_per_workload)
        records += rows
        if advice.answer:
            best_records.append(rows[0])   # rank 1 comes first, when no rule refuses it
        best = advice.answer
        summary[name] = {"options": len(advice.options), "rows": len(rows),
                         "best": f"{best.config}, {best.offer.vendor}, {best.cost_cny:,.0f} CNY"
                                 if best else "no offer fits"}
    ddl = ", ".join(f"{name} {kind}" for name, kind in ADVICE_COLUMNS.items())
    with transaction(con):
        con.execute("create schema if not exists advisor")
        con.execute(f"create or replace table {ADVICE_TABLE} ({ddl}, computed_at timestamptz)")
        _insert_rows(con, ADVICE_TABLE, [*ADVICE_COLUMNS, "computed_at"],
                     [[*(row[c] for c in ADVICE_COLUMNS), computed_at] for row in records])
        append_history(con, best_records, computed_at)
    return summary


@dg.asset(key=["advisor", "workload_advice"],
          deps=[dg.AssetKey(["marts", "latest_prices"]), dg.AssetKey(["marts", "price_outliers"])],
          group_name="advisor", kinds={"duckdb"}, pool=DUCKDB_POOL, op_tags=OVERLAP_TAGS,
          description="advisor.workload_advice: for every saved workload profile "
                      "(pipelines/workloads.yaml or GPUPRICES_WORKLOADS), the cheapest "
                      "configurations of the current offers that fit it (whole card, slice, "
                      "multi-GPU, spot), with cost, wall time, the offer, the interconnect and "
                      "why, beside the verdicts of the guides' rules; "
                      "each run's best option per workload is appended to "
                      "advisor.workload_advice_history. "
                      "See docs/advisor.md.")
def workload_advice(context: dg.AssetExecutionContext,
                    duckdb: DuckDBResource) -> dg.MaterializeResult:
    path = workloads_path()
    workloads, errors = load_profiles(path)
    for error in errors:
        context.log.error(error)
    with duckdb.get_connection() as con:
        summary = write_advice(con, workloads, datetime.now(UTC))
        rows = con.execute(f"select count(*) from {ADVICE_TABLE}").fetchone()[0]
    advised = []
    for name, facts in summary.items():
        if "error" in facts:
            context.log.error(f"workload {name}: {facts['error']}")
            errors.append(f"workload {name}: {facts['error']}")
        else:
            advised.append(f"{name}: {facts['options']} options, best {facts['best']}")
    # one line for the step (each a stored event): the errors above have their own
    context.log.info(f"advice for {len(advised)} workloads: " + "; ".join(advised))
    return dg.MaterializeResult(metadata={
        "workloads_file": str(path), "workloads": len(workloads), "row_count": rows,
        "best": dg.MetadataValue.json({name: facts.get("best", facts.get("error"))
                                       for name, facts in summary.items()}),
        "invalid_profiles": dg.MetadataValue.json(errors)})


advisor_assets = [workload_advice]
