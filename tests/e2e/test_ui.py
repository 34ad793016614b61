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

from spiders.layout import REPO_ROOT

QUERY = """{ assetNodes { assetKey { path } }
  workspaceOrError { ... on Workspace { locationEntries { name } } }
  repositoriesOrError { ... on RepositoryConnection { nodes {
    jobs { name } schedules { name cronSchedule } } } } }"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def graphql(port: int) -> dict | None:
    """The UI's answer to QUERY once it lists the assets; None while it is not up yet."""
    try:
        req = urllib.request.Request(f"http://127.0.0.1:{port}/graphql",
                                     data=json.dumps({"query": QUERY}).encode(),
                                     headers={"Content-Type": "application/json"})
        data = json.load(urllib.request.urlopen(req, timeout=5))["data"]
        return data if data["assetNodes"] else None
    except (OSError, KeyError, TypeError):
        return None


def test_gpuprices_ui_shows_graph_job_and_schedule_and_stops_on_sigterm(tmp_path):
    """One UI start for everything a user sees of `make ui`, from start-up to Ctrl-C."""
    home = tmp_path / "dagster_home"       # not made yet: `gpuprices ui` makes it
    port = _free_port()
    env = {**os.environ, "DAGSTER_HOME": str(home), "GPUPRICES_DATA_DIR": str(tmp_path / "data")}
    log = tmp_path / "ui.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "pipelines.cli", "ui", "--port", str(port)],
                                cwd=REPO_ROOT, env=env, start_new_session=True,
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        # poll until it serves; stop at once if it exited (the deadline only bounds a hang)
        deadline, data = time.monotonic() + 180, None
        while time.monotonic() < deadline and data is None and proc.poll() is None:
            data = graphql(port)
            if data is None:
                time.sleep(0.5)
        assert data, f"gpuprices ui did not serve within 180 s (exit code {proc.poll()})"
        assert (home / "dagster.yaml").exists()
        assert [e["name"] for e in data["workspaceOrError"]["locationEntries"]] == ["gpuprices"]
        assets = {"/".join(a["assetKey"]["path"]) for a in data["assetNodes"]}
        assert {"raw/azure", "observations", "marts/latest_prices", "feeds/latest_prices"} <= assets
        [repo] = data["repositoriesOrError"]["nodes"]
        assert "gpuprices_job" in {j["name"] for j in repo["jobs"]}
        assert {"name": "scrape_hourly_schedule", "cronSchedule": "0 * * * *"} in repo["schedules"]

        proc.send_signal(signal.SIGTERM)           # to gpuprices only: it must pass it on
        assert proc.wait(timeout=120) == 0, log.read_text()
        printed = log.read_text()
        assert "Serving dagster-webserver" in printed, printed
        assert "Dagster UI stopped" in printed, printed
        for misleading in ("SupersessionWarning", "will not be used to configure Dagster",
                           "virtual environment does not match"):
            assert misleading not in printed, printed
        with socket.socket() as probe:             # nothing is left listening on the port
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is fine
            probe.bind(("127.0.0.1", port))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
