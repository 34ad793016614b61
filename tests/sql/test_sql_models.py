"""dbt_like_sql/ loading: dependencies come from the SQL; bad models fail naming file and line."""

from pathlib import Path

import duckdb
import pytest

from pipelines.verdicts import NOT_ENOUGH_EVIDENCE
from pipelines.warehouse.db import ensure_schema
from pipelines.warehouse.sql_models import (
    PYTHON_TABLES,
    SqlModelError,
    create_model_macros,
    load_models,
)
from spiders.layout import SQL_DIR

EXTERNAL = PYTHON_TABLES


def _write(root: Path, rel: str, sql: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(sql)
    return path


def test_project_models_load_and_read_known_tables():
    models = {m.table: m for m in load_models(SQL_DIR, EXTERNAL)}
    assert "marts.latest_prices" in models
    assert models["marts.latest_prices"].reads == ("intermediate.int_offer_daily",
                                                   "intermediate.int_source_price_basis")
    assert models["intermediate.int_source_price_basis"].reads == ("raw.crawls",)
    assert models["staging.stg_observations"].reads == ("staging.stg_shown_observations",)
    # the crawls that can hide a row, not every crawl (intermediate.int_hiding_crawls)
    assert models["staging.stg_shown_observations"].reads == (
        "intermediate.int_hiding_crawls", "intermediate.int_source_price_basis", "observations")
    assert models["intermediate.int_hiding_crawls"].reads == ("observations", "raw.crawls")


def test_dependencies_are_inferred_and_ctes_ignored(tmp_path):
    _write(tmp_path, "staging/stg_a.sql", "/* a */ select * from observations")
    _write(tmp_path, "marts/b.sql",
           "/* b */ with recent as (select * from staging.stg_a) "
           "select * from recent join quarantine using (source)")
    ordered = load_models(tmp_path, EXTERNAL)
    assert [m.table for m in ordered] == ["staging.stg_a", "marts.b"]
    assert ordered[1].reads == ("quarantine", "staging.stg_a")


def test_syntax_error_names_file_and_line(tmp_path):
    path = _write(tmp_path, "marts/broken.sql", "/* x */\nselect *\nfrom observations\nwhere (")
    with pytest.raises(SqlModelError, match=rf"{path}:4: SQL syntax error"):
        load_models(tmp_path, EXTERNAL)


def test_unknown_table_names_file_and_line(tmp_path):
    path = _write(tmp_path, "marts/typo.sql", "/* x */\nselect *\nfrom observation")
    with pytest.raises(SqlModelError, match=rf"{path}:3: unknown table 'observation'"):
        load_models(tmp_path, EXTERNAL)


def test_cycles_are_refused(tmp_path):
    _write(tmp_path, "marts/a.sql", "/* a */ select * from marts.b")
    _write(tmp_path, "marts/b.sql", "/* b */ select * from marts.a")
    with pytest.raises(SqlModelError, match="cycle between models"):
        load_models(tmp_path, EXTERNAL)


def test_a_model_needs_a_description(tmp_path):
    _write(tmp_path, "marts/bare.sql", "select 1")
    with pytest.raises(SqlModelError, match="starts with a comment"):
        load_models(tmp_path, EXTERNAL)


def test_every_project_model_runs_in_duckdb():
    con = duckdb.connect()
    ensure_schema(con)
    create_model_macros(con)        # as run_model does: since_day(), index_use_forbidden(), ...
    for model in load_models(SQL_DIR, EXTERNAL):  # in dependency order
        con.execute(f"create schema if not exists {model.layer}")
        con.execute(model.create_statement())
        if model.table == "marts.market_claims":   # every claim is listed, with nothing to measure
            verdicts = {v for (v,) in con.execute(f"select verdict from {model.table}").fetchall()}
            assert verdicts == {NOT_ENOUGH_EVIDENCE}
        elif model.table == "marts.month_end_counts":   # one row of counts: none yet
            assert con.execute(f"select dip_groups, capacity_groups from {model.table}"
                               ).fetchall() == [(0, 0)]
        elif not model.reads:   # a constant table (int_sign_test, int_month_windows), not data
            assert con.execute(f"select count(*) from {model.table}").fetchone()[0] > 0
        else:
            assert con.execute(f"select count(*) from {model.table}").fetchone()[0] == 0


def test_alias_publishes_a_top_level_view(tmp_path):
    _write(tmp_path, "marts/m.sql",
           "/* m */\n-- alias: m_alias\nselect count(*) as n from observations")
    con = duckdb.connect()
    ensure_schema(con)
    from pipelines.warehouse.sql_models import run_model

    [model] = load_models(tmp_path, EXTERNAL)
    run_model(con, model)
    assert con.execute("select n from m_alias").fetchall() == [(0,)]


def test_an_incremental_model_whose_columns_changed_is_rebuilt_in_full(tmp_path):
    """An upgrade that adds a column to an incremental model must not insert into the old table
    (it would fail, or leave old rows without the column): the model is rebuilt in full."""
    from datetime import UTC, datetime

    from pipelines.warehouse.sql_models import run_model

    con = duckdb.connect()
    ensure_schema(con)
    con.execute("insert into raw.crawls (crawl_id, source, mode, passed, offers, normalized_at) "
                "values ('c1', 's', 'replay', true, 0, ?)", [datetime(2026, 1, 1, tzinfo=UTC)])
    old = "/* m */\n-- incremental: d\nselect date '2026-01-01' as d, 1 as a"
    _write(tmp_path, "marts/m.sql", old)
    [model] = load_models(tmp_path, EXTERNAL)
    assert run_model(con, model) == "full"
    con.execute("insert into raw.crawls (crawl_id, source, mode, passed, offers, normalized_at) "
                "values ('c2', 's', 'replay', true, 0, now())")
    _write(tmp_path, "marts/m.sql", old + ", 2 as b")
    [model] = load_models(tmp_path, EXTERNAL)
    assert run_model(con, model) == "full"
    assert con.execute("select d, a, b from marts.m").fetchall()[0][1:] == (1, 2)
    assert run_model(con, model) == "up to date"      # same columns: incremental again


def test_the_terms_macro_names_each_vendor_as_the_registry_does():
    # vendor_name reads a spider's literal vendor (no registry load); for every key of
    # spiders/terms.csv it must say what vendor_of, through the registry, says
    from pipelines.backfill.vendors import vendor_of
    from pipelines.warehouse.vendor_names import vendor_name
    from spiders.terms import terms_table

    keys = sorted(terms_table())
    assert "vastai" in keys
    assert {k: vendor_name(k) for k in keys} == {k: vendor_of(k).vendor for k in keys}
