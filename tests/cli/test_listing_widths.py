"""Every listing command on the small published database (tests/cli/conftest.py) at 80, 120 and
200 columns and through a pipe (issue 43): no line wider than the terminal, no identifier split
across lines, every row's identifiers shown; in a pipe one tab-separated line per row; csv and
json that their parsers read, with the same rows as the tsv."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import duckdb
import pytest
from rich.cells import cell_len

from pipelines.alerts import OUTBOX_SQL
from pipelines.cli.output import console
from pipelines.warehouse.db import ensure_schema
from tests.helpers.index_history import Offer, flat, publish
from tests.helpers.observations import build, insert
from tests.helpers.published import gpuprices

# A listing command, its arguments, and the columns of its rows that are identifiers: each must
# appear whole on some line of the table (a name or code with no space in it).
LISTINGS = {
    "prices": (["prices", "--max-age", "all", "--limit", "0"], ("gpu_model", "source")),
    "signals": (["signals", "--limit", "0"], ("gpu_model",)),
    "claims": (["claims"], ("claim_id",)),
    "index": (["index", "--all"], ("index_card",)),
    "sources": (["sources"], ("source",)),
    "alerts": (["alerts"], ("rule",)),
}
WIDTHS = (80, 120, 200)

# What the table shows of a row, where it is not the identifier itself: a claim by its sentence.
SHOWN_AS = {"claim_id": "claim"}


@pytest.fixture(scope="module")
def listing_dirs(data_dir, tmp_path_factory) -> dict[str, Path]:
    """The data directory each listing reads: the shared small database; for alerts a copy of
    it with an outbox; for the index a small history of three vendors over five days."""
    alerts = tmp_path_factory.mktemp("alerts") / "data"
    shutil.copytree(data_dir, alerts)
    with duckdb.connect(str(alerts / "prices.db")) as con:
        con.execute(OUTBOX_SQL)
        con.execute("""insert into alerts.outbox (alert_key, rule, title, body, payload,
                       created_at, status, attempts, last_error) values
                       ('k1', 'drop', 'A100-80GB at 光环新网 Sinnet 12 % cheaper', 'b', '{}',
                        now(), 'failed', 3, 'json://127.0.0.1: connection refused'),
                       ('k2', 'new_low', 'New low for H100-80GB on_demand in 北京', 'b', '{}',
                        now(), 'sent', 1, null)""")
    index = tmp_path_factory.mktemp("index") / "data"
    index.mkdir()
    with duckdb.connect(str(index / "prices.db")) as con:
        ensure_schema(con)
        insert(con, [row for offer in (Offer("Alpha", "a", flat(10, 5)),
                                       Offer("Bravo", "b", flat(12, 5)),
                                       Offer("Charlie", "c", flat(11, 5)))
                     for row in offer.rows()])
        build(con, [])
        publish(con)
    return {name: alerts if name == "alerts" else index if name == "index" else data_dir
            for name in LISTINGS}


def machine_rows(data_dir, args: list[str], fmt: str) -> list[dict]:
    result = gpuprices(data_dir, *args, "--format", fmt)
    assert result.exit_code == 0, result.output
    if fmt == "json":
        return json.loads(result.stdout)
    return list(csv.DictReader(io.StringIO(result.stdout), delimiter="," if fmt == "csv"
                               else "\t", quoting=csv.QUOTE_MINIMAL if fmt == "csv"
                               else csv.QUOTE_NONE))


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", LISTINGS)
def test_the_table_fits_the_width_and_splits_no_identifier(listing_dirs, monkeypatch, name,
                                                           width):
    args, identifiers = LISTINGS[name]
    data_dir = listing_dirs[name]
    rows = machine_rows(data_dir, args, "json")
    assert rows, f"{name}: the fixture has no rows, the test would prove nothing"
    monkeypatch.setattr(console, "width", width)
    result = gpuprices(data_dir, *args, "--format", "table")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    too_wide = [line for line in lines if cell_len(line) > width]
    assert too_wide == [], f"{name} at {width}: {too_wide[:3]}"
    text = " ".join(result.stdout.split())
    for row in rows:
        for key in identifiers:
            shown = row.get(SHOWN_AS.get(key, key))
            if shown is None:
                continue
            if key in SHOWN_AS:          # a sentence: wrapped between words, every word shown
                assert " ".join(str(shown).split()) in text, (name, width, shown)
            else:                        # an identifier: whole, on one line
                assert any(str(shown) in line for line in lines), (name, width, shown)


@pytest.mark.parametrize("name", LISTINGS)
def test_a_pipe_gets_one_tab_separated_line_per_row(listing_dirs, name):
    args, _ = LISTINGS[name]
    data_dir = listing_dirs[name]
    piped = gpuprices(data_dir, *args)           # CliRunner's stdout is not a terminal
    assert piped.exit_code == 0, piped.output
    header, *lines = piped.stdout.splitlines()
    columns = header.split("\t")
    assert len(columns) > 1 and all(len(line.split("\t")) == len(columns) for line in lines)
    as_json = machine_rows(data_dir, args, "json")
    assert len(lines) == len(as_json) and columns == list(as_json[0])


@pytest.mark.parametrize("name", LISTINGS)
def test_csv_and_json_carry_the_same_rows(listing_dirs, name):
    args, identifiers = LISTINGS[name]
    data_dir = listing_dirs[name]
    as_csv = machine_rows(data_dir, args, "csv")
    as_json = machine_rows(data_dir, args, "json")
    as_tsv = machine_rows(data_dir, args, "tsv")
    assert len(as_csv) == len(as_json) == len(as_tsv) > 0
    for key in identifiers:
        assert [r[key] for r in as_csv] == [str(r[key]) for r in as_json] == \
            [r[key] for r in as_tsv]


def test_a_narrow_terminal_leaves_columns_out_and_says_which(data_dir, monkeypatch):
    monkeypatch.setattr(console, "width", 80)
    narrow = gpuprices(data_dir, "prices", "--format", "table").stdout
    note = " ".join(narrow.split()).partition("at 80 columns")[2]
    assert "USD/GPU-h" in note and "left out: --wide shows them" in note
    header = next(line for line in narrow.splitlines() if "CNY/GPU-h" in line)
    assert "USD/GPU-h" not in header
    wide = gpuprices(data_dir, "prices", "--format", "table", "--wide").stdout
    assert "USD/GPU-h" in wide and "left out" not in wide    # every column, as records here
    assert max(cell_len(line) for line in wide.splitlines()) <= 80
