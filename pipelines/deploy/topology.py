"""The compose topology (docs/deploy/compose.yaml) as processes on one machine: Postgres, the
code location's gRPC server (where runs execute, DefaultRunLauncher), the daemon (schedules,
sensors, the run queue, run monitoring, run retries) and the webserver, on 127.0.0.1.

docs/deploy/dagster.yaml and workspace.yaml are used as they are (the instance file is linked
into DAGSTER_HOME, not copied): what differs from compose is only environment, as compose sets it
per service (DAGSTER_PG_*, GPUPRICES_CODE_HOST/PORT, DAGSTER_COMPUTE_LOGS_DIR).

Under the topology's directory (default .deploy/, or GPUPRICES_DEPLOY_DIR): postgres/ (the
cluster), dagster_home/ (dagster.yaml -> docs/deploy/dagster.yaml), logs/ (compute logs), run/
(each process's pid and log).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.deploy import processes
from pipelines.deploy.postgres import DATABASE, PostgresCluster, ensure_installed
from pipelines.deploy.processes import Service
from spiders.layout import REPO_ROOT

DEPLOY_DOCS = REPO_ROOT / "docs" / "deploy"
LOCATION = "gpuprices"          # pyproject.toml's [tool.dagster] code_location_name
CODE_MODULE = "pipelines.definitions"
SERVICES = ("code", "daemon", "webserver")   # started in this order, stopped together
READY_SECONDS = 180.0           # a cold code location on 2 loaded cores takes tens of seconds


def deploy_dir() -> Path:
    return Path(os.environ.get("GPUPRICES_DEPLOY_DIR") or REPO_ROOT / ".deploy").resolve()


@dataclass(frozen=True)
class Ports:
    postgres: int = 5433      # not Debian's default cluster's 5432
    code: int = 4000          # compose's code:4000
    webserver: int = 3000     # compose's 127.0.0.1:3000


@dataclass
class LocalTopology:
    """One topology: `start()` brings it up and waits until the code server and the webserver
    answer; `stop()` stops every process it started, then Postgres. `env` is added to every
    Dagster process's environment (GPUPRICES_DATA_DIR, GPUPRICES_EXECUTOR, ...)."""

    directory: Path
    ports: Ports = field(default_factory=Ports)
    env: dict[str, str] = field(default_factory=dict)
    postgres_dir: Path | None = None     # default: directory/postgres
    database: str = DATABASE
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.directory / "dagster_home"

    @property
    def run_dir(self) -> Path:
        return self.directory / "run"

    @property
    def ui_url(self) -> str:
        return f"http://127.0.0.1:{self.ports.webserver}"

    @property
    def cluster(self) -> PostgresCluster:
        return PostgresCluster.at(self.postgres_dir or self.directory / "postgres",
                                  self.ports.postgres)

    def process_env(self) -> dict[str, str]:
        """What each Dagster process gets: compose's x-dagster-env, the code location's address
        for workspace.yaml, and the caller's additions."""
        env = {**os.environ, **self.cluster.dagster_env(),
               "DAGSTER_PG_DB": self.database,
               "DAGSTER_HOME": str(self.home),
               "DAGSTER_COMPUTE_LOGS_DIR": str(self.directory / "logs"),
               "GPUPRICES_CODE_HOST": "127.0.0.1", "GPUPRICES_CODE_PORT": str(self.ports.code),
               **self.env}
        env.pop("DAGSTER_CLI_API_GRPC_HOST", None)   # the code server's own flags decide
        return env

    def services(self) -> dict[str, Service]:
        bin_dir = Path(sys.executable).parent
        workspace = str(DEPLOY_DOCS / "workspace.yaml")
        env = self.process_env()
        return {
            "code": Service("code", (str(bin_dir / "dagster"), "code-server", "start",
                                     "-h", "127.0.0.1", "-p", str(self.ports.code),
                                     "-m", CODE_MODULE, "--location-name", LOCATION),
                            env, REPO_ROOT),
            "daemon": Service("daemon", (str(bin_dir / "dagster-daemon"), "run",
                                         "-w", workspace), env, self.home),
            "webserver": Service("webserver", (str(bin_dir / "dagster-webserver"),
                                               "-h", "127.0.0.1", "-p", str(self.ports.webserver),
                                               "-w", workspace), env, self.home),
        }

    def prepare(self) -> None:
        """Postgres installed, initialized, started, its database created; DAGSTER_HOME with the
        deploy instance file; Dagster's tables created or upgraded (`dagster instance migrate`,
        once, before three processes would race to create them)."""
        bin_dir = ensure_installed()
        cluster = self.cluster
        cluster.init(bin_dir)
        cluster.start(bin_dir)
        cluster.ensure_database(bin_dir, self.database)
        self.home.mkdir(parents=True, exist_ok=True)
        (self.directory / "logs").mkdir(exist_ok=True)
        link = self.home / "dagster.yaml"
        target = DEPLOY_DOCS / "dagster.yaml"
        if not (link.is_symlink() and link.resolve() == target.resolve()):
            link.unlink(missing_ok=True)
            link.symlink_to(target)
        migrate = subprocess.run([str(Path(sys.executable).parent / "dagster"), "instance",
                                  "migrate"], cwd=self.home, env=self.process_env(),
                                 capture_output=True, text=True, timeout=300)
        if migrate.returncode != 0:
            raise RuntimeError(f"dagster instance migrate failed:\n{migrate.stderr[-3000:]}")

    def start(self) -> None:
        self.prepare()
        try:
            for name in SERVICES:
                self.start_service(name)
        except BaseException:
            self.stop()
            raise

    def start_service(self, name: str) -> None:
        """One process, waited for: the code server until it answers over gRPC, the webserver
        until /server_info answers, the daemon until its process runs."""
        self.procs[name] = processes.start(self.services()[name], self.run_dir)
        ready = {"code": self._code_server_answers, "webserver": self._webserver_answers,
                 "daemon": lambda: True}[name]
        deadline = time.monotonic() + READY_SECONDS
        while not ready():
            if self.procs[name].poll() is not None:
                raise RuntimeError(f"{name} exited with code {self.procs[name].returncode}; "
                                   f"see {processes.log_file(self.run_dir, name)}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name} not ready after {READY_SECONDS:g} s; see "
                                   f"{processes.log_file(self.run_dir, name)}")
            time.sleep(0.5)

    def stop(self, keep_postgres: bool = False) -> None:
        """Every process this topology (or an earlier `up` of the same directory) started, all
        at once (processes.stop_groups), then Postgres."""
        groups: dict[int, subprocess.Popen | None] = {}
        names: dict[int, str] = {}
        for name in SERVICES:
            proc = self.procs.pop(name, None)
            pid = proc.pid if proc is not None else processes.recorded_pid(self.run_dir, name)
            if pid is not None:
                groups[pid], names[pid] = proc, name
        killed = processes.stop_groups(groups)
        for name in SERVICES:
            processes.pid_file(self.run_dir, name).unlink(missing_ok=True)
        if not keep_postgres and self.cluster.initialized():
            from pipelines.deploy.postgres import server_bin_dir

            bin_dir = server_bin_dir()
            if bin_dir:
                self.cluster.stop(bin_dir)
        if killed:   # said last: a closed stderr must not cut the stop short
            with contextlib.suppress(OSError):
                print(f"{', '.join(names[pid] for pid in killed)}: still running "
                      f"{processes.GRACE_SECONDS:g} s after SIGTERM; killed", file=sys.stderr)

    def _code_server_answers(self) -> bool:
        from dagster._grpc.client import DagsterGrpcClient

        try:
            DagsterGrpcClient(port=self.ports.code, host="127.0.0.1").ping("ready")
        except Exception:   # any failure means "not yet"
            return False
        return True

    def _webserver_answers(self) -> bool:
        """It serves, and has loaded the code location (it answers /server_info before)."""
        query = json.dumps({"query": "{ workspaceOrError { ... on Workspace { locationEntries"
                                     " { name loadStatus } } } }"}).encode()
        request = urllib.request.Request(f"{self.ui_url}/graphql", data=query,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                entries = json.loads(response.read())["data"]["workspaceOrError"].get(
                    "locationEntries", [])
        except (OSError, ValueError, KeyError, TypeError):
            return False
        return {"name": LOCATION, "loadStatus": "LOADED"} in entries
