"""The replay server (spiders/replay_server.py) in a process of its own.

`gpuprices run` starts its crawl while its own process imports Dagster and the code location
(pipelines/crawl_ahead.py). A server on a thread of that process answers a request only when it
gets the interpreter lock, which the imports hold, so the crawl's requests waited on the
start-up: in alternated runs the crawl step ended 0.2-0.4 s later than with the server in a
process of its own (docs/scaling.md, "feeds1"). The crawler (pipelines/crawler.py) makes the
listening socket itself, so the URL is known at once and a request made while the server
process starts waits in the socket's backlog instead of being refused, and hands it to `python
-m spiders.replay_process --fd N`, which serves it until its standard input closes: when the
crawler stops it, or when the crawler's process is gone however it ended.

Injected faults (tests) stay with an in-process ReplayServer: they are Python objects. A
manifest's own faults are served here as there. Standalone: `python -m spiders.replay_process
[--port N] [--snapshots DIR]` prints its URL and serves until interrupted."""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
from pathlib import Path

# How long stop() waits for the server process to end before killing it.
STOP_SECONDS = 5.0


class ReplayProcessError(RuntimeError):
    pass


class ReplayProcess:
    """The snapshots of `snapshot_dir`, or the latest archived crawls of the data directory
    `raw_root`, served on 127.0.0.1 by a child process until stop()."""

    def __init__(self, snapshot_dir: Path | None = None, raw_root: Path | None = None) -> None:
        if (snapshot_dir is None) == (raw_root is None):
            raise ValueError("serve either snapshots or a raw archive")
        listening = socket.create_server(("127.0.0.1", 0))
        try:
            self.url = f"http://127.0.0.1:{listening.getsockname()[1]}"
            what = (["--snapshots", str(snapshot_dir)] if snapshot_dir is not None
                    else ["--raw", str(raw_root)])
            self._process = subprocess.Popen(
                [sys.executable, "-m", "spiders.replay_process", "--fd", str(listening.fileno()),
                 *what], stdin=subprocess.PIPE, pass_fds=(listening.fileno(),))
        finally:
            listening.close()       # the child holds its own copy

    def stop(self) -> None:
        """Close the child's standard input (it stops serving), then wait for it. Raises
        ReplayProcessError when it had ended on its own with an error (a snapshot manifest it
        refused, an archive it could not read: said on its standard error), which its requests
        met as refused connections."""
        if self._process.stdin is not None and not self._process.stdin.closed:
            self._process.stdin.close()
        try:
            self._process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        failed = self._process.returncode   # stopped: 0; killed after STOP_SECONDS: negative
        if failed > 0:
            raise ReplayProcessError(f"the replay server's process ended with exit code {failed} "
                                     "before it was stopped (its error is above): nothing was "
                                     "served from then on")

    def __enter__(self) -> ReplayProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _index(args: argparse.Namespace) -> dict:
    from spiders.layout import SNAPSHOT_DIR
    from spiders.replay_server import load_manifests, load_raw_archive

    if args.raw:
        return load_raw_archive(Path(args.raw))
    return load_manifests(Path(args.snapshots or SNAPSHOT_DIR))


def main(argv: list[str] | None = None) -> None:
    from spiders.replay_server import ReplayServer

    parser = argparse.ArgumentParser(description="Serve recorded vendor snapshots on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--snapshots", type=Path, help="a snapshot directory (default: bundled)")
    parser.add_argument("--raw", type=Path, help="a data directory: its latest archived crawls")
    parser.add_argument("--fd", type=int, help="serve this listening socket until stdin closes")
    args = parser.parse_args(argv)
    if args.fd is None:     # standalone
        server = ReplayServer(port=args.port, index=_index(args))
        print(server.url, flush=True)
        server.serve_forever()
        return
    server = ReplayServer(index=_index(args), listening=socket.socket(fileno=args.fd)).start()
    sys.stdin.buffer.read()     # returns at end of input: stopped, or the crawler's process gone
    server.stop()


if __name__ == "__main__":
    main()
