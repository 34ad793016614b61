"""Replay of recorded snapshots on loopback.

`data/snapshots/<source>/manifest.json` maps each live request (method, URL, JSON body) to a
recorded file. The raw archive (`data/raw/fetches/`, see spiders/middlewares/raw_archive.py) can be
served the same way, to re-run the pipeline from raw bodies without crawling. `ReplayServer` serves those files on 127.0.0.1 at `/replay?url=<live URL>`, so a
spider keeps requesting the vendor's real URL and only the bytes come from disk. It is used by the
replay middleware (plain HTTP), by the Playwright route handler (pages and their XHR calls) and
by `gpuprices run` / the tests. Run standalone with `python -m spiders.replay [--port N]`.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

from w3lib.url import canonicalize_url

log = logging.getLogger(__name__)

REPLAY_PATH = "/replay"
CAPTURED_AT_HEADER = "X-Gpuprices-Captured-At"
ALLOW_ALL_ROBOTS = b"User-agent: *\nDisallow:\n"


def request_key(method: str, url: str, body: bytes | str | None = None) -> str:
    """Key of a request: method, canonical URL (sorted query) and, for a JSON body, its canonical form."""
    body_key = ""
    if body:
        text = body.decode("utf-8") if isinstance(body, bytes) else body
        try:
            text = json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
        except ValueError:
            pass
        body_key = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return f"{method.upper()} {canonicalize_url(url, keep_fragments=False)} {body_key}".rstrip()


def replay_url(base: str, live_url: str) -> str:
    return f"{base.rstrip('/')}{REPLAY_PATH}?url={quote(live_url, safe='')}"


@dataclass(frozen=True)
class Snapshot:
    source: str
    path: Path
    status: int
    content_type: str
    captured_at: str
    gzipped: bool = False

    def body(self) -> bytes:
        data = self.path.read_bytes()
        return gzip.decompress(data) if self.gzipped else data


def load_manifests(snapshot_dir: Path) -> dict[str, Snapshot]:
    """Index every `<source>/manifest.json` under `snapshot_dir` by request key."""
    index: dict[str, Snapshot] = {}
    for manifest_path in sorted(Path(snapshot_dir).glob("*/manifest.json")):
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        for entry in manifest["entries"]:
            body = entry.get("body")
            if body is not None and not isinstance(body, str):
                body = json.dumps(body)
            key = request_key(entry.get("method", "GET"), entry["url"], body)
            if key in index:
                raise ValueError(f"{manifest_path}: two snapshots for {key}")
            index[key] = Snapshot(
                source=manifest["source"],
                path=manifest_path.parent / entry["file"],
                status=int(entry.get("status", 200)),
                content_type=entry["content_type"],
                captured_at=entry.get("captured_at") or manifest["captured_at"],
            )
    return index


def load_raw_archive(raw_dir: Path) -> dict[str, Snapshot]:
    """Index the latest archived crawl of every source: each fetch record -> its stored body.

    The capture time is the original one (a replayed snapshot's, or the live fetch time), so a
    re-run from raw reproduces the same observations.
    """
    index: dict[str, Snapshot] = {}
    for source_dir in sorted((Path(raw_dir) / "fetches").glob("*")):
        crawls = sorted(source_dir.glob("*.jsonl"))  # crawl ids start with a UTC timestamp
        if not crawls:
            continue
        for line in crawls[-1].read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if urlsplit(record["url"]).path == "/robots.txt":
                continue
            headers = {k.lower(): v for k, v in record["headers"].items()}
            key = request_key(record["method"], record["url"], record.get("request_body"))
            index[key] = Snapshot(
                source=source_dir.name,
                path=Path(raw_dir) / "objects" / record["sha256"][:2] / f"{record['sha256']}.gz",
                status=int(record["status"]),
                content_type=headers.get("content-type", "application/octet-stream"),
                captured_at=headers.get(CAPTURED_AT_HEADER.lower(), record["fetched_at"]),
                gzipped=True,
            )
    return index


@dataclass(frozen=True)
class Fault:
    """A response to serve instead of the snapshot (fault-injection tests): status, headers, body,
    and an optional delay before answering."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    delay_seconds: float = 0.0


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt: str, *args: object) -> None:  # keep test output quiet
        log.debug("replay: " + fmt, *args)

    def _serve(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        if parts.path == "/robots.txt":
            return self._send(200, "text/plain", ALLOW_ALL_ROBOTS)
        live_url = parse_qs(parts.query).get("url", [None])[0]
        if parts.path != REPLAY_PATH or not live_url:
            return self._send(400, "text/plain", b"expected /replay?url=<live URL>\n")
        if urlsplit(live_url).path == "/robots.txt":
            return self._send(200, "text/plain", ALLOW_ALL_ROBOTS)
        fault = self.server.next_fault(live_url)
        if fault is not None:
            time.sleep(fault.delay_seconds)
            return self._send(fault.status, fault.headers.get("Content-Type", "text/plain"),
                              fault.body, fault.headers)
        snap = self.server.index.get(request_key(self.command, live_url, body))
        if snap is None:
            msg = f"no recorded snapshot for {self.command} {live_url}\n".encode()
            return self._send(404, "text/plain; charset=utf-8", msg)
        self._send(snap.status, snap.content_type, snap.body(),
                   {CAPTURED_AT_HEADER: snap.captured_at})

    def _send(self, status: int, content_type: str, payload: bytes,
              extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_POST = do_HEAD = _serve


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    index: dict[str, Snapshot]
    faults: dict[str, list[Fault]]
    lock: threading.Lock

    def next_fault(self, live_url: str) -> Fault | None:
        """The next injected fault for this URL, once each, in order; then the snapshot."""
        with self.lock:
            queue = self.faults.get(canonicalize_url(live_url))
            return queue.pop(0) if queue else None


class ReplayServer:
    """Serves recorded snapshots on 127.0.0.1 (a free port unless one is given)."""

    def __init__(self, snapshot_dir: Path | None = None, port: int = 0,
                 index: dict[str, Snapshot] | None = None,
                 faults: dict[str, list[Fault]] | None = None) -> None:
        self._httpd = _Server(("127.0.0.1", port), _Handler)
        self._httpd.index = index if index is not None else load_manifests(snapshot_dir)
        self._httpd.faults = {canonicalize_url(u): list(f) for u, f in (faults or {}).items()}
        self._httpd.lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "ReplayServer":
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> "ReplayServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    from pipelines.paths import SNAPSHOT_DIR

    parser = argparse.ArgumentParser(description="Serve recorded vendor snapshots on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--snapshots", type=Path, default=SNAPSHOT_DIR)
    args = parser.parse_args()
    server = ReplayServer(args.snapshots, args.port)
    print(server.url, flush=True)
    server._httpd.serve_forever()


if __name__ == "__main__":
    main()
