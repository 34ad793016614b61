"""A database made before the machine's specs (vcpus, memory_gib, disk_gb) gains them on the next
run's schema step, at the end of `observations` and `observation_batch`, its old rows null; the
models then carry them (the changed SQL rebuilds them in full)."""

from __future__ import annotations

import duckdb

from pipelines.warehouse.db import ensure_schema
from tests.helpers.observations import build_only, obs

SPECS = ["vcpus", "memory_gib", "disk_gb"]


def _columns(con, table: str) -> list[str]:
    return [name for name, *_ in con.execute(f"describe {table}").fetchall()]


def test_an_older_database_gains_the_specs_and_keeps_its_rows(tmp_path):
    path = str(tmp_path / "prices.db")
    with duckdb.connect(path) as con:
        ensure_schema(con)
        # the database as the first release made it: no spec columns
        for table in ("observations", "observation_batch"):
            con.execute(f"alter table {table} drop column vcpus")
            con.execute(f"alter table {table} drop column memory_gib")
            con.execute(f"alter table {table} drop column disk_gb")
        # a row of that release: without the machine the test rows carry today
        old = {column: value for column, value in obs(62, observed_at=obs(1)["observed_at"]).items()
               if column not in SPECS}
        columns = list(old)
        con.execute(f"insert into observations ({', '.join(columns)}) values "
                    f"({', '.join('?' for _ in columns)})", [old[c] for c in columns])
        assert not set(SPECS) & set(_columns(con, "observations"))

    with duckdb.connect(path) as con:
        ensure_schema(con)
        for table in ("observations", "observation_batch"):
            assert _columns(con, table)[-3:] == SPECS
        assert con.execute("select count(*), count(vcpus) from observations").fetchone() == (1, 0)
        build_only(con, "marts.latest_prices")
        latest = con.execute("select price_amount, vcpus, memory_gib, disk_gb "
                             "from marts.latest_prices").fetchall()
        assert latest == [(62, None, None, None)]
