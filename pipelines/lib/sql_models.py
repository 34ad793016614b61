"""dbt_like_sql/: every `<layer>/<model>.sql` file is a table `<layer>.<model>` and an asset.

Dependencies come from the SQL itself (parsed with sqlglot, DuckDB dialect): a model reads
`observations` or another model by its qualified name, and no list is kept by hand. A file that
does not parse, or reads a table nobody builds, fails at load time naming the file and the line.
The first comment of a file is its description; a line `-- materialized: view` makes it a view.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import sqlglot
from sqlglot import exp

LAYERS = ("staging", "intermediate", "marts")


class SqlModelError(ValueError):
    pass


@dataclass(frozen=True)
class SqlModel:
    layer: str
    name: str
    path: Path
    sql: str
    description: str
    materialized: str           # "table" | "view"
    reads: tuple[str, ...]      # qualified names of the tables it reads: "observations", "marts.x"

    @property
    def table(self) -> str:
        return f"{self.layer}.{self.name}"

    def create_statement(self) -> str:
        kind = "view" if self.materialized == "view" else "table"
        return f"create or replace {kind} {self.table} as\n{self.sql.rstrip().rstrip(';')}"


def _description(sql: str, path: Path) -> str:
    match = re.match(r"\s*/\*(.*?)\*/", sql, re.S) or re.match(r"\s*--(.*)", sql)
    if not match:
        raise SqlModelError(f"{path}:1: a model starts with a comment saying what the table is")
    return " ".join(match.group(1).split())


def parse_model(path: Path, root: Path) -> SqlModel:
    layer = path.parent.name
    if layer not in LAYERS or path.parent.parent != root:
        raise SqlModelError(f"{path}: models live in {root}/<{'|'.join(LAYERS)}>/<model>.sql")
    sql = path.read_text(encoding="utf-8")
    try:
        tree = sqlglot.parse_one(sql, dialect="duckdb")
    except sqlglot.errors.ParseError as exc:
        first = exc.errors[0] if exc.errors else {}
        raise SqlModelError(f"{path}:{first.get('line', '?')}: SQL syntax error: "
                            f"{first.get('description', exc)}") from exc
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    reads = []
    for table in tree.find_all(exp.Table):
        if not table.db and table.name in ctes:
            continue
        name = f"{table.db}.{table.name}" if table.db and table.db != "main" else table.name
        reads.append((name, table.this.meta.get("line", "?")))
    mat = re.search(r"^--\s*materialized:\s*(\w+)", sql, re.M)
    model = SqlModel(layer, path.stem, path, sql, _description(sql, path),
                     mat.group(1) if mat else "table", tuple(sorted({n for n, _ in reads})))
    object.__setattr__(model, "_lines", dict(reads))
    return model


def load_models(root: Path, external_tables: set[str]) -> list[SqlModel]:
    """Every model under `root` in dependency order, checked: known tables only, no cycles."""
    models = [parse_model(p, root) for p in sorted(root.glob("*/*.sql"))]
    known = {m.table for m in models} | external_tables
    for model in models:
        for name in model.reads:
            if name not in known:
                line = model._lines.get(name, "?")  # type: ignore[attr-defined]
                raise SqlModelError(f"{model.path}:{line}: unknown table {name!r} (known: "
                                    f"{', '.join(sorted(known))})")
    return topological_order(models)


def topological_order(models: list[SqlModel]) -> list[SqlModel]:
    """Models ordered so that each comes after the models it reads; refuses cycles."""
    by_table = {m.table: m for m in models}
    state: dict[str, str] = {}
    ordered: list[SqlModel] = []

    def visit(table: str, trail: list[str]) -> None:
        if state.get(table) == "done":
            return
        if state.get(table) == "visiting":
            raise SqlModelError(f"cycle between models: {' -> '.join([*trail, table])}")
        state[table] = "visiting"
        for dep in by_table[table].reads:
            if dep in by_table:
                visit(dep, [*trail, table])
        state[table] = "done"
        ordered.append(by_table[table])

    for table in sorted(by_table):
        visit(table, [])
    return ordered
