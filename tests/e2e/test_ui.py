"""`make ui` serves the code location: `gpuprices ui` runs `dg dev` on 127.0.0.1 from DAGSTER_HOME
(through a dg workspace naming this checkout, whose pyproject names it `gpuprices`), lists the
asset graph, the job and the hourly schedule, says nothing misleading on its way up, and stops on
SIGTERM."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from spiders.layout import REPO_ROOT

pytestmark = pytest.mark.e2e

QUERY = """{ assetNodes { assetKey { path } }
  workspaceOrError { ... on Workspace { locationEntries { name } } }
  repositoriesOrError { ... on RepositoryConnection { nodes {
    jobs { name } schedules { name cronSchedule } } } } }"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_dagster_dev_shows_graph_job_and_schedule(tmp_path):
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text((REPO_ROOT / "dagster.yaml").read_text())
    port = _free_port()
    env = {**os.environ, "DAGSTER_HOME": str(home), "GPUPRICES_DATA_DIR": str(tmp_path / "data")}
    log = tmp_path / "ui.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "pipelines.cli", "ui", "--port", str(port)],
                                cwd=REPO_ROOT, env=env, start_new_session=True,
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        data = None
        while time.monotonic() < deadline:
            try:
                req = urllib.request.Request(f"http://127.0.0.1:{port}/graphql",
                                             data=json.dumps({"query": QUERY}).encode(),
                                             headers={"Content-Type": "application/json"})
                data = json.load(urllib.request.urlopen(req, timeout=5))["data"]
                if data["assetNodes"]:
                    break
            except (OSError, KeyError, TypeError):
                pass
            time.sleep(1)
        assert data, "dagster dev did not answer within 120 s"
        assert [e["name"] for e in data["workspaceOrError"]["locationEntries"]] == ["gpuprices"]
        assets = {"/".join(a["assetKey"]["path"]) for a in data["assetNodes"]}
        assert {"raw/azure", "observations", "marts/latest_prices", "feeds/latest_prices"} <= assets
        [repo] = data["repositoriesOrError"]["nodes"]
        assert "gpuprices_job" in {j["name"] for j in repo["jobs"]}
        assert {"name": "scrape_hourly_schedule", "cronSchedule": "0 * * * *"} in repo["schedules"]
        printed = log.read_text()
        for misleading in ("SupersessionWarning", "will not be used to configure Dagster",
                           "virtual environment does not match"):
            assert misleading not in printed, printed
        assert "Serving dagster-webserver" in printed, printed
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
