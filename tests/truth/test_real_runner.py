"""`make truth-real`'s runner (tests/workshop/truth/real.py) and its database loader
(real_histories.py), on two tiny fake parts and a fake build: parts are found by name, a part
that raises is reported with its error while the others run, the figures are written, and the
real database is reused only while its key holds."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import duckdb
import pytest

from spiders.layout import db_path
from tests.workshop.truth import real, real_histories

PARTS = {
    "__init__.py": "",
    "real_counts.py": "def score(con):\n"
                      "    return {'rows': con.execute('select count(*) from t').fetchone()[0],"
                      " 'names': ['a', 'b']}\n",
    "real_broken.py": "def score(con):\n    raise ValueError('no such table: marts.x')\n",
    "real_helper.py": "SOMETHING = 1\n",                      # no score: not a part
    "real_unimportable.py": "import no_such_module_here\n",
    "other.py": "def score(con):\n    return {}\n",          # not real_*: not a part
}


@pytest.fixture
def fake_package(tmp_path, monkeypatch):
    package = tmp_path / "fake_real_parts"
    package.mkdir()
    for name, text in PARTS.items():
        (package / name).write_text(text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "fake_real_parts"
    for name in [m for m in sys.modules if m.startswith("fake_real_parts")]:
        del sys.modules[name]


@pytest.fixture
def tiny_db(tmp_path) -> Path:
    path = tmp_path / "prices.db"
    with duckdb.connect(str(path)) as con:
        con.execute("create table t as select * from range(3)")
    return path


def test_parts_are_the_real_modules_with_a_score(fake_package):
    assert sorted(real.find_parts(fake_package)) == ["broken", "counts", "unimportable"]


def test_a_failing_part_is_reported_and_the_others_still_run(fake_package, tiny_db):
    results = real.run_parts(tiny_db, real.find_parts(fake_package))
    assert results["counts"]["status"] == "ok"
    assert results["counts"]["figures"] == {"rows": 3, "names": ["a", "b"]}
    assert results["broken"]["status"] == "failed"
    assert results["broken"]["error"] == "ValueError: no such table: marts.x"
    assert results["unimportable"]["status"] == "failed"
    assert "no_such_module_here" in results["unimportable"]["error"]


def test_parts_read_the_database_read_only(tiny_db):
    def writes(con):
        con.execute("create table u (x int)")
    results = real.run_parts(tiny_db, {"writer": writes})
    assert results["writer"]["status"] == "failed"
    assert "read-only" in results["writer"]["error"].lower()


def test_main_writes_json_and_markdown_and_prints_the_table(fake_package, tiny_db, tmp_path,
                                                           monkeypatch, capsys):
    found = real.find_parts(fake_package)
    monkeypatch.setattr(real, "find_parts", lambda: found)
    out = tmp_path / "out"
    result = real.main(["--real", "--db", str(tiny_db), "--out-dir", str(out),
                        "--parts", "counts,broken"])
    assert set(result["parts"]) == {"counts", "broken"}
    written = json.loads((out / "real.json").read_text(encoding="utf-8"))
    assert written["parts"]["counts"]["figures"]["rows"] == 3
    table = (out / "real.md").read_text(encoding="utf-8")
    assert "| counts | rows | 3 |" in table
    assert "| broken | FAILED | ValueError: no such table: marts.x |" in table
    printed = capsys.readouterr().out
    assert "counts  rows" in printed and "FAILED" in printed


def test_an_unknown_part_is_refused(fake_package, tiny_db, tmp_path, monkeypatch):
    found = real.find_parts(fake_package)
    monkeypatch.setattr(real, "find_parts", lambda: found)
    with pytest.raises(SystemExit, match="no part nope"):
        real.main(["--db", str(tiny_db), "--out-dir", str(tmp_path), "--parts", "nope"])


@pytest.mark.parametrize(("figures", "rows"), [
    ({"a": 1, "b": {"c": 2.5}}, [("a", "1"), ("b.c", "2.5")]),
    ({"days": list(range(8))}, [("days", "[0, 1, 2, 3, 4, 5, ... (8 in all)]")]),
    ({}, []),
])
def test_figures_flatten_to_dotted_names(figures, rows):
    assert real.flatten(figures) == rows


def fake_build(calls: list):
    def build(work: Path) -> None:
        calls.append(work)
        with duckdb.connect(str(db_path(work))) as con:
            con.execute("create table t as select 1 as x")
    return build


def test_the_database_is_reused_while_record_and_code_are_unchanged(tmp_path, monkeypatch):
    calls: list = []
    work = tmp_path / "real"
    monkeypatch.setattr(real_histories, "code_version", lambda: "code-1")
    say = lambda text: None  # noqa: E731
    assert real_histories.real_database(work, build=fake_build(calls), say=say) \
        == (db_path(work), False)
    assert real_histories.real_database(work, build=fake_build(calls), say=say)[1] is True
    monkeypatch.setattr(real_histories, "code_version", lambda: "code-2")
    assert real_histories.real_database(work, build=fake_build(calls), say=say)[1] is False
    assert real_histories.real_database(work, rebuild=True, build=fake_build(calls),
                                        say=say)[1] is False
    assert len(calls) == 3


def test_without_a_code_version_it_always_builds(tmp_path, monkeypatch):
    calls: list = []
    monkeypatch.setattr(real_histories, "code_version", lambda: None)
    for _ in range(2):
        real_histories.real_database(tmp_path / "real", build=fake_build(calls),
                                     say=lambda text: None)
    assert len(calls) == 2


def test_a_directory_that_is_not_a_real_database_is_not_removed(tmp_path, monkeypatch):
    work = tmp_path / "mine"
    work.mkdir()
    (work / "notes.txt").write_text("keep me", encoding="utf-8")
    monkeypatch.setattr(real_histories, "code_version", lambda: "code-1")
    with pytest.raises(RuntimeError, match="not removing it"):
        real_histories.real_database(work, build=fake_build([]), say=lambda text: None)
    assert (work / "notes.txt").exists()


def test_the_key_names_the_manifest_hash_and_the_code_version(tmp_path):
    (tmp_path / "manifest.json").write_text("{}", encoding="utf-8")
    key = real_histories.database_key(tmp_path, code="abc")
    assert key == {"record_manifest_sha256": "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e"
                                             "8310c060f61caaff8a", "code_version": "abc"}
