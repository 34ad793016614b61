"""The Dagster home `gpuprices run` and `ui` use: the project-local one always holds the
repository's dagster.yaml (an older copy is refreshed); a DAGSTER_HOME the user set is theirs."""

from __future__ import annotations

import pytest

from pipelines.cli import dagster_home as module


@pytest.fixture
def repo(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "dagster.yaml").write_text("run_monitoring:\n  enabled: true\n")
    monkeypatch.setattr(module, "REPO_ROOT", root)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    return root


def test_the_project_home_is_created_and_an_older_copy_refreshed(repo):
    home = module.dagster_home()
    assert home == (repo / ".dagster_home").resolve()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")   # an older release's
    module.dagster_home()
    assert (home / "dagster.yaml").read_text() == (repo / "dagster.yaml").read_text()


def test_a_home_the_user_chose_keeps_its_own_configuration(repo, tmp_path, monkeypatch):
    chosen = tmp_path / "mine"
    monkeypatch.setenv("DAGSTER_HOME", str(chosen))
    assert module.dagster_home() == chosen.resolve()
    assert (chosen / "dagster.yaml").read_text() == (repo / "dagster.yaml").read_text()  # had none
    (chosen / "dagster.yaml").write_text("# the user's own\n")
    module.dagster_home()
    assert (chosen / "dagster.yaml").read_text() == "# the user's own\n"
