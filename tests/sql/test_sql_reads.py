"""pipelines/warehouse/sql_reads.py: the tables a SQL text, or a module's sql/ folder, reads."""

from __future__ import annotations

import pytest

from pipelines.warehouse.sql_reads import (
    SqlReadsError,
    reads_and_writes,
    tables_read,
    tables_read_by_sql_dir,
)


@pytest.mark.parametrize(("sql", "read", "written"), [
    ("select * from marts.latest_prices", {"marts.latest_prices"}, set()),
    ("select * from main.observations as o", {"observations"}, set()),
    ("with x as (select * from marts.a) select * from x join intermediate.b using (k)",
     {"marts.a", "intermediate.b"}, set()),
    # a CTE named like a table of another schema is still that table
    ("with a as (select 1) select * from a, marts.a", {"marts.a"}, set()),
    ("select * from t where a = ? and b = $name and c in (select k from s)", {"t", "s"}, set()),
    ("select * from t where list_contains($xs::varchar[], a) limit $n", {"t"}, set()),
    ("create or replace temp table w as select k from marts.a", {"marts.a"}, {"w"}),
    ("insert into alerts.outbox (k) values ($k) on conflict (k) do nothing returning k",
     set(), {"alerts.outbox"}),
    ("update alerts.outbox set s = $s where k = $k", set(), {"alerts.outbox"}),
    ("delete from r.x where k in (select k from r.y)", {"r.y"}, {"r.x"}),
    ("create schema if not exists alerts; create table if not exists alerts.state (k varchar);"
     " select * from alerts.state", {"alerts.state"}, {"alerts.state"}),
])
def test_reads_and_writes(sql, read, written):
    assert reads_and_writes(sql) == (frozenset(read), frozenset(written))


@pytest.mark.parametrize(("sql", "message"), [
    ("insert into {table} select * from x", "template"),
    ("select * from where", "syntax error"),
])
def test_what_it_cannot_read_is_an_error_naming_the_file(sql, message):
    with pytest.raises(SqlReadsError, match=rf"q\.sql: .*{message}"):
        tables_read(sql, "q.sql")


def test_a_folder_reads_what_its_files_read_but_what_they_make(tmp_path):
    (tmp_path / "sql").mkdir()
    files = {"make.sql": "create or replace temp table w as select k from marts.a",
             "use.sql": "select * from w join marts.b using (k) where k = $k",
             "template.sql": "select * from ({select}) as s",
             "write.sql": "insert into alerts.outbox (k) select k from intermediate.c"}
    for name, sql in files.items():
        (tmp_path / "sql" / name).write_text(sql, encoding="utf-8")
    reads = tables_read_by_sql_dir(str(tmp_path / "module.py"))
    assert reads == {"marts.a", "marts.b", "intermediate.c"}


def test_a_broken_file_of_a_folder_is_an_error(tmp_path):
    (tmp_path / "sql").mkdir()
    (tmp_path / "sql" / "bad.sql").write_text("select * from", encoding="utf-8")
    with pytest.raises(SqlReadsError, match=r"bad\.sql"):
        tables_read_by_sql_dir(str(tmp_path / "module.py"))


def test_the_report_and_the_alerts_read_their_marts():
    import pipelines.alerts.detect as detect
    import pipelines.report.queries as queries

    report = tables_read_by_sql_dir(queries.__file__)
    assert {"marts.chart_points", "marts.card_history", "marts.month_end_counts",
            "marts.cheapest_offers", "staging.stg_shown_observations"} <= report
    alerts = detect.tables_read()   # sql/ and the rule registry
    assert {"marts.held_observations", "marts.month_end_dip_alerts", "marts.latest_prices",
            "staging.stg_observations"} <= alerts
    # the detection's own tables are made, not read
    assert not {"alert_new_observations", "alert_held_observations", "alerts.outbox"} & alerts
