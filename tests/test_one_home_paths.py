"""One home for every path under the data directory: spiders/layout.py (issue 26).

A path under data/ is built by hand when code joins a literal part of the data directory's
layout ("raw", "crawls", "prices.db", "feeds", ...) onto a path, or any literal onto what
data_dir() / db_path() return. Anywhere outside spiders/layout.py that is a second home.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from spiders import layout

REPO = Path(__file__).resolve().parents[1]
LAYOUT = REPO / "spiders" / "layout.py"
# The names the data directory's layout gives its parts (spiders/layout.py).
DATA_PARTS = frozenset({"raw", "crawls", "items", "fetches", "objects", "prices.db", ".work",
                        "feeds", "report", "index.html", "truth", "export", "bench", "demo",
                        "simulated.db"})
# Calls that return the data directory or a file in it: any literal joined onto them is a path
# built by hand.
DATA_CALLS = frozenset({"data_dir", "db_path", "work_db_path", "configured_data_dir",
                        "default_data_dir"})


def _call_name(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


def _is_hand_built(join: ast.BinOp) -> bool:
    part = join.right
    literal = part.value if isinstance(part, ast.Constant) and isinstance(part.value, str) \
        else None
    if literal in DATA_PARTS:
        return True
    return _call_name(join.left) in DATA_CALLS and (literal is not None
                                                    or isinstance(part, ast.JoinedStr))


def hand_built_paths(source: str) -> list[str]:
    """Every outermost `/` join in `source` that builds a data path by hand, as written."""
    found, inner = [], set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and id(node) not in inner:
            chain, left = [node], node.left
            while isinstance(left, ast.BinOp) and isinstance(left.op, ast.Div):
                chain.append(left)
                left = left.left
            inner.update(id(n) for n in chain[1:])
            if any(_is_hand_built(n) for n in chain):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def _scanned() -> dict[str, list[str]]:
    return {str(path.relative_to(REPO)): hand_built_paths(path.read_text(encoding="utf-8"))
            for package in ("pipelines", "spiders")
            for path in sorted((REPO / package).rglob("*.py")) if path != LAYOUT}


@pytest.mark.parametrize(("code", "hand_built"), [
    ('data_dir() / "raw" / "crawls" / source / f"{crawl}.json"', True),
    ('Path(self.data_dir) / "raw"', True),
    ('root / ".work" / "prices.db"', True),
    ('data_dir() / f"{name}.db"', True),
    ('db_path().parent / "x"', False),           # a call's attribute is not the call
    ('data_dir() / name', False),                # a variable part: the caller's own name
    ('crawl_verdict_path(source, crawl, root)', False),
    ('Path(__file__).with_name("regions.csv")', False),
    ('tmp / "data"', False),                     # a temporary root naming its data directory
    ('total / 2', False),
])
def test_the_scan_finds_hand_built_paths(code, hand_built):
    assert bool(hand_built_paths(code)) is hand_built


def test_no_data_path_is_built_outside_layout():
    built = {path: joins for path, joins in _scanned().items() if joins}
    assert not built, ("paths under the data directory built outside spiders/layout.py (use its "
                       f"functions): {built}")


@pytest.mark.parametrize("root", [Path("rel/data"), "/abs/data"])
def test_layout_paths_under_a_given_root(root):
    base = Path(root)
    assert layout.crawl_verdict_path("aws", "c1", root) == base / "raw/crawls/aws/c1.json"
    assert layout.crawl_items_path("aws", "c1", root) == base / "raw/items/aws/c1.jsonl"
    assert layout.fetch_log_path("aws", "c1", root) == base / "raw/fetches/aws/c1.jsonl"
    assert layout.raw_object_path("abcdef", root) == base / "raw/objects/ab/abcdef.gz"
    assert layout.db_path(root) == base / "prices.db"
    assert layout.work_db_path(root) == base / ".work/prices.db"
    assert layout.report_path(root) == base / "report/index.html"


def test_layout_paths_default_to_the_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPRICES_DATA_DIR", str(tmp_path))
    assert layout.db_path() == tmp_path.resolve() / "prices.db"
    assert layout.crawl_verdicts_dir() == tmp_path.resolve() / "raw" / "crawls"
    assert layout.feeds_dir() == tmp_path.resolve() / "feeds"
