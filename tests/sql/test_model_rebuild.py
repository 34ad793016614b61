"""The full rebuild in slices of history (pipelines/warehouse/model_rebuild.py): every model of
the project built a few days of history at a time equals the one-statement full build, and a
slice that fails leaves `observations` whole and the sliced models to be built anew."""

from __future__ import annotations

from datetime import UTC, date, datetime
from unittest.mock import ANY

import duckdb
import pytest

from pipelines.simulate import DUCKDB_CONFIG, MonthEndDip, load_offers, simulate
from pipelines.warehouse.db import ensure_schema
from pipelines.warehouse.model_batch import ModelBatch
from pipelines.warehouse.model_rebuild import (
    rebuild_models,
    slice_days_for,
    slice_ends,
    upstream_closure,
)
from pipelines.warehouse.sql_models import load_models
from spiders.layout import SQL_DIR
from tests.helpers.observations import EXTERNAL, insert, obs
from tests.sql.test_incremental_marts import _same  # floats equal to their last bits' noise
from tests.sql.test_model_batch import DAILY  # looks per day, incremental by day

START = datetime(2026, 4, 22, tzinfo=UTC)
DAYS = 16                       # to May 7: slices end Apr 27, May 2 (across the month), May 7


@pytest.mark.parametrize(("first", "last", "days", "ends"), [
    (date(2026, 4, 1), date(2026, 4, 1), 30, []),                   # a day: one slice
    (date(2026, 4, 1), date(2026, 4, 30), 30, []),                  # 30 days: one slice
    (date(2026, 4, 1), date(2026, 5, 1), 30, [date(2026, 5, 1)]),   # a day left after it
    (date(2026, 4, 1), date(2026, 4, 10), 4, [date(2026, 4, 5), date(2026, 4, 9)]),
    (date(2026, 4, 1), date(2026, 12, 31), 0, []),                  # 0: never sliced
])
def test_slice_ends(first, last, days, ends):
    assert slice_ends(first, last, days) == ends


@pytest.mark.parametrize(("rows", "days", "limit", "slice_days"), [
    (16_000_000, 365, "2.3 GiB", 0),          # a year of 2,000 offers fits 2.5 GB: whole
    (16_000_000, 365, "238.4 MiB", 26),       # ... not 250 MB: about a month a slice
    (161_000_000, 365, "2.3 GiB", 26),        # the 20,000-offer year at 2.5 GB
    (161_000_000, 1, "2.3 GiB", 0),           # a day is never sliced
    (5_000_000_000, 365, "100MB", 1),         # at least a day a slice
])
def test_slice_days_for(rows, days, limit, slice_days):
    assert slice_days_for(rows, days, limit) == slice_days


def _rows(con, table: str) -> list[tuple]:
    columns = con.execute(f"select * from {table} limit 0").description
    floats = {d[0] for d in columns if d[1] in ("DOUBLE", "FLOAT")}
    order = [f'"{d[0]}"' for d in columns if d[0] not in floats] + [f'"{c}"' for c in floats]
    return con.execute(f"select * from {table} order by {', '.join(order)}").fetchall()


def test_a_sliced_full_rebuild_equals_the_one_statement_full_build(tmp_path):
    history = tmp_path / "history.db"
    simulate(history, offers=load_offers(sources=["alibaba_cn", "idc_ulanqab", "vultr"]),
             start=START, days=DAYS, seed=7, every_hours=6,
             effects=[MonthEndDip(5, ("idc_ulanqab", "vultr"))], build_models=False)
    models = load_models(SQL_DIR)
    assert len({m.table for m in upstream_closure(models)}) > 10   # the slices build many
    tables = {}
    for name, slice_days in (("whole", 0), ("sliced", 5)):
        path = tmp_path / f"{name}.db"
        path.write_bytes(history.read_bytes())
        con = duckdb.connect(str(path), config=dict(DUCKDB_CONFIG))
        try:
            ensure_schema(con)
            con.execute("set variable price_reference_day = date '2026-05-08'")
            builds = rebuild_models(con, models, slice_days=slice_days)
            assert {how for _, how, _ in builds} <= {"full", "view"}
            assert con.execute("select count(*) from duckdb_views() where temporary "
                               "and not internal"
                               ).fetchone()[0] == 0
            tables[name] = {m.table: _rows(con, m.table) for m in models
                            if m.materialized == "table"}
        finally:
            con.close()
    differing = [t for t, rows in tables["whole"].items()
                 if len(rows) != len(tables["sliced"][t])
                 or not all(_same(a, b) for a, b in zip(rows, tables["sliced"][t], strict=True))]
    assert not differing, f"a sliced rebuild differs from the full one: {differing}"
    assert sum(len(rows) > 0 for rows in tables["whole"].values()) > 20   # a test of something


# each day with the latest observation its build could see
SEEN = """/* looks per day, and the latest look visible when the day was built */
-- incremental: d
select observed_hour::date as d, (select max(observed_hour) from observations) as latest_seen
from observations
where observed_hour >= since_hour(0)
group by d
"""
# builds the first slice (in full) and fails in a later one (from Nov 5 on)
FAILS_LATER = """/* looks per day, failing on the slice from Nov 5 */
-- incremental: d
select
    observed_hour::date as d,
    case when since_day() >= date '2026-11-05' then error('boom') end as x
from observations
where observed_hour >= since_hour(0)
"""


def _models(tmp_path, models: dict[str, str]) -> list:
    root = tmp_path / "models"
    for rel, sql in models.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(sql)
    return load_models(root, EXTERNAL)


def _ten_days(tmp_path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(tmp_path / "w.db"))
    ensure_schema(con)
    for day in range(1, 11):
        insert(con, [obs("10", observed_at=datetime(2026, 11, day, 9, tzinfo=UTC))],
               crawl_id=f"c{day}")
    return con


def test_a_slice_sees_only_the_history_before_its_end(tmp_path):
    models = _models(tmp_path, {"intermediate/seen.sql": SEEN})
    con = _ten_days(tmp_path)
    assert rebuild_models(con, models, slice_days=3) == [("intermediate.seen", "full", ANY)]
    seen = dict(con.execute("select d, latest_seen::date from intermediate.seen").fetchall())
    # slices end Nov 4, 7 and 10; the last is open: each day saw its slice's last day, no later
    assert [seen[date(2026, 11, d)].day for d in range(1, 11)] == [3, 3, 3, 6, 6, 6, 9, 9, 9, 10]
    assert con.execute("select count(*) from observations").fetchone()[0] == 10


def test_a_failed_slice_leaves_the_history_whole_and_its_models_to_rebuild(tmp_path):
    models = _models(tmp_path, {"intermediate/daily.sql": DAILY,
                                "marts/fails_later.sql": FAILS_LATER})
    con = _ten_days(tmp_path)
    with pytest.raises(duckdb.Error, match="boom"):
        rebuild_models(con, models, slice_days=2)
    assert con.execute("select count(*) from observations").fetchone()[0] == 10   # unshadowed
    assert con.execute("select count(*) from raw.model_state").fetchone()[0] == 0   # forgotten
    # the next ordinary build starts the model afresh, over the whole history
    assert ModelBatch(con).build(models[0]) == "full"
    assert con.execute("select count(*), sum(looks) from intermediate.daily").fetchone() == (10, 10)
