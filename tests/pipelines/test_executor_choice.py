"""GPUPRICES_EXECUTOR: in process by default; multiprocess puts every step that opens the working
DuckDB in the duckdb_writer pool, limited to one step at a time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
import yaml

from pipelines.cli.run import ensure_pool_limit
from spiders.layout import REPO_ROOT

# Each step's executor, pool and whether it asks for the `duckdb` resource, as the code location
# builds them under a given GPUPRICES_EXECUTOR (read when the definitions load: a fresh process).
STEPS = """
import json
from pipelines.definitions import defs
job = defs.resolve_job_def("gpuprices_job")
steps = {op.name: {"pool": op.pool, "duckdb": "duckdb" in op.required_resource_keys,
                   "tag": op.tags.get("gpuprices/duckdb")}
         for op in job.graph.iterate_op_defs()}
config = job.executor_def.apply_config_mapping({}).value.get("config") or {}
print(json.dumps({"executor": job.executor_def.name, "steps": steps,
                  "tag_limits": config.get("tag_concurrency_limits"),
                  "start_method": config.get("start_method")}))
"""


def job_steps(executor: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "GPUPRICES_EXECUTOR"}
    if executor:
        env["GPUPRICES_EXECUTOR"] = executor
    proc = subprocess.run([sys.executable, "-c", STEPS], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


def test_multiprocess_puts_every_duckdb_step_in_the_pool():
    job = job_steps("multiprocess")
    assert job["executor"] == "multiprocess"
    steps = job["steps"]
    opening = {name for name, step in steps.items() if step["duckdb"]}
    # the loads of every source, normalization, the checks, the models, the feeds and the rest
    assert {"load_azure", "load_autodl_cn", "observation_batch", "observations",
            "feeds__prices_db"} <= opening
    assert {name: steps[name]["pool"] for name in opening} == dict.fromkeys(opening,
                                                                            "duckdb_writer")
    # the crawls run side by side, outside the pool, and never open the database
    crawls = {name for name in steps if name.startswith("crawl_")}
    assert "crawl_azure" in crawls and not crawls & opening
    assert all(steps[name]["pool"] is None for name in crawls)
    # the same steps are tagged, and the executor keeps one of them in flight: it launches the
    # next only when the last has finished, so the pool claim never waits on Dagster's back-off
    assert {name: steps[name]["tag"] for name in opening} == dict.fromkeys(opening,
                                                                           "duckdb_writer")
    assert all(steps[name]["tag"] is None for name in crawls)
    assert job["tag_limits"] == [{"key": "gpuprices/duckdb", "value": "duckdb_writer",
                                  "limit": 1}]
    # step processes are forked from a server that imported what each of them needs
    assert job["start_method"] == {"forkserver": {"preload_modules": ["pipelines.step_preload"]}}


def test_in_process_by_default_without_pools():
    job = job_steps(None)
    assert job["executor"] == "in_process"
    assert "raw_offers" in job["steps"]
    assert all(step["pool"] is None for step in job["steps"].values())
    assert all(step["tag"] is None for step in job["steps"].values())


def test_an_unknown_executor_is_refused():
    env = {**os.environ, "GPUPRICES_EXECUTOR": "threads"}
    proc = subprocess.run([sys.executable, "-c", "import pipelines.defs.execution"],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "GPUPRICES_EXECUTOR must be one of in_process, multiprocess, not 'threads'" in \
        proc.stderr


def test_dagster_yaml_limits_the_pool_to_one_step():
    config = yaml.safe_load((REPO_ROOT / "dagster.yaml").read_text(encoding="utf-8"))
    assert config["concurrency"]["pools"]["default_limit"] == 1


@pytest.mark.parametrize("overrides, limit", [
    ({}, 1),   # a DAGSTER_HOME made before the pool: the run sets its limit
    ({"concurrency": {"pools": {"default_limit": 1}}}, None),   # dagster.yaml's default covers it
])
def test_a_run_makes_sure_the_pool_has_a_limit(tmp_path: Path, overrides, limit):
    with dg.instance_for_test(temp_dir=str(tmp_path), overrides=overrides) as instance:
        ensure_pool_limit(instance)
        limits = {p.name: p.limit for p in instance.event_log_storage.get_pool_limits()}
    assert limits.get("duckdb_writer") == limit


PRELOAD = """
import sys, threading
import pipelines.step_preload as preload
print(preload.instance_modules(sys.argv[1]))
wanted = ["pipelines.definitions", "pipelines.cli.run", "sqlalchemy", "alembic",
          *preload.instance_modules(sys.argv[1])]
print([m for m in wanted if m not in sys.modules])
print(threading.active_count())
"""


def preload(tmp_path: Path, dagster_yaml: str, script: str) -> list[str]:
    """`script` run in a fresh multiprocess-executor process whose DAGSTER_HOME holds
    `dagster_yaml` (its path is the script's argument); the lines it printed."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(dagster_yaml)
    env = {**os.environ, "DAGSTER_HOME": str(home), "GPUPRICES_EXECUTOR": "multiprocess"}
    proc = subprocess.run([sys.executable, "-c", script, str(home)], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.splitlines()


def test_the_forkserver_preload_imports_what_every_step_needs_and_starts_nothing(tmp_path):
    """What the multiprocess executor's forkserver imports once (pipelines/step_preload.py): the
    code location, the job's code pointer, and the instance's storage classes, which took each
    step process about 0.6 s to import. Its forks must inherit no thread."""
    modules, missing, threads = preload(tmp_path, (REPO_ROOT / "dagster.yaml").read_text(),
                                        PRELOAD)[-3:]
    # dagster.yaml names the event log; the run and schedule storages are Dagster's SQLite ones
    assert "pipelines.instance_event_log" in modules
    assert "dagster._core.storage.runs" in modules
    assert missing == "[]"
    assert threads == "1"


def test_an_unreadable_instance_does_not_break_the_preload(tmp_path):
    printed = preload(tmp_path, "storage: [this is not\n", "import pipelines.step_preload, sys; "
                      "print('pipelines.cli.run' in sys.modules)")
    assert printed[-1] == "True"
