"""`gpuprices ui`: the Dagster UI (`dg dev`, Dagster's successor to `dagster dev`) on 127.0.0.1, in
a process group of its own that stops whole on Ctrl-C or SIGTERM.

It runs from DAGSTER_HOME through a one-project dg workspace (DAGSTER_HOME/dg.toml) naming this
checkout: run from the repository, Dagster warns that the dagster.yaml there "will not be used",
which is misleading (the instance reads the copy in DAGSTER_HOME); `dagster dev` itself warns
that it is superseded by `dg dev`."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import click

from pipelines.cli.dagster_home import dagster_home
from pipelines.cli.exit_codes import EXIT_OK, EXIT_RUN_FAILED
from pipelines.cli.output import console
from spiders.layout import REPO_ROOT


def _port_in_use(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def write_dg_workspace(home: Path) -> Path:
    """DAGSTER_HOME/dg.toml: a dg workspace whose one project is this checkout (its pyproject's
    [tool.dg] names the code location `gpuprices`)."""
    workspace = home / "dg.toml"
    workspace.write_text('directory_type = "workspace"\n\n[workspace]\n\n'
                         f'[[workspace.projects]]\npath = {json.dumps(str(REPO_ROOT))}\n',
                         encoding="utf-8")
    return workspace


def _reap_group(pgid: int, grace_seconds: float) -> None:
    """The code server outlives it by up to its 45 s heartbeat: give the process group
    a few seconds to finish, then kill what is left, so that nothing holds the port or the files."""
    deadline = time.monotonic() + grace_seconds
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        if time.monotonic() >= deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
            return
        time.sleep(0.2)


@click.command("ui")
@click.option("--port", type=click.IntRange(1, 65535), default=3000, show_default=True,
              help="Port on 127.0.0.1.")
def ui_command(port: int) -> None:
    """The Dagster UI: `dg dev` on http://127.0.0.1:PORT; Ctrl-C stops it.

    DAGSTER_HOME is the project-local .dagster_home (created, with dagster.yaml, when missing),
    so run history and schedules persist. Runs started from the UI replay the snapshots unless
    GPUPRICES_MODE=live is set.

    Exit codes: 0 stopped by Ctrl-C / SIGTERM; 1 dg dev failed; 2 the port is taken.
    """
    if _port_in_use(port):
        raise click.BadParameter(f"port {port} on 127.0.0.1 is in use; try --port {port + 1}",
                                 param_hint="--port")
    home = dagster_home()
    write_dg_workspace(home)
    dg = Path(sys.executable).with_name("dg")
    cmd = [str(dg) if dg.exists() else "dg", "dev", "-h", "127.0.0.1", "-p", str(port)]
    # dg compares the active virtual environment with the project's and warns when they differ
    env = {**os.environ, "VIRTUAL_ENV": str(Path(sys.prefix))}
    console.print(f"Dagster UI on [bold]http://127.0.0.1:{port}[/] (DAGSTER_HOME={home}); "
                  "Ctrl-C stops it")
    stopping: list[int] = []
    children: list[subprocess.Popen] = []

    def forward(signum, _frame) -> None:
        stopping.append(signum)
        if children:
            # a second Ctrl-C does not wait for a graceful shutdown
            with contextlib.suppress(ProcessLookupError):
                os.killpg(children[0].pid, signal.SIGKILL if len(stopping) > 1 else signum)

    # Installed before the child starts, so it begins with default handlers (a handler set here
    # reverts to the default across exec; an *ignored* SIGINT, as in a background job, would be
    # inherited and dg dev could then not be stopped).
    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        # Its own process group: a terminal's Ctrl-C reaches only us, and we pass it on once to
        # dg dev and the webserver, daemon and code server it starts, so they stop together.
        children.append(subprocess.Popen(cmd, cwd=home, env=env,
                                         process_group=0))
        if stopping:  # a signal came while it was starting
            os.killpg(children[0].pid, signal.SIGTERM)
        code = children[0].wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for child in children:
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
            _reap_group(child.pid, grace_seconds=10 if stopping else 0)
    if stopping:
        console.print("Dagster UI stopped")
        sys.exit(EXIT_OK)
    if code != 0:
        console.print(f"[red]dg dev exited with code {code}[/]")
        sys.exit(EXIT_RUN_FAILED)
