"""Dagster's Postgres for the local topology: Debian's PostgreSQL server (installed with apt-get
when missing), a cluster of the project's own in a directory it chooses, listening on 127.0.0.1 only
(its Unix socket in that directory, not /var/run), with a generated password that never leaves
the directory (mode 0600) and the processes' environment.

PostgreSQL refuses to run as root: run as root, the cluster belongs to the `postgres` system user
(created by Debian's package) and every server command runs through `runuser`.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

DEBIAN_PACKAGE = "postgresql"
SERVER_ROOT = Path("/usr/lib/postgresql")   # Debian's layout: /usr/lib/postgresql/<major>/bin
SERVER_USER = "postgres"                     # the system user Debian's package creates
DATABASE = "dagster"
ROLE = "dagster"


class PostgresUnavailable(RuntimeError):
    """The server cannot be installed or started here; the message says what to do."""


def server_bin_dir(root: Path = SERVER_ROOT) -> Path | None:
    """The newest installed major version's bin directory holding initdb and pg_ctl."""
    found = [d / "bin" for d in root.glob("*") if (d / "bin" / "initdb").exists()
             and (d / "bin" / "pg_ctl").exists() and d.name.isdigit()]
    return max(found, key=lambda d: int(d.parent.name)) if found else None


def install_commands(is_root: bool) -> list[list[str]]:
    """What installs the server: apt-get update once, then the package (noninteractive). Without
    root there is nothing to run: the caller prints the sudo line instead."""
    if not is_root:
        return []
    return [["apt-get", "update", "-qq"],
            ["apt-get", "install", "-y", "-qq", "--no-install-recommends", DEBIAN_PACKAGE]]


def ensure_installed() -> Path:
    """The server's bin directory, installing Debian's package first when it is missing."""
    found = server_bin_dir()
    if found:
        return found
    commands = install_commands(os.geteuid() == 0)
    if not commands:
        raise PostgresUnavailable(f"PostgreSQL is not installed: run 'sudo apt-get install "
                                  f"{DEBIAN_PACKAGE}', then retry.")
    print(f"installing Debian's {DEBIAN_PACKAGE} (apt-get) ...", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in commands:
        subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    found = server_bin_dir()
    if not found:
        raise PostgresUnavailable(f"apt-get installed {DEBIAN_PACKAGE} but no server is under "
                                  f"{SERVER_ROOT}")
    return found


def as_server_user(command: list[str]) -> list[str]:
    """The command run as the cluster's owner: `postgres` when we are root, else ourselves."""
    return ["runuser", "-u", SERVER_USER, "--", *command] if os.geteuid() == 0 else command


@dataclass(frozen=True)
class PostgresCluster:
    """A cluster under `directory`: data/, socket/, password, postgres.log, cluster.json (port)."""

    directory: Path
    port: int

    @property
    def data(self) -> Path:
        return self.directory / "data"

    @property
    def socket_dir(self) -> Path:
        return self.directory / "socket"

    @property
    def password_file(self) -> Path:
        return self.directory / "password"

    @property
    def log(self) -> Path:
        return self.directory / "postgres.log"

    @classmethod
    def at(cls, directory: Path, port: int) -> PostgresCluster:
        """The cluster in `directory`, on the port it was created with (a directory remembers
        its port, so a restart does not move the instance), else `port`."""
        recorded = directory / "cluster.json"
        if recorded.exists():
            port = json.loads(recorded.read_text(encoding="utf-8"))["port"]
        return cls(directory.resolve(), port)

    def password(self) -> str:
        return self.password_file.read_text(encoding="utf-8").strip()

    def dagster_env(self) -> dict[str, str]:
        """What docs/deploy/dagster.yaml reads ({env: DAGSTER_PG_*}), as compose.yaml sets it."""
        return {"DAGSTER_PG_HOST": "127.0.0.1", "DAGSTER_PG_PORT": str(self.port),
                "DAGSTER_PG_DB": DATABASE, "DAGSTER_PG_USER": ROLE,
                "DAGSTER_PG_PASSWORD": self.password()}

    def initialized(self) -> bool:
        return (self.data / "PG_VERSION").exists()

    def init(self, bin_dir: Path) -> None:
        """initdb with a generated password (scram-sha-256 for every connection, over TCP or
        the socket), once; a directory that already holds a cluster is kept as it is."""
        if self.initialized():
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        self.socket_dir.mkdir(exist_ok=True)
        self.password_file.write_text(secrets.token_urlsafe(24) + "\n", encoding="utf-8")
        self.password_file.chmod(0o600)
        if os.geteuid() == 0:
            self._hand_to_server_user()
        subprocess.run(as_server_user([
            str(bin_dir / "initdb"), "-D", str(self.data), "--username", ROLE,
            "--pwfile", str(self.password_file), "--auth", "scram-sha-256",
            "--encoding", "UTF8", "--locale", "C.UTF-8"]),
            check=True, capture_output=True, text=True)
        (self.directory / "cluster.json").write_text(json.dumps({"port": self.port}) + "\n",
                                                     encoding="utf-8")

    def _hand_to_server_user(self) -> None:
        """The cluster's directory belongs to `postgres`, who must be able to reach it."""
        shutil.chown(self.directory, SERVER_USER, SERVER_USER)
        for path in (self.socket_dir, self.password_file):
            shutil.chown(path, SERVER_USER, SERVER_USER)
        self.directory.chmod(0o700)
        reach = subprocess.run(as_server_user(["test", "-w", str(self.directory)]))
        if reach.returncode != 0:
            raise PostgresUnavailable(
                f"the user {SERVER_USER} cannot reach {self.directory}: a parent directory is "
                "closed to others; set GPUPRICES_DEPLOY_DIR to a directory under one that is "
                "not (e.g. /var/tmp/gpuprices-deploy)")

    def running(self, bin_dir: Path) -> bool:
        return subprocess.run(as_server_user([str(bin_dir / "pg_ctl"), "status", "-D",
                                              str(self.data)]),
                              capture_output=True).returncode == 0

    def start(self, bin_dir: Path) -> None:
        """On 127.0.0.1:port only; waits until it accepts connections."""
        if self.running(bin_dir):
            return
        options = (f"-c listen_addresses=127.0.0.1 -p {self.port} "
                   f"-c unix_socket_directories={self.socket_dir}")
        started = subprocess.run(as_server_user([
            str(bin_dir / "pg_ctl"), "start", "-w", "-t", "60", "-D", str(self.data),
            "-l", str(self.log), "-o", options]), capture_output=True, text=True)
        if started.returncode != 0:
            tail = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise PostgresUnavailable(f"postgres did not start on 127.0.0.1:{self.port}:\n"
                                      f"{started.stdout}{started.stderr}{tail}")

    def ensure_database(self, bin_dir: Path, name: str = DATABASE) -> None:
        """The database Dagster's storage lives in (its tables: Dagster creates them at first
        start)."""
        env = {**os.environ, "PGPASSWORD": self.password()}
        connect = ["-h", "127.0.0.1", "-p", str(self.port), "-U", ROLE]
        exists = subprocess.run([str(bin_dir / "psql"), *connect, "-d", "postgres", "-tAc",
                                 f"select 1 from pg_database where datname = '{name}'"],
                                env=env, capture_output=True, text=True, check=True)
        if exists.stdout.strip() != "1":
            subprocess.run([str(bin_dir / "createdb"), *connect, name], env=env, check=True,
                           capture_output=True)

    def stop(self, bin_dir: Path) -> None:
        if self.initialized() and self.running(bin_dir):
            subprocess.run(as_server_user([str(bin_dir / "pg_ctl"), "stop", "-m", "fast", "-w",
                                           "-D", str(self.data)]), capture_output=True)
