"""Terms per source (spiders/terms.csv): every registered source, and the two being added, has a
row with known verdicts; a verdict other than "not found" cites the page and the day it was read;
the live crawl is told which sources' terms forbid automated access, the index which forbid
index use."""

from __future__ import annotations

import re

import pytest

from spiders.parsing.vendor_aliases import alias_table
from spiders.registry import source_names
from spiders.terms import (
    VERDICTS,
    TermsTableError,
    index_excluded_sources,
    live_access_refusal,
    parse_terms,
    terms_of,
    terms_table,
)

COMING_SOURCES = ("idc_ustc_hf", "idc_ikkem_xm")    # spiders being added (issue 38)


def test_every_source_has_a_row_with_known_values():
    for name in (*source_names(), *COMING_SOURCES):
        terms = terms_of(name)
        assert terms is not None, f"{name}: no row in spiders/terms.csv"
        assert {terms.automated_access, terms.index_use} <= set(VERDICTS), name


def test_every_row_is_a_source_or_an_archive_vendor_key():
    keys = {a.vendor_key for a in alias_table().values()}
    for name in terms_table():
        assert name in source_names() or name in COMING_SOURCES or name in keys, name


@pytest.mark.parametrize("source, refused", [
    ("runpod", True), ("vastai", True), ("aws", False), ("lambda_cloud", False),
    ("alibaba_cn", False), ("no_such_source", False),
])
def test_live_access_refusal_names_the_terms(source, refused):
    reason = live_access_refusal(source)
    if not refused:
        assert reason is None
        return
    assert reason is not None and "\n" not in reason
    assert source in reason and terms_of(source).page in reason
    assert re.search(r"\d{4}-\d{2}-\d{2}", reason)


def test_vast_ais_terms_forbid_index_use_and_runpods_do_not_say():
    assert "vastai" in index_excluded_sources()
    assert "runpod" not in index_excluded_sources()
    assert terms_of("vastai").status == "access NO, index NO"
    assert terms_of("aws").status == "access ?, index ?"


def row(**cells) -> dict:
    return {"source": "x", "automated_access": "not found", "index_use": "not found", "page": "",
            "checked": "", "note": "n", **cells}


@pytest.mark.parametrize("rows, message", [
    ([row(automated_access="maybe")], "'maybe' is not one of"),
    ([row(index_use="")], "'' is not one of"),
    ([row(), row()], "a source named once"),
    ([row(automated_access="forbidden")], "cites the page and the day"),
    ([row(page="https://x.example/terms")], "its https address and its date"),
    ([row(page="x.example/terms", checked="2026-10-05")], "its https address and its date"),
    ([row(page="https://x.example/terms", checked="5 Oct")], "its https address and its date"),
    ([row(note="")], "a note says"),
])
def test_a_row_that_breaks_the_tables_promise_is_refused(rows, message):
    with pytest.raises(TermsTableError, match=re.escape(message)):
        parse_terms(rows)


def test_gpuprices_sources_shows_each_sources_terms(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from pipelines.cli import main
    from pipelines.cli.output import console

    monkeypatch.setattr(console, "width", 600)     # each row on one line
    result = CliRunner(env={"GPUPRICES_DATA_DIR": str(tmp_path)}).invoke(main, ["sources"])
    assert result.exit_code == 0, result.output
    lines = {line.split("\t")[0]: line for line in result.output.splitlines()}   # tsv
    assert "terms" in result.output
    for name in source_names():
        assert terms_of(name).status in lines[name], name
    assert "access NO, index NO" in lines["vastai"] and "access NO, index ?" in lines["runpod"]


def test_docs_sources_shows_every_rows_terms_and_page():
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "sources.md").read_text(encoding="utf-8")
    rows = {m[0]: m for m in re.findall(r"^\| `([\w:]+)` \| ([\w ]+) \| ([\w ]+) \| (.+) \|$",
                                        text, re.M)}
    assert set(rows) == set(terms_table())
    for name, terms in terms_table().items():
        _, access, index, page = rows[name]
        assert (access, index) == (terms.automated_access, terms.index_use), name
        assert (terms.page in page and terms.checked in page) if terms.page else \
            page == "not read", name
