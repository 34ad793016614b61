"""`gpuprices backfill`'s unhappy paths, before anything is loaded: an unknown archive, a path
that is no clone, dates that are not dates or out of order, an unknown --every."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from pipelines.cli.group import main


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPRICES_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("GPUPRICES_LOCK_WAIT", "0")

    def invoke(*args: str):
        return CliRunner().invoke(main, ["backfill", *args])
    return invoke


@pytest.mark.parametrize(("args", "code", "says"), [
    (["nonsense", "."], 2, "'nonsense' is not one of 'skypilot-catalog'"),
    (["cloud-gpus", "/no/such/dir"], 2, "does not exist"),
    (["cloud-gpus", ".", "--since", "2025-13-01"], 2, "is not a date"),
    (["cloud-gpus", ".", "--since", "2025-02-01", "--until", "2025-01-01"], 2,
     "--since must be before --until"),
    (["cloud-gpus", ".", "--every", "week"], 2, "Invalid value for '--every'"),
])
def test_usage_errors(run, args, code, says):
    result = run(*args)
    assert result.exit_code == code, result.output
    assert says in result.output


def test_a_directory_that_is_no_clone_fails_saying_so(run, tmp_path):
    (tmp_path / "plain").mkdir()
    result = run("full-stack", str(tmp_path / "plain"))
    assert result.exit_code == 1
    assert "not a git repository" in result.output


def test_the_summary_is_the_docstrings_first_paragraph(run):
    result = run("--help")
    assert result.exit_code == 0
    assert "Load real price history from a local clone of a public price archive." in result.output


def test_the_summary_names_the_database_it_published_and_a_second_run_adds_nothing(
        run, tmp_path, archives):
    db = tmp_path / "data" / "prices.db"
    first = run("full-stack", str(archives["full-stack"]), "--every", "day")
    assert first.exit_code == 0, first.output
    assert f"models, feeds, report and {db} brought up to date" in first.output
    assert db.is_file()
    second = run("full-stack", str(archives["full-stack"]), "--every", "day")
    assert second.exit_code == 0, second.output
    assert "0 new observations" in second.output and "brought up to date" not in second.output
