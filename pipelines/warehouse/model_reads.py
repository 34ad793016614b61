"""The tables a model's SQL reads, found by sqlglot (DuckDB dialect) and cached beside the models
(`<models>/__pycache__/model_reads.json`, keyed by the digest of each file's text and the sqlglot
version): parsing fifty models and importing sqlglot cost 0.2-0.3 s in every process that builds
them, and an hourly process reads the same files as the last. A text not in the cache is parsed;
a cache that cannot be read or written is only slower. ParsedCache is that cache for any pure
function of a SQL text (the comments' too: pipelines/warehouse/comments.py)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path
from typing import Any

from spiders.file_cache import read_cache, write_cache

CACHE = Path("__pycache__") / "model_reads.json"

Reads = tuple[tuple[str, Any], ...]     # (qualified table name, line of its first mention)


@lru_cache(maxsize=256)
def parsed_sql(sql: str):
    """A model's SQL parsed by sqlglot (DuckDB dialect), once per process: the dependency graph,
    the Dagster column schemas and COMMENT ON all read the same models. Callers only read the
    tree; a ParseError is raised again for the same text."""
    import sqlglot

    return sqlglot.parse_one(sql, dialect="duckdb")


def parsed_reads(sql: str) -> Reads:
    """Every table `sql` reads outside its own CTEs, by the name SQL uses for it ("observations",
    "marts.x"), with the line it is named on; raises sqlglot's ParseError."""
    from sqlglot import exp

    tree = parsed_sql(sql)
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    reads = []
    for table in tree.find_all(exp.Table):
        if not table.db and table.name in ctes:
            continue
        if not table.name:      # a table macro's call (since_macros.sql): not a model's table
            continue
        name = f"{table.db}.{table.name}" if table.db and table.db != "main" else table.name
        reads.append((name, table.this.meta.get("line", "?")))
    return tuple(reads)


@lru_cache(maxsize=1)
def _parser_version() -> str:
    return version("sqlglot")


def _key(sql: str) -> str:
    return hashlib.sha256(f"{_parser_version()}\0{sql}".encode()).hexdigest()


class ParsedCache:
    """What `parse` (a pure function of a SQL text, returning JSON) gives for each text, cached in
    the file `path`: `get` answers from it or parses; `save` writes it back once if something was
    parsed, keeping only the texts asked for."""

    def __init__(self, path: Path, parse: Callable[[str], Any]) -> None:
        self.path = path
        self.parse = parse
        self.stored = read_cache(self.path)
        self.used: dict[str, Any] = {}
        self.parsed = False

    def get(self, sql: str) -> Any:
        key = _key(sql)
        if key not in self.stored:
            self.stored[key] = self.parse(sql)
            self.parsed = True
        self.used[key] = self.stored[key]
        return self.stored[key]

    def save(self) -> None:
        if not self.parsed and self.used.keys() == self.stored.keys():
            return
        write_cache(self.path, self.used)


class ReadsCache(ParsedCache):
    """The cached reads of the models under `root`."""

    def __init__(self, root: Path) -> None:
        super().__init__(root / CACHE, lambda sql: [list(r) for r in parsed_reads(sql)])

    def reads(self, sql: str) -> Reads:
        return tuple((name, line) for name, line in self.get(sql))
