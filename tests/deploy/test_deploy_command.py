"""`python -m pipelines.deploy up` (`make deploy-local`) as a user runs it: it brings Postgres and
the three Dagster processes up, prints the UI's address, and `stop` (`make deploy-local-stop`)
from another shell, or Ctrl-C, stops everything it started; a second `up` on a running directory
refuses, and one after a stop reuses the cluster."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import urllib.request
from pathlib import Path

import pytest

from pipelines.deploy import processes
from pipelines.deploy.postgres import PostgresCluster, server_bin_dir
from pipelines.deploy.topology import SERVICES
from spiders.layout import REPO_ROOT
from tests.helpers.receivers import free_port

UP_SECONDS = 240


@pytest.fixture
def deploy_dir():
    """GPUPRICES_DEPLOY_DIR: somewhere the `postgres` user can reach (not pytest's 0700 dirs)."""
    path = Path(tempfile.mkdtemp(prefix="gpuprices-deploy-"))
    path.chmod(0o755)
    yield path
    subprocess.run([sys.executable, "-m", "pipelines.deploy", "stop"], cwd=REPO_ROOT,
                   env={**os.environ, "GPUPRICES_DEPLOY_DIR": str(path)}, timeout=120)
    shutil.rmtree(path, ignore_errors=True)


def deploy(directory: Path, *args: str, **popen) -> subprocess.Popen:
    env = {**os.environ, "GPUPRICES_DEPLOY_DIR": str(directory),
           "GPUPRICES_DATA_DIR": str(directory / "data")}
    return subprocess.Popen([sys.executable, "-m", "pipelines.deploy", *args], cwd=REPO_ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            **popen)


def read_until(proc: subprocess.Popen, text: str, timeout: float) -> list[str]:
    """The lines `proc` prints up to one holding `text`; fails with all of them after timeout."""
    lines: list[str] = []
    found = threading.Event()

    def read() -> None:
        for line in proc.stdout:
            lines.append(line)
            if text in line:
                found.set()
                return
    threading.Thread(target=read, daemon=True).start()
    assert found.wait(timeout), "".join(lines)
    return lines


def up(directory: Path, ports: tuple[int, int, int]) -> subprocess.Popen:
    ui, code, pg = ports
    # its own process group, as a terminal's foreground job: Ctrl-C reaches `up` alone
    proc = deploy(directory, "up", "--ui-port", str(ui), "--code-port", str(code),
                  "--pg-port", str(pg), process_group=0)
    read_until(proc, f"Dagster UI on http://127.0.0.1:{ui}", UP_SECONDS)
    with urllib.request.urlopen(f"http://127.0.0.1:{ui}/server_info", timeout=10) as answer:
        assert answer.status == 200
    return proc


def assert_all_stopped(directory: Path, pids: dict[str, int]) -> None:
    assert not any(processes.alive(pid) for pid in pids.values()), pids
    assert not list((directory / "run").glob("*.pid"))
    cluster = PostgresCluster.at(directory / "postgres", 0)
    assert not cluster.running(server_bin_dir())


def test_up_prints_the_ui_and_stop_or_ctrl_c_stops_everything(deploy_dir):
    ports = (free_port(), free_port(), free_port())
    proc = up(deploy_dir, ports)
    status = deploy(deploy_dir, "status")
    assert status.wait(60) == 0, status.stdout.read()
    pids = {name: processes.recorded_pid(deploy_dir / "run", name) for name in SERVICES}
    assert all(pids.values()), pids
    password = (deploy_dir / "postgres" / "password").read_text()
    second = deploy(deploy_dir, "up", "--ui-port", str(free_port()))
    assert second.wait(60) == 1 and "already running" in second.stdout.read()
    assert proc.poll() is None                      # the first one is untouched
    assert (deploy_dir / "postgres" / "password").stat().st_mode & 0o077 == 0   # owner only
    stop = deploy(deploy_dir, "stop")
    assert stop.wait(120) == 0
    assert proc.wait(60) == 0
    assert_all_stopped(deploy_dir, pids)

    # again, on the same directory: the same cluster (port, password), stopped by Ctrl-C
    proc = up(deploy_dir, ports)
    assert (deploy_dir / "postgres" / "password").read_text() == password
    pids = {name: processes.recorded_pid(deploy_dir / "run", name) for name in SERVICES}
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(90) == 0
    assert_all_stopped(deploy_dir, pids)
