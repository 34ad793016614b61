"""The macros the models call, stored in the database by the model runner: since_day() and
since_hour(n), index_use_forbidden(vendor_key, vendor), mission_families(), the price-age macros
and price_basis_label(basis, as_of) / is_real_price(basis). Each is filled in from its one home
(sql/*.sql, spiders/terms.csv, the card catalog); model_macro_statements() is their whole text,
which the runner hashes into its setup stamp so that it creates them again only when one of
them changed (sql_models.run_model)."""

from __future__ import annotations

from pipelines.warehouse.price_age import price_age_macros_sql
from pipelines.warehouse.sql_files import sql_text


def sql_list(values) -> str:
    """A DuckDB list literal of strings: ['vastai', 'vast.ai']."""
    return "[" + ", ".join("'" + v.replace("'", "''") + "'" for v in sorted(values)) + "]"


def terms_macro_sql() -> str:
    """index_use_forbidden(vendor_key, vendor) (sql/index_terms_macro.sql), with the vendors
    whose terms forbid index use (spiders/terms.py, one home) by key and by name."""
    from pipelines.warehouse.vendor_names import vendor_name
    from spiders.terms import index_excluded_sources

    keys = index_excluded_sources()
    return sql_text(__file__, "index_terms_macro").format(
        excluded_keys=sql_list(keys), excluded_vendors=sql_list({vendor_name(k) for k in keys}))


def mission_families_sql() -> str:
    """mission_families() (sql/mission_families_macro.sql): the card families of
    spiders/parsing/card_catalog.py MISSION_FAMILIES, their one home, for the models."""
    from spiders.parsing.card_catalog import MISSION_FAMILIES

    return sql_text(__file__, "mission_families_macro").format(
        families=sql_list(MISSION_FAMILIES))


def model_macro_statements() -> list[str]:
    """Every macro a model may call, as the statements that create them (read afresh on each
    call: a test may change the terms' list)."""
    return [sql_text(__file__, "since_macros"), terms_macro_sql(), mission_families_sql(),
            price_age_macros_sql(), sql_text(__file__, "price_basis_macros")]


def create_since_macros(con) -> None:
    """since_day() and since_hour(n), the incremental filter of every model
    (sql/since_macros.sql), stored in the connection's database: a build, a view, the published
    copy and the DuckDB shell all find them."""
    con.execute(sql_text(__file__, "since_macros"))


def create_terms_macro(con) -> None:
    """index_use_forbidden(), stored in the connection's database as since_day() is."""
    con.execute(terms_macro_sql())


def create_mission_families_macro(con) -> None:
    """mission_families(), stored in the connection's database as since_day() is."""
    con.execute(mission_families_sql())


def create_model_macros(con) -> None:
    """Every macro a model may call, stored in the connection's database."""
    for statement in model_macro_statements():
        con.execute(statement)
