"""The exit codes the README states (and `gpuprices --help`, and pipelines/cli/exit_codes.py) are
the ones the commands' unhappy paths end with (issue 30: a failed run printed a summary that
did not match it). Each documented code has commands that end with it, run here."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from pipelines.cli import exit_codes
from pipelines.cli import run_summary as summary
from pipelines.cli.group import main
from spiders.layout import REPO_ROOT

README = REPO_ROOT / "README.md"
CODES = {0: "ok", 1: "failed", 2: "usage", 3: "no data", 4: "partial", 5: "locked"}


def readme_codes() -> dict[int, str]:
    paragraph = README.read_text(encoding="utf-8").split("Exit codes (every command):", 1)[1]
    paragraph = " ".join(paragraph.split("\n\n", 1)[0].split())
    codes: dict[int, str] = {}
    for code, words in re.findall(r"`(\d)` ([a-z]+(?: data)?)", paragraph):
        codes.setdefault(int(code), words)   # check-sources' own `1` comes after the table's
    return codes


def test_the_readme_the_help_and_the_constants_name_the_same_codes():
    assert readme_codes() == CODES
    help_text = CliRunner().invoke(main, ["--help"]).output
    listed = dict(re.findall(r"^\s+(\d)\s+([a-z]+(?: data)?)", help_text, re.M))
    assert {int(k): v for k, v in listed.items()} == {**CODES, 2: "usage"}
    assert tuple(CODES) == (exit_codes.EXIT_OK, exit_codes.EXIT_RUN_FAILED, exit_codes.EXIT_USAGE,
                            exit_codes.EXIT_NO_DATA, exit_codes.EXIT_PARTIAL,
                            exit_codes.EXIT_LOCKED)


@pytest.fixture
def foreign(tmp_path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("mine\n", encoding="utf-8")
    return path


# code -> commands that end with it (the README's words for each case)
UNHAPPY = {
    1: [["report", "--out", "/proc/gpuprices-x/y.html"],       # cannot be written
        ["export", "--out", "/proc/gpuprices-nope"]],
    2: [["prices", "--card", ""],                               # an empty value
        ["simulate", "--months", "10000"],                      # out of its range
        ["prices", "--kind", "rental"],                         # an unknown value
        ["report", "--out", "{foreign}"],                       # a file gpuprices did not write
        ["export", "--out", "{foreign}/sub"],                   # a path under a file
        ["report", "--out", "/dev/full", "--force"],            # a device, even with --force
        ["signals", "--region", " "], ["alerts", "--limit", "0"], ["ui", "--port", "0"],
        ["check-sources", "--timeout", "0"], ["demo", "--months", "99"],
        ["reject", "no-such-crawl", "--reason", "a test"]],     # an unknown crawl
    3: [["prices"], ["claims"], ["export"], ["signals"], ["alerts"],   # no published database
        ["report"]],
}


@pytest.mark.parametrize(("code", "args"), [(c, a) for c, cases in UNHAPPY.items() for a in cases],
                         ids=lambda v: " ".join(v) if isinstance(v, list) else str(v))
def test_each_unhappy_path_ends_with_its_documented_code(code, args, foreign, tmp_path):
    args = [a.replace("{foreign}", str(foreign)) for a in args]
    empty = tmp_path / "empty-data"
    empty.mkdir()
    result = CliRunner(env={"GPUPRICES_DATA_DIR": str(empty)}).invoke(main, args)
    assert not result.exception or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == code, result.output
    assert foreign.read_text(encoding="utf-8") == "mine\n"


def fake_run(statuses: list[str], failed_step: str | None = None) -> SimpleNamespace:
    """A finished run as print_summary reads it: its crawls come from the database (patched
    below), its failed steps from its events."""
    events = []
    if failed_step:
        error = SimpleNamespace(cause=None, message="OSError: [Errno 28] No space left")
        events.append(SimpleNamespace(is_step_failure=True, step_key=failed_step,
                                      step_failure_data=SimpleNamespace(error=error),
                                      is_step_materialization=False))
    return SimpleNamespace(run_id="r1", success=failed_step is None, all_events=events,
                           statuses=statuses, get_asset_check_evaluations=lambda: [],
                           get_asset_materialization_events=lambda: [])


@pytest.mark.parametrize(("statuses", "failed_step", "code"), [
    (["passed", "passed"], None, 0),
    (["passed", "failed"], None, 4),                       # partial
    (["failed", "failed"], None, 1),                       # every source failed
    (["passed", "passed"], "report__price_report", 1),     # a step failed
    (["passed", "held"], None, 0),       # a source a blocking rule held back: a warning
    (["held", "failed"], None, 4),       # held is not failed: not "every source failed"
])
def test_the_run_summary_exits_as_documented(statuses, failed_step, code, monkeypatch, tmp_path):
    monkeypatch.setenv("GPUPRICES_DATA_DIR", str(tmp_path))      # nothing published here
    crawls = [(f"s{n}", status, 1, 1, 0, [] if status == "passed" else ["HTTP 503 x1"], None)
              for n, status in enumerate(statuses)]
    monkeypatch.setattr(summary, "run_rows", lambda run_id: (crawls, [], (2, 2), []))
    monkeypatch.setattr(summary.console, "width", 400)     # a long tmp path is not wrapped
    with summary.console.capture() as captured:
        assert summary.print_summary(fake_run(statuses, failed_step)) == code
    text = " ".join(captured.get().split())
    if failed_step:
        assert text.startswith(f"step {failed_step} failed: OSError: [Errno 28] No space left")
    # no prices.db here: it is named only as missing, and no line tells to query it
    assert f"nothing published yet: {tmp_path / 'prices.db'} does not exist" in text
    assert "query:" not in text and "raw archive:" not in text


def test_locked_exits_5_having_done_nothing(tmp_path):
    """Another process holds the data directory; a command that will not wait exits 5."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; "
         "from pipelines.run_lock import acquire; acquire(Path(sys.argv[1]), 'a test', 0); "
         "print('held', flush=True); time.sleep(60)", str(tmp_path)],
        cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        result = CliRunner(env={"GPUPRICES_DATA_DIR": str(tmp_path), "GPUPRICES_LOCK_WAIT": "0"}
                           ).invoke(main, ["reject", "some-crawl", "--reason", "a test"])
        assert result.exit_code == 5, result.output
        assert "Nothing was done" in " ".join(result.output.split())
        assert time.monotonic() - started < 10
        assert not (tmp_path / ".work").exists()
    finally:
        holder.kill()
        holder.wait()
