"""`python -m pipelines.deploy install|up|stop|status` (the Makefile's deploy-local targets).

up: Postgres (installed when missing), the code location's gRPC server, the daemon and the
webserver, in the foreground; prints the UI's address; Ctrl-C or SIGTERM (`stop` from another
shell) stops everything it started. Exit codes: 0 stopped on request; 1 it could not start, or a
process of the topology died (its log is named).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time

from pipelines.deploy import processes
from pipelines.deploy.postgres import ensure_installed
from pipelines.deploy.topology import SERVICES, LocalTopology, Ports, deploy_dir

LAUNCHER = "deploy"        # the pid file of `up` itself
LAUNCHER_MARKER = "pipelines.deploy"


def install(_args: argparse.Namespace) -> int:
    """Debian's PostgreSQL server when it is missing (`make test-deploy` needs no more)."""
    print(f"PostgreSQL server in {ensure_installed()}")
    return 0


def _topology(args: argparse.Namespace) -> LocalTopology:
    return LocalTopology(deploy_dir(), Ports(postgres=args.pg_port, code=args.code_port,
                                             webserver=args.ui_port))


def take_interrupts() -> None:
    """Ctrl-C raises KeyboardInterrupt here, and the services start with SIGINT at its default,
    even when `up` was started with SIGINT ignored (a background job, a CI runner): a handler
    reverts to the default across exec, an ignored SIGINT would be inherited, and Dagster's
    processes map SIGTERM to what SIGINT does (dagster._utils.interrupts), so the code server
    then ignored the stop's SIGTERM and waited out the grace to be killed."""
    signal.signal(signal.SIGINT, signal.default_int_handler)


def up(args: argparse.Namespace) -> int:
    topology = _topology(args)
    if processes.recorded_pid(topology.run_dir, LAUNCHER):
        print(f"already running from {topology.directory}; `make deploy-local-stop` stops it",
              file=sys.stderr)
        return 1
    topology.run_dir.mkdir(parents=True, exist_ok=True)
    processes.write_pid(topology.run_dir, LAUNCHER, os.getpid(), LAUNCHER_MARKER)
    stopping: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, _frame: stopping.append(signum))
    take_interrupts()
    try:
        print(f"starting Postgres and Dagster under {topology.directory} ...", flush=True)
        topology.start()
        print(f"Dagster UI on {topology.ui_url} (code location on 127.0.0.1:{args.code_port}, "
              f"Postgres on 127.0.0.1:{topology.cluster.port}; logs in {topology.run_dir}); "
              "Ctrl-C or `make deploy-local-stop` stops it", flush=True)
        while not stopping:
            dead = [name for name, proc in topology.procs.items() if proc.poll() is not None]
            if dead:
                print(f"{', '.join(dead)} exited; see {topology.run_dir}/<name>.log; stopping",
                      file=sys.stderr)
                return 1
            time.sleep(1)
        return 0
    except KeyboardInterrupt:
        return 0
    except Exception as exc:   # one paragraph instead of a traceback
        print(f"deploy-local failed: {exc}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)   # a second Ctrl-C must not cut the stop
        topology.stop()
        processes.pid_file(topology.run_dir, LAUNCHER).unlink(missing_ok=True)
        print("stopped", flush=True)


def stop(args: argparse.Namespace) -> int:
    """Ask a running `up` to stop (it stops what it started), then stop whatever is left."""
    topology = _topology(args)
    launcher = processes.recorded_pid(topology.run_dir, LAUNCHER)
    if launcher:
        os.kill(launcher, signal.SIGTERM)
        deadline = time.monotonic() + 90
        while processes.alive(launcher) and time.monotonic() < deadline:
            time.sleep(0.3)
    topology.stop()
    return 0


def status(args: argparse.Namespace) -> int:
    topology = _topology(args)
    running = {name: processes.recorded_pid(topology.run_dir, name) for name in SERVICES}
    for name, pid in running.items():
        print(f"{name}: {f'running (pid {pid})' if pid else 'stopped'}")
    return 0 if all(running.values()) else 3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipelines.deploy", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("install", "up", "stop", "status"))
    defaults = Ports()
    parser.add_argument("--ui-port", type=int, default=defaults.webserver)
    parser.add_argument("--code-port", type=int, default=defaults.code)
    parser.add_argument("--pg-port", type=int, default=defaults.postgres,
                        help="used when the cluster is created; it keeps its port afterwards")
    args = parser.parse_args(argv)
    return {"install": install, "up": up, "stop": stop, "status": status}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
