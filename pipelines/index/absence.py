"""Why `marts.price_index` has no row to show (`gpuprices index`'s empty answer): the true
reason, read from what the index's inputs left out, never a guess (docs/price-index.md)."""

from __future__ import annotations

import duckdb

from pipelines.warehouse.sql_files import sql_text

# why an observation is in no series (sql/index_left_out.sql's reasons), in the words shown
LEFT_OUT = {
    "curated": "come from curated tables (their dates are edits, not days a price held: such "
               "tables carry no calendar and never enter the index)",
    "forbidden": "are from vendors whose terms forbid using their prices in an index "
                 "(spiders/terms.csv)",
    "counted_elsewhere": "are second paths to offers counted once elsewhere, or template IDCs",
    "slice": "are MIG slices or vGPU shares (another product)",
    "currency": "are listed in a currency other than CNY or USD",
}
NO_OBSERVATIONS = ("marts.price_index has no published day: the database holds no observation "
                   "yet (`gpuprices crawl` collects them; `make demo` shows the index on a "
                   "simulated history)")


def _read(con: duckdb.DuckDBPyConnection, name: str) -> list[tuple]:
    try:
        return con.execute(sql_text(__file__, name)).fetchall()
    except duckdb.CatalogException:        # a database built before these models
        return []


def left_out_text(counts: dict[str, tuple[int, int]]) -> str:
    """'12,000 observations (3 sources) come from curated tables ...; 40 ...' for every reason
    with observations."""
    parts = [f"{n:,} observation(s) from {s} source(s) {LEFT_OUT[reason]}"
             for reason, (n, s) in counts.items() if reason in LEFT_OUT and n]
    return "; ".join(parts)


def why_empty(con: duckdb.DuckDBPyConnection) -> str:
    """Why no series has a published day, from the observations and the index's inputs."""
    counts = {reason: (n, s) for reason, n, s in _read(con, "index_left_out")}
    if not counts:
        return NO_OBSERVATIONS
    total = sum(n for n, _ in counts.values())
    left = left_out_text(counts)
    inside = counts.get("in", (0, 0))[0]
    if not inside:
        return (f"marts.price_index has no published day: none of the {total:,} observation(s) "
                f"can enter the index: {left}")
    days = _read(con, "index_input_days")
    if days and all(d <= 1 for _, d, _ in days):
        last = ", ".join(f"{market} {day}" for market, _, day in days)
        return ("marts.price_index has no published day yet: the index's inputs hold one day "
                f"per market ({last}), and a day is published once a later day's crawl has "
                "landed" + (f" ({left})" if left else ""))
    if not days:
        return (f"marts.price_index has no published day: {inside:,} observation(s) could "
                "enter the index, but none is a whole-card close in a series (fresh and not "
                "held)" + (f"; {left}" if left else ""))
    return ("marts.price_index has no published day although the index's inputs hold closed "
            "days: the price_index step has not run on this database since (a run publishes "
            "it after the SQL models)")
