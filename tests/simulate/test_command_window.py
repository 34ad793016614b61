"""`gpuprices simulate` refuses a dated effect (--drop, --fx-move) outside the history it writes,
naming the window, before it crawls or writes anything."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from pipelines.cli.simulate import simulate_command

WINDOW = "2026-06-01T00:00Z to 2026-06-04T00:00Z (3 days)"


@pytest.mark.parametrize(("flag", "spec"), [
    ("--drop", "autodl_cn:10:2026-07-15T12:00"),       # after the end
    ("--drop", "autodl_cn:10:2026-06-04T00:00"),       # at the end: no row sees it
    ("--drop", "autodl_cn:10:2026-05-31T00:00"),       # before the start: every row alike
    ("--fx-move", "USD:5:2026-06-01T00:00"),           # at the start: every row alike
])
def test_dated_effect_outside_the_window_is_a_usage_error(tmp_path, flag, spec):
    target = tmp_path / "sim.db"
    result = CliRunner().invoke(simulate_command, [
        "--db", str(target), "--start", "2026-06-01", "--days", "3", flag, spec])
    assert result.exit_code == 2, result.output
    assert f"{flag} at" in result.output and WINDOW in result.output
    assert not target.exists()


def test_window_follows_months_too(tmp_path):
    result = CliRunner().invoke(simulate_command, [
        "--db", str(tmp_path / "sim.db"), "--start", "2026-06-01", "--months", "1",
        "--drop", "autodl_cn:10:2026-07-02T00:00"])
    assert result.exit_code == 2 and "2026-06-01T00:00Z to 2026-07-01T00:00Z" in result.output
