"""`make truth-real`: score the project on real price histories, where no truth is known. It
builds (or reuses) a published prices.db of the default run with the public price record
(real_histories.py), runs every part found beside this file (`real_<part>.py` exposing
`score(con) -> dict`: the index against a regression reference, the history chart, like-for-like
pairs, the recency of "now", the market's own figures) on that database opened read-only, and
writes the figures to `data/truth/real.json` and `data/truth/real.md`, printing the table. A part
that raises is reported as failed with its error; the others still run. It asserts nothing.

    python -m tests.workshop.truth --real [--db PATH] [--work DIR] [--rebuild]
                                          [--parts a,b] [--out-dir DIR]
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import time
import traceback
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from tests.workshop.truth import real_histories

PART_PREFIX = "real_"
PACKAGE = "tests.workshop.truth"
RESULT_NAME = "real"
# A list is shown in the table up to this many items (the JSON keeps it whole).
SHOWN_ITEMS = 6


def find_parts(package: str = PACKAGE) -> dict[str, Callable]:
    """Every `real_<part>` module of `package` with a `score` function, by part name; a module
    that cannot be imported is a part whose score raises its import error."""
    found: dict[str, Callable] = {}
    path = importlib.import_module(package).__path__
    for info in sorted(pkgutil.iter_modules(path), key=lambda i: i.name):
        if not info.name.startswith(PART_PREFIX):
            continue
        part = info.name.removeprefix(PART_PREFIX)
        try:
            module = importlib.import_module(f"{package}.{info.name}")
        except Exception as exc:  # a broken part is reported, not fatal
            found[part] = _raiser(exc)
            continue
        if callable(getattr(module, "score", None)):
            found[part] = module.score
    return found


def _raiser(exc: Exception) -> Callable:
    def score(con):
        raise exc
    return score


def run_parts(db: Path, parts: dict[str, Callable]) -> dict[str, dict]:
    """Each part's figures on `db`, opened read-only, one connection per part (a part's temporary
    macros or a failed statement never reach the next): {"status": "ok", "figures": ...} or
    {"status": "failed", "error": ...}."""
    results: dict[str, dict] = {}
    for name, score in parts.items():
        started = time.perf_counter()
        con = duckdb.connect(str(db), read_only=True)
        try:
            figures = score(con)
            results[name] = {"status": "ok", "figures": figures}
        except Exception as exc:  # one part's failure is its own figure
            results[name] = {"status": "failed", "error": f"{type(exc).__name__}: {exc}",
                             "trace": traceback.format_exc(limit=3)}
        finally:
            con.close()
        results[name]["seconds"] = round(time.perf_counter() - started, 1)
    return results


def flatten(figures, prefix: str = "") -> list[tuple[str, str]]:
    """(dotted name, shown value) rows of nested figures; a long list shows its first items."""
    if isinstance(figures, dict):
        rows: list[tuple[str, str]] = []
        for key, value in figures.items():
            rows += flatten(value, f"{prefix}.{key}" if prefix else str(key))
        return rows
    if isinstance(figures, (list, tuple)):
        shown = ", ".join(str(v) for v in figures[:SHOWN_ITEMS])
        more = f", ... ({len(figures)} in all)" if len(figures) > SHOWN_ITEMS else ""
        return [(prefix, f"[{shown}{more}]")]
    return [(prefix, str(figures))]


def table_rows(result: dict) -> list[tuple[str, str, str]]:
    """(part, figure, value) for every figure; a failed part is one row with its error."""
    rows = []
    for part, outcome in result["parts"].items():
        if outcome["status"] != "ok":
            rows.append((part, "FAILED", outcome["error"]))
            continue
        rows += [(part, name, value) for name, value in flatten(outcome["figures"])] \
            or [(part, "(no figures)", "")]
    return rows


def markdown(result: dict) -> str:
    head = (f"# Real-history truth ({result['created_at']})\n\n"
            f"Database: `{result['database']}` ({'reused' if result['reused'] else 'built'}). "
            "Written by `make truth-real`.\n\n| part | figure | value |\n|---|---|---|\n")
    cell = lambda text: str(text).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    return head + "".join(f"| {cell(p)} | {cell(f)} | {cell(v)} |\n"
                          for p, f, v in table_rows(result))


def print_table(result: dict, say: Callable[[str], None] = print) -> None:
    rows = table_rows(result)
    width = max((len(f"{p}  {f}") for p, f, _ in rows), default=10)
    say(f"real-history truth on {result['database']}")
    for part, figure, value in rows:
        say(f"  {f'{part}  {figure}':<{width}}  {value}")


def write(result: dict, out_dir: Path) -> Path:
    """data/truth/real.json (every figure) and real.md (the table)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{RESULT_NAME}.json"
    path.write_text(json.dumps(result, indent=2, ensure_ascii=False, default=str),
                    encoding="utf-8")
    (out_dir / f"{RESULT_NAME}.md").write_text(markdown(result), encoding="utf-8")
    return path


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m tests.workshop.truth --real",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--real", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--db", type=Path, default=None,
                   help="score this published prices.db (read-only) instead of building one")
    p.add_argument("--work", type=Path, default=None,
                   help="where the real database is built [default: <data dir>/truth/real]")
    p.add_argument("--rebuild", action="store_true", help="build the database even if reusable")
    p.add_argument("--parts", default=None, help="only these parts, comma-separated")
    p.add_argument("--out-dir", type=Path, default=None, help="[default: <data dir>/truth]")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict:
    from spiders.layout import truth_dir

    args = parse_args(argv)
    if args.db is not None:
        db, reused = args.db, True
    else:
        db, reused = real_histories.real_database(args.work, rebuild=args.rebuild)
    parts = find_parts()
    if args.parts:
        wanted = {p.strip() for p in args.parts.split(",") if p.strip()}
        unknown = wanted - set(parts)
        if unknown:
            raise SystemExit(f"--parts: no part {', '.join(sorted(unknown))}; "
                             f"found: {', '.join(parts)}")
        parts = {k: v for k, v in parts.items() if k in wanted}
    result = {"created_at": datetime.now(UTC).isoformat(timespec="seconds"),
              "database": str(db), "reused": reused,
              "key": real_histories.database_key() if args.db is None else None,
              "parts": run_parts(db, parts)}
    print_table(result)
    path = write(result, args.out_dir or truth_dir())
    print(f"\nwritten: {path} (and {RESULT_NAME}.md)")
    return result
