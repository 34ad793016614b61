"""pipelines.query.published: the published database opens read-only or says why not, in the
read layer's own errors (the CLI and the API each turn them into theirs); rows as dicts."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pipelines.query.errors import NoDataError, UnreadableDatabaseError
from pipelines.query.published import cannot_open, database_path, open_published
from pipelines.query.rows import columns_and_records, records


def test_the_path_follows_the_data_directory(tmp_path, monkeypatch):
    assert database_path(tmp_path) == tmp_path.resolve() / "prices.db"
    monkeypatch.setenv("GPUPRICES_DATA_DIR", str(tmp_path / "elsewhere"))
    assert database_path() == (tmp_path / "elsewhere").resolve() / "prices.db"


def test_no_database_yet(tmp_path):
    with pytest.raises(NoDataError, match=r"no published database at .* run `make run`"), \
            open_published((), tmp_path):
        pass


def test_a_missing_table_is_named(data_dir):
    with pytest.raises(NoDataError, match=r"has no marts\.nowhere yet"), \
            open_published(("marts.latest_prices", "marts.nowhere"), data_dir):
        pass


def test_a_file_duckdb_refuses_says_what_it_is(tmp_path):
    (tmp_path / "prices.db").write_text("not a database")
    with pytest.raises(UnreadableDatabaseError, match="it is not a DuckDB database") as caught, \
            open_published((), tmp_path):
        pass
    assert isinstance(caught.value, OSError)


def test_the_connection_is_read_only_in_utc_and_closed_after(data_dir):
    with open_published(("marts.latest_prices",), data_dir) as con:
        assert con.execute("select current_setting('TimeZone')").fetchone()[0] == "UTC"
        with pytest.raises(duckdb.Error, match="read-only"):
            con.execute("create table t (x int)")
    with pytest.raises(duckdb.Error, match="closed"):
        con.execute("select 1")


PATH = Path("/d/prices.db")


@pytest.mark.parametrize(("message", "says"), [
    ('IO Error: Could not set lock on file "/d/prices.db": Conflicting lock is held in '
     "/usr/bin/duckdb (PID 42)", ["/usr/bin/duckdb (PID 42) has it open", "duckdb -readonly"]),
    ("IO Error: Could not set lock on file", ["another process has it open"]),
    ("IO Error: WAL file does not match", ["/d/prices.db.wal", "remove"]),
    ("IO Error: not a valid DuckDB database file!", ["not a DuckDB database"]),
    ("Something else\nsecond line", ["cannot open /d/prices.db: Something else.", "anew"]),
    ("", ["no reason given"]),
])
def test_why_it_did_not_open(message, says):
    text = cannot_open(PATH, message)
    for words in says:
        assert words in text
    assert "second line" not in text


def test_records_take_positional_and_named_parameters(con):
    sql = "select gpu_model, count(*) as n from marts.latest_prices where {} group by 1 order by 1"
    assert records(con, sql.format("vendor = ?"), ["Microsoft Azure"]) == [
        {"gpu_model": "A100-80GB", "n": 2}, {"gpu_model": "H100-80GB", "n": 1}]
    assert records(con, sql.format("vendor = $v"), {"v": "Microsoft Azure"}) \
        == records(con, sql.format("vendor = ?"), ("Microsoft Azure",))
    assert records(con, sql.format("true"), None) == records(con, sql.format("true"))


def test_no_rows_still_have_their_columns(con):
    columns, rows = columns_and_records(con, "select offer_id, vendor from marts.latest_prices "
                                             "where false")
    assert (columns, rows) == (["offer_id", "vendor"], [])
