"""`gpuprices` help and exit codes, `ui`'s help and a port in use (serving and stopping:
tests/e2e/test_ui.py), the run's progress display and what each command imports at start-up."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from pipelines.cli import main
from pipelines.cli.group import LazyCommand
from pipelines.cli.run_progress import StepProgress
from spiders.layout import REPO_ROOT
from tests.helpers.published import gpuprices

# --- help, ui -----------------------------------------------------------------------------------

def test_group_help_documents_the_exit_codes(data_dir):
    result = gpuprices(data_dir, "--help")
    assert result.exit_code == 0
    for line in ("0  ok", "1  failed: the run failed", "2  usage error", "3  no data",
                 "4  partial"):
        assert line in result.stdout
    for command in ("prices", "signals", "claims", "export", "ui", "run", "sources", "reject"):
        assert command in result.stdout


@pytest.mark.parametrize("command", sorted(main.commands))
def test_every_command_has_help(data_dir, command):
    result = gpuprices(data_dir, command, "--help")
    assert result.exit_code == 0, result.output
    assert f"Usage: main {command}" in result.stdout
    assert len(result.stdout.splitlines()) > 4


def test_ui_help_and_a_port_in_use(data_dir):
    assert "--port" in gpuprices(data_dir, "ui", "--help").stdout
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = gpuprices(data_dir, "ui", "--port", str(port))
    assert result.exit_code == 2
    assert f"port {port} on 127.0.0.1 is in use" in result.stderr


# --- run progress -------------------------------------------------------------------------------

@dg.asset
def first_step() -> int:
    return 1


@dg.asset
def second_step(first_step: int) -> int:
    return first_step + 1


def follow(tmp_path, assets: list, run_number: int, kinds: tuple[str, ...] = (),
           **execute) -> tuple[dg.ExecuteInProcessResult, StepProgress, list[str]]:
    """Run `assets` as one job in process with a StepProgress listening; also the progress
    description each time an event of `kinds` arrives (after the progress has seen it)."""
    job = dg.Definitions(assets=assets, jobs=[dg.define_asset_job("job")]).resolve_job_def("job")
    with dg.DagsterInstance.ephemeral() as instance:
        progress = StepProgress(instance, f"3c1b9f0e-0000-4000-8000-{run_number:012d}", 1,
                                tmp_path)
        instance.add_event_listener(progress.run_id, progress)
        seen: list[str] = []
        instance.add_event_listener(
            progress.run_id,
            lambda e: e.dagster_event and e.dagster_event.event_type_value in kinds
            and seen.append(progress.progress.tasks[0].description))
        result = job.execute_in_process(instance=instance, run_id=progress.run_id, **execute)
    return result, progress, seen


def test_step_progress_follows_a_runs_events(tmp_path):
    result, progress, seen = follow(tmp_path, [first_step, second_step], 0, ("STEP_START",))
    assert result.success
    task = progress.progress.tasks[0]
    assert (task.total, task.completed, progress.finished) == (2, 2, 2)
    assert seen == ["first_step", "second_step"]     # the spinner named each running step
    assert progress.running == {}


@dg.multi_asset(specs=[dg.AssetSpec("one"), dg.AssetSpec("two"), dg.AssetSpec("three")])
def three_tables():
    for key in ("one", "two", "three"):
        yield dg.MaterializeResult(asset_key=key)


def test_step_progress_counts_the_assets_of_a_step_that_builds_several(tmp_path):
    """The SQL models are one step: the spinner says how many of its assets are done."""
    result, _, seen = follow(tmp_path, [three_tables], 1,
                             ("STEP_START", "ASSET_MATERIALIZATION"))
    assert result.success
    assert seen == ["three_tables 0/3", "three_tables 1/3", "three_tables 2/3", "three_tables 3/3"]


def test_step_progress_counts_only_the_selected_assets_of_a_step(tmp_path):
    @dg.multi_asset(specs=[dg.AssetSpec("one"), dg.AssetSpec("two"), dg.AssetSpec("three")],
                    can_subset=True)
    def some_tables(context):   # unannotated: this module's string annotations fail Dagster's check
        for key in sorted(context.selected_asset_keys):
            yield dg.MaterializeResult(asset_key=key)

    result, progress, _ = follow(tmp_path, [some_tables], 2,
                                 asset_selection=[dg.AssetKey("one"), dg.AssetKey("two")])
    assert result.success
    assert progress.assets_of_step == {"some_tables": 2}
    assert progress.assets_done == {"some_tables": 2}


# --- start-up -----------------------------------------------------------------------------------

# Dagster, Scrapy and Playwright load only in the commands that need them (run, ui, reject,
# check-sources, simulate; `sources` lists Scrapy spiders, so Scrapy only).
HEAVY = ("dagster", "scrapy", "playwright")
IMPORTS_AFTER = """
import json, sys
from click.testing import CliRunner
from pipelines.cli import main
codes = [CliRunner().invoke(main, args).exit_code for args in json.loads(sys.argv[1])]
loaded = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(sys.argv[2])))
print(json.dumps({"codes": codes, "loaded": loaded}))
"""


def heavy_imports_after(data_dir: Path, invocations: list[list[str]],
                        heavy=HEAVY) -> tuple[list[int], list[str]]:
    """Run `gpuprices` with each argument list in one fresh interpreter: their exit codes, and
    which of the `heavy` top-level modules that interpreter imported."""
    proc = subprocess.run([sys.executable, "-c", IMPORTS_AFTER, json.dumps(invocations),
                           json.dumps(heavy)], cwd=REPO_ROOT, capture_output=True, text=True,
                          env={**os.environ, "GPUPRICES_DATA_DIR": str(data_dir)}, check=True)
    result = json.loads(proc.stdout.splitlines()[-1])
    return result["codes"], result["loaded"]


def test_help_and_the_reading_commands_import_neither_dagster_nor_scrapy(data_dir, tmp_path):
    helps = [["--help"]] + [[command, "--help"] for command in sorted(main.commands)
                            if command != "simulate"]   # pipelines/simulate/ decides its own
    reading = [["prices", "--card", "a100", "--region", "北京", "--vendor", "sinnet"],
               ["prices", "--format", "json"], ["signals", "--card", "a100", "--region", "US"],
               ["claims"], ["alerts"], ["export", "--out", str(tmp_path / "export")],
               ["advise", "--params", "7B", "--task", "inference", "--hours-per-day", "8",
                "--days", "5", "--region", "北京"]]
    codes, loaded = heavy_imports_after(data_dir, helps + reading)
    assert codes == [0] * len(helps + reading[:4]) + [3, 0, 0]    # alerts: no outbox here
    assert loaded == []
    codes, loaded = heavy_imports_after(data_dir, [["sources"]])
    assert codes == [0] and loaded == ["scrapy"]


def test_the_runs_preflight_imports_no_pandas(data_dir):
    """gpuprices run starts its crawl right after its preflight check (which opens the working
    database): a preflight that imports pandas (about a second here) delays every crawl."""
    check = ("import sys\nfrom pipelines.preflight import check_ready_to_write\n"
             "check_ready_to_write()\nprint('pandas' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", check], cwd=REPO_ROOT, capture_output=True,
                          text=True, check=True,
                          env={**os.environ, "GPUPRICES_DATA_DIR": str(data_dir)})
    assert proc.stdout.split() == ["False"]


def test_commands_imported_when_used_are_listed_by_their_own_summary():
    lazy = {name: command for name, command in main.commands.items()
            if isinstance(command, LazyCommand)}
    assert set(lazy) == {"advise", "backfill", "demo", "simulate"}
    for command in lazy.values():
        for limit in (45, 70, 200):
            assert command.get_short_help_str(limit) == command.command.get_short_help_str(limit)
