"""pipelines/deploy without starting the topology: finding and installing Debian's server, the
cluster's remembered port and reachability, pid files that outlive their process, stopping a
whole process group, and the environment that adapts docs/deploy/ to one machine."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipelines.deploy import postgres, processes
from pipelines.deploy.postgres import PostgresCluster, PostgresUnavailable
from pipelines.deploy.topology import DEPLOY_DOCS, LocalTopology, Ports
from spiders.layout import REPO_ROOT


def fake_server(root: Path, version: str, tools=("initdb", "pg_ctl")) -> None:
    bin_dir = root / version / "bin"
    bin_dir.mkdir(parents=True)
    for tool in tools:
        (bin_dir / tool).touch()


@pytest.mark.parametrize("installed, expected", [
    ([], None),
    (["15"], "15"),
    (["13", "15"], "15"),                      # the newest major version
    (["9", "13"], "13"),                       # by number, not by name
    ([("16", ("initdb",)), "15"], "15"),       # a half-installed version is not picked
    (["common"], None),                        # not a version directory
])
def test_the_newest_complete_server_is_found(tmp_path, installed, expected):
    for entry in installed:
        version, tools = entry if isinstance(entry, tuple) else (entry, ("initdb", "pg_ctl"))
        if version.isdigit():
            fake_server(tmp_path, version, tools)
        else:
            (tmp_path / version).mkdir()
    found = postgres.server_bin_dir(tmp_path)
    assert (found.parent.name if found else None) == expected


def test_install_is_apt_get_update_once_then_the_package():
    update, install = postgres.install_commands(is_root=True)
    assert update[:2] == ["apt-get", "update"]
    assert install[:3] == ["apt-get", "install", "-y"] and install[-1] == "postgresql"
    assert postgres.install_commands(is_root=False) == []


def test_without_root_a_missing_server_names_the_command(monkeypatch):
    monkeypatch.setattr(postgres, "server_bin_dir", lambda root=None: None)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(PostgresUnavailable, match="sudo apt-get install postgresql"):
        postgres.ensure_installed()


def test_a_cluster_keeps_the_port_it_was_created_with(tmp_path):
    (tmp_path / "cluster.json").write_text('{"port": 6001}\n', encoding="utf-8")
    assert PostgresCluster.at(tmp_path, 7002).port == 6001
    assert PostgresCluster.at(tmp_path / "new", 7002).port == 7002


@pytest.mark.skipif(os.geteuid() != 0, reason="as root the cluster belongs to postgres")
def test_a_cluster_the_server_user_cannot_reach_is_refused_before_initdb(tmp_path):
    # pytest's temporary directories are closed to other users (0700)
    cluster = PostgresCluster(tmp_path / "closed" / "pg", 6003)
    (tmp_path / "closed").mkdir(mode=0o700)
    bin_dir = postgres.server_bin_dir() or Path("/nonexistent")
    with pytest.raises(PostgresUnavailable, match="GPUPRICES_DEPLOY_DIR"):
        cluster.init(bin_dir)
    assert not cluster.initialized()


@pytest.mark.parametrize("content, marker_ok", [
    (None, True),             # our own pid, our own command: trusted
    ("{pid} not-this-command\n", False),   # a reused pid runs something else: left alone
    ("garbage\n", False),
    ("999999999 python\n", False),         # no such process
])
def test_a_pid_file_is_trusted_only_while_its_process_runs_its_command(tmp_path, content,
                                                                       marker_ok):
    if content is None:
        processes.write_pid(tmp_path, "svc", os.getpid(), sys.executable)
    else:
        processes.pid_file(tmp_path, "svc").write_text(content.format(pid=os.getpid()))
    assert processes.recorded_pid(tmp_path, "svc") == (os.getpid() if marker_ok else None)


def test_stopping_a_group_stops_children_that_ignore_sigterm():
    # an ignored SIGTERM is inherited: the shell and both of its children ignore it
    proc = subprocess.Popen(["bash", "-c", "trap '' TERM; sleep 300 & sleep 300 & wait"],
                            process_group=0)
    try:
        deadline = time.monotonic() + 10
        while len(children := processes.children(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(children) == 2
        assert processes.stop_group(proc.pid, grace_seconds=1, proc=proc)
        assert proc.returncode == -9
        assert not processes.group_alive(proc.pid)
        assert not any(processes.alive(child) for child in children)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)


def test_groups_are_stopped_together_not_one_after_another(tmp_path):
    """The first group ends on SIGTERM only once the second has had its SIGTERM too: stopped in
    turn, it would wait out its whole grace and be killed (a stop as long as every grace)."""
    second_told = tmp_path / "second"
    # started as processes.start starts a service (default_signals): a test worker that ran
    # Dagster in-process with SIGINT ignored ignores SIGTERM, and its children inherit that (on
    # the clean-clone check both groups waited out the grace and were killed)
    waits = subprocess.Popen(["bash", "-c", f"trap 'while [ ! -e {second_told} ]; do sleep 0.1;"
                              " done; exit 0' TERM; sleep 300 & wait"], process_group=0,
                             preexec_fn=processes.default_signals)
    ends = subprocess.Popen(["bash", "-c", f"trap 'touch {second_told}; exit 0' TERM; "
                             "sleep 300 & wait"], process_group=0,
                            preexec_fn=processes.default_signals)
    try:
        for proc in (waits, ends):
            deadline = time.monotonic() + 10
            while not processes.children(proc.pid) and time.monotonic() < deadline:
                time.sleep(0.1)   # the trap is set before the child starts
        killed = processes.stop_groups({waits.pid: waits, ends.pid: ends}, grace_seconds=120)
        assert killed == []
        assert (waits.returncode, ends.returncode) == (0, 0)
        assert not processes.group_alive(waits.pid) and not processes.group_alive(ends.pid)
    finally:
        for proc in (waits, ends):
            if proc.poll() is None:
                os.killpg(proc.pid, 9)


IGNORED_SIGNALS = "grep SigIgn /proc/self/status"


@pytest.mark.parametrize("take", [False, True])
def test_up_takes_ctrl_c_and_starts_services_with_it_even_when_started_ignoring_it(tmp_path,
                                                                                  take):
    """Started with SIGINT ignored (a background job), `up` takes Ctrl-C only with
    take_interrupts (the case without it is compared with), and what it starts sees SIGINT and
    SIGTERM at their defaults either way (processes.default_signals)."""
    script = ("import signal, subprocess, sys\n"
              "from pathlib import Path\n"
              "from pipelines.deploy import __main__ as deploy, processes\n"
              f"if {take}: deploy.take_interrupts()\n"
              "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler, flush=True)\n"
              "service = processes.Service('svc', ('bash', '-c', sys.argv[1]), {}, Path.cwd())\n"
              "processes.start(service, Path(sys.argv[2])).wait()\n")
    started = subprocess.run(
        ["bash", "-c", 'trap "" INT; exec "$@"', "-", sys.executable, "-c", script,
         IGNORED_SIGNALS, str(tmp_path)], capture_output=True, text=True, timeout=60,
        cwd=REPO_ROOT, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert started.returncode == 0, started.stderr
    assert started.stdout.split() == [str(take)]
    ignored = int((tmp_path / "svc.log").read_text().split()[1], 16)
    assert not ignored & (1 << (signal.SIGINT - 1) | 1 << (signal.SIGTERM - 1))


def env_names(path: Path) -> set[str]:
    return set(re.findall(r"\{env: (\w+)\}", path.read_text(encoding="utf-8")))


def test_the_topology_sets_every_variable_the_deploy_files_read(tmp_path):
    cluster_dir = tmp_path / "pg"
    cluster_dir.mkdir()
    (cluster_dir / "password").write_text("generated\n", encoding="utf-8")
    topology = LocalTopology(tmp_path / "deploy", Ports(6004, 6005, 6006),
                             env={"GPUPRICES_DATA_DIR": str(tmp_path / "data")},
                             postgres_dir=cluster_dir)
    env = topology.process_env()
    wanted = env_names(DEPLOY_DOCS / "dagster.yaml") | env_names(DEPLOY_DOCS / "workspace.yaml")
    assert wanted <= set(env)
    assert (env["DAGSTER_PG_HOST"], env["DAGSTER_PG_PORT"], env["DAGSTER_PG_PASSWORD"]) == (
        "127.0.0.1", "6004", "generated")
    assert (env["GPUPRICES_CODE_HOST"], env["GPUPRICES_CODE_PORT"]) == ("127.0.0.1", "6005")
    assert env["DAGSTER_HOME"] == str(topology.home)
    services = topology.services()
    assert list(services) == ["code", "daemon", "webserver"]
    for service in services.values():           # loopback only, as compose publishes the UI
        if "-h" in service.command:
            assert service.command[service.command.index("-h") + 1] == "127.0.0.1"
    code = services["code"].command
    assert code[code.index("-p") + 1] == "6005"
    for name in ("daemon", "webserver"):
        command = services[name].command
        assert command[command.index("-w") + 1] == str(DEPLOY_DOCS / "workspace.yaml")
