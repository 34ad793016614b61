"""SQL that Python runs lives in `.sql` files in a `sql/` folder beside the module that runs it,
loaded by name: `sql_text(__file__, "detect_drops")` reads `sql/detect_drops.sql` next to the
calling module."""

from functools import cache
from pathlib import Path


@cache
def sql_text(module_file: str, name: str) -> str:
    """The text of `sql/<name>.sql` beside `module_file` (pass `__file__`), read once per process
    (a model build asks for its bookkeeping statements every time). A missing file raises
    FileNotFoundError naming the path."""
    path = Path(module_file).resolve().parent / "sql" / f"{name}.sql"
    if not path.is_file():
        raise FileNotFoundError(f"SQL file not found: {path}")
    return path.read_text(encoding="utf-8")


def not_held_predicate() -> str:
    """The SQL predicate over marts.latest_prices that leaves out a price held back as a possible
    outlier (the offers of sql/held_offer_ids.sql), as `gpuprices prices`, the API, the advisor
    and the SkyPilot export all apply it."""
    return f"offer_id not in (\n{sql_text(__file__, 'held_offer_ids').rstrip()}\n)"


def source_price_labels(con) -> dict[str, str]:
    """{source: price_basis_label} of every source, from intermediate.int_source_price_basis
    (sql/source_price_basis.sql): where its prices come from, in the words every page shows, as
    the API's frames and `gpuprices sources` read it; {} for a database made before sources
    recorded it (no such table)."""
    import duckdb

    try:
        return dict(con.execute(sql_text(__file__, "source_price_basis")).fetchall())
    except duckdb.CatalogException:
        return {}
