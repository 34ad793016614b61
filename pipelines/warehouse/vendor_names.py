"""A source key's vendor name for the models' terms macro (index_use_forbidden), without loading
the spider registry."""

from __future__ import annotations

import ast
from functools import lru_cache

from spiders.layout import REPO_ROOT


def _literal_vendor(key: str) -> str | None:
    """The `vendor` a spider named `key` states as a literal in spiders/vendors/<key>.py, read
    without importing the module (and Scrapy with it); None when no such class says it there."""
    path = REPO_ROOT / "spiders" / "vendors" / f"{key}.py"
    if not path.exists():
        return None
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef):
            values = {t.id: a.value.value for a in node.body if isinstance(a, ast.Assign)
                      and isinstance(a.value, ast.Constant) for t in a.targets
                      if isinstance(t, ast.Name)}
            if values.get("name") == key and isinstance(values.get("vendor"), str):
                return values["vendor"]
    return None


@lru_cache(maxsize=64)
def vendor_name(key: str) -> str:
    """The vendor name pipelines.backfill.vendors.vendor_of gives a source key, read from the
    literal its spider's module states, else the alias table's row: vendor_of loads the whole
    registry, every spider and its SDKs (8 s, paid by the first model of every hourly update).
    tests/sql/test_sql_models.py holds it to vendor_of for every key of spiders/terms.csv."""
    from spiders.parsing.vendor_aliases import alias_of

    literal = _literal_vendor(key)
    if literal is not None:
        return literal
    alias = alias_of(key)
    literal = _literal_vendor(alias.vendor_key) if alias else None
    if alias is None or (literal is None and not alias.vendor):
        from pipelines.backfill.vendors import vendor_of  # the registry: only for such a key

        return vendor_of(key).vendor
    return literal or alias.vendor
