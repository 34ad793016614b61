"""The replay server in a process of its own (spiders/replay_process.py), as `gpuprices run`
serves its crawl: the same answers as the server on a thread, from the first request on (made
before the process is up), for snapshots and for a raw archive; and it ends when stopped or when
the process that started it is gone."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from spiders.layout import REPO_ROOT, SNAPSHOT_DIR
from spiders.middlewares.raw_archive import RawArchive
from spiders.replay_process import ReplayProcess, ReplayProcessError
from spiders.replay_server import (
    CAPTURED_AT_HEADER,
    PRICE_BASIS_HEADER,
    ReplayServer,
    replay_url,
)

PAGE = "https://www.sinnet.com.cn/gpu/price.html"


def _get(base: str, live_url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(replay_url(base, live_url), timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def _answer(base: str, live_url: str) -> tuple[int, str | None, bytes]:
    status, headers, body = _get(base, live_url)
    return status, headers.get(CAPTURED_AT_HEADER), body


def test_it_answers_as_the_threaded_server_from_the_first_request():
    with ReplayProcess(snapshot_dir=SNAPSHOT_DIR) as served, ReplayServer(SNAPSHOT_DIR) as thread:
        # asked at once: the socket listens before the process has started
        first = _answer(served.url, PAGE)
        assert first[0] == 200 and "按小时".encode() in first[2]
        assert first == _answer(thread.url, PAGE)
        missing = "https://example.invalid/nothing"
        assert _answer(served.url, missing) == _answer(thread.url, missing)
        assert _answer(served.url, missing)[0] == 404


def test_it_serves_a_raw_archive(tmp_path):
    archive = RawArchive(tmp_path, "vendor", "20261130T090000")
    archive.store(url="https://api.test/0", method="GET", status=200, body=b'{"a": 1}',
                  headers={"Content-Type": "application/json",
                           PRICE_BASIS_HEADER: "published"})
    with ReplayProcess(raw_root=tmp_path) as served:
        status, headers, body = _get(served.url, "https://api.test/0")
    assert (status, body, headers[PRICE_BASIS_HEADER]) == (200, b'{"a": 1}', "published")


def test_stopped_it_refuses_and_its_process_is_gone():
    served = ReplayProcess(snapshot_dir=SNAPSHOT_DIR)
    assert _answer(served.url, PAGE)[0] == 200
    served.stop()
    assert served._process.returncode is not None
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(replay_url(served.url, PAGE), timeout=5)
    served.stop()                           # twice: nothing more to do


def test_it_ends_with_the_process_that_started_it():
    """A crawler's process killed outright (no stop(), no exit handler) leaves no server."""
    script = ("import os, signal, sys\n"
              "from spiders.layout import SNAPSHOT_DIR\n"
              "from spiders.replay_process import ReplayProcess\n"
              "served = ReplayProcess(snapshot_dir=SNAPSHOT_DIR)\n"
              "print(served._process.pid, flush=True)\n"
              "os.kill(os.getpid(), signal.SIGKILL)\n")
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=60)
    pid = int(proc.stdout.split()[0])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                if stat.read().split(")")[-1].split()[0] == "Z":   # ended, not yet reaped
                    return
        except FileNotFoundError:                                   # ended and reaped
            return
        time.sleep(0.1)
    raise AssertionError(f"replay server process {pid} still runs after its parent was killed")


def test_it_serves_snapshots_or_a_raw_archive_not_both(tmp_path):
    with pytest.raises(ValueError, match="either"):
        ReplayProcess(snapshot_dir=SNAPSHOT_DIR, raw_root=tmp_path)
    with pytest.raises(ValueError, match="either"):
        ReplayProcess()


def test_a_server_that_could_not_start_refuses_and_its_stop_says_so(tmp_path):
    """Snapshots it refuses (two entries for one request): its requests are refused at once,
    not left waiting, and stop() raises naming the process's exit."""
    source = tmp_path / "vendor"
    source.mkdir()
    entry = {"url": "https://a.test/", "file": "x.html", "content_type": "text/html"}
    (source / "manifest.json").write_text(json.dumps({
        "source": "vendor", "captured_at": "2026-01-01T00:00:00Z", "entries": [entry, entry]}))
    served = ReplayProcess(snapshot_dir=tmp_path)
    with pytest.raises((urllib.error.URLError, ConnectionError)):    # reset or refused
        urllib.request.urlopen(replay_url(served.url, "https://a.test/"), timeout=30)
    with pytest.raises(ReplayProcessError, match="exit code 1"):
        served.stop()
