"""Replay of recorded snapshots on loopback.

`data/snapshots/<source>/manifest.json` maps each live request (method, URL, JSON body) to a
recorded file. The raw archive (`data/raw/fetches/`, see spiders/middlewares/raw_archive.py) can be
served the same way, to re-run the pipeline from raw bodies without crawling. `ReplayServer`
serves those files on 127.0.0.1 at `/replay?url=<live URL>`, so a spider keeps requesting the
vendor's real URL and only the bytes come from disk. It is used by the replay middleware (plain
HTTP), by the Playwright route handler (pages and their XHR calls) and by `gpuprices run` / the
tests. Run standalone with `python -m spiders.replay_process [--port N]`, which is also how
`gpuprices run` serves it: in a process of its own (spiders/replay_process.py).

An answer carries its entry's capture time and price basis as headers, which the spider base
copies onto every offer read from it (a live answer has none: `live`); the raw archive keeps them.

Fault injection (tests, docs/robustness.md): `ReplayServer(faults={live URL: [Fault, ...]})` serves
each listed fault once, in order, then the snapshot; a manifest entry with `"status": 503` or
`"fault": {"kind": "reset"}` fails on every request (how a pipeline run gets a persistent fault).
Every fault is bounded: it ends by itself, and at the latest when the server stops.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import logging
import socket
import struct
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

from w3lib.url import canonicalize_url

from spiders.layout import fetch_logs_dir, raw_object_path
from spiders.price_basis import entry_price_basis

log = logging.getLogger(__name__)

REPLAY_PATH = "/replay"
CAPTURED_AT_HEADER = "X-Gpuprices-Captured-At"
PRICE_BASIS_HEADER = "X-Gpuprices-Price-Basis"
PRICES_AS_OF_HEADER = "X-Gpuprices-Prices-As-Of"
ALLOW_ALL_ROBOTS = b"User-agent: *\nDisallow:\n"


def request_key(method: str, url: str, body: bytes | str | None = None) -> str:
    """Key of a request: method, canonical URL (sorted query) and, for a JSON body, its canonical
    form."""
    body_key = ""
    if body:
        text = body.decode("utf-8") if isinstance(body, bytes) else body
        with contextlib.suppress(ValueError):   # not JSON: the body as sent
            text = json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
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
    fault: Fault | None = None   # served on every request of this entry (manifest "fault")
    price_basis: str | None = None   # the entry's (spiders/price_basis.py), and its date
    prices_as_of: str | None = None

    def body(self) -> bytes:
        data = self.path.read_bytes()
        return gzip.decompress(data) if self.gzipped else data

    def headers(self) -> dict[str, str]:
        said = {CAPTURED_AT_HEADER: self.captured_at, PRICE_BASIS_HEADER: self.price_basis,
                PRICES_AS_OF_HEADER: self.prices_as_of}
        return {name: value for name, value in said.items() if value}


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
            basis, as_of = entry_price_basis(entry, manifest)
            index[key] = Snapshot(
                source=manifest["source"],
                path=manifest_path.parent / entry["file"],
                status=int(entry.get("status", 200)),
                content_type=entry["content_type"],
                captured_at=entry.get("captured_at") or manifest["captured_at"],
                fault=Fault.from_dict(entry["fault"]) if entry.get("fault") else None,
                price_basis=basis, prices_as_of=as_of,
            )
    return index


def load_raw_archive(root: Path) -> dict[str, Snapshot]:
    """Index the latest archived crawl of every source under the data directory `root`: each fetch
    record -> its stored body.

    The capture time is the original one (a replayed snapshot's, or the live fetch time), so a
    re-run from raw reproduces the same observations.
    """
    index: dict[str, Snapshot] = {}
    for source_dir in sorted(fetch_logs_dir(root).glob("*")):
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
                path=raw_object_path(record["sha256"], root),
                status=int(record["status"]),
                content_type=headers.get("content-type", "application/octet-stream"),
                captured_at=headers.get(CAPTURED_AT_HEADER.lower(), record["fetched_at"]),
                gzipped=True,
                price_basis=headers.get(PRICE_BASIS_HEADER.lower()),   # none: fetched live
                prices_as_of=headers.get(PRICES_AS_OF_HEADER.lower()),
            )
    return index


FAULT_KINDS = ("status", "slow", "hang", "reset", "close", "truncate", "retype",
               "redirect_loop", "big")
# No fault outlives this: a hang or a slow answer longer than it is refused when declared.
MAX_FAULT_SECONDS = 120.0
BIG_CHUNK = 64 * 1024


@dataclass(frozen=True)
class Fault:
    """A response to serve instead of the snapshot (fault-injection tests). Declarative: `kind`
    says what goes wrong, the other fields how much.

      status         (default) answer `status` with `headers` and `body`, after `delay_seconds`
      slow           the recorded response, after `delay_seconds` (below the crawl's timeout)
      hang           read the request, answer nothing for `delay_seconds`, then close
      reset          close the connection without a response, with a TCP RST (SO_LINGER 0)
      close          close the connection without a response (a plain FIN)
      truncate       promise the whole body in Content-Length, send `size_bytes` of it (default
                     half), then close
      retype         the recorded body under another `content_type`
      redirect_loop  302 to the requested live URL itself
      big            stream `size_bytes` of filler under `content_type`, generated chunk by chunk
                     (never held in memory); Content-Length is sent unless `declare_length` is
                     False, then the end of the body is the end of the connection

    truncate and retype send `body` when given, else the snapshot's body.
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    delay_seconds: float = 0.0
    kind: str = "status"
    size_bytes: int | None = None
    content_type: str | None = None
    declare_length: bool = True

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; one of {', '.join(FAULT_KINDS)}")
        if not 0 <= self.delay_seconds <= MAX_FAULT_SECONDS:
            raise ValueError(f"delay_seconds must be within 0-{MAX_FAULT_SECONDS:g} s "
                             "(bounded faults)")
        if self.kind == "hang" and self.delay_seconds <= 0:
            raise ValueError("a hang needs delay_seconds > 0 (how long to stay silent)")
        if self.kind == "big" and not self.size_bytes:
            raise ValueError("a big fault needs size_bytes")

    @classmethod
    def from_dict(cls, data: dict) -> Fault:
        """A fault from a manifest entry's "fault" object (its body as UTF-8 text)."""
        values = dict(data)
        if isinstance(values.get("body"), str):
            values["body"] = values["body"].encode("utf-8")
        return cls(**values)


@dataclass
class ServedFault:
    """What the server did, for tests to assert on (`ReplayServer.served`); recorded when the
    fault starts, `bytes_sent` filled in when it ends."""

    url: str
    kind: str
    bytes_sent: int


class _Handler(BaseHTTPRequestHandler):
    server: _Server
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
        snap = self.server.index.get(request_key(self.command, live_url, body))
        fault = self.server.next_fault(live_url) or (snap.fault if snap else None)
        if fault is not None:
            served = ServedFault(live_url, fault.kind, 0)
            self.server.record(served)
            served.bytes_sent = self._serve_fault(fault, live_url, snap)
            return None
        if snap is None:
            msg = f"no recorded snapshot for {self.command} {live_url}\n".encode()
            return self._send(404, "text/plain; charset=utf-8", msg)
        self._send(snap.status, snap.content_type, snap.body(), snap.headers())

    def _serve_fault(self, fault: Fault, live_url: str, snap: Snapshot | None) -> int:
        """Serve one fault; returns the body bytes sent."""
        # wait() rather than sleep(): a stopping server ends every pending fault at once.
        if ((fault.kind in ("hang", "slow") or fault.delay_seconds)
                and self.server.stopping.wait(fault.delay_seconds)):
            return self._drop(rst=True)
        if fault.kind == "hang":
            return self._drop(rst=False)
        if fault.kind == "reset":
            return self._drop(rst=True)
        if fault.kind == "close":
            return self._drop(rst=False)
        if fault.kind == "big":
            return self._stream_filler(fault)
        if fault.kind == "redirect_loop":
            return self._send(302, "text/html", b"", {**fault.headers, "Location": live_url})
        captured = snap.headers() if snap else {}
        recorded = fault.body or (snap.body() if snap else b"")
        if fault.kind == "slow":
            if snap is None:
                return self._send(404, "text/plain", b"slow fault without a snapshot\n")
            return self._send(snap.status, snap.content_type, snap.body(), captured)
        if fault.kind == "retype":
            return self._send(fault.status, fault.content_type or "text/html", recorded,
                              {**captured, **fault.headers})
        if fault.kind == "truncate":
            keep = len(recorded) // 2 if fault.size_bytes is None else fault.size_bytes
            return self._send(fault.status, fault.content_type or (snap.content_type if snap else
                              "text/html"), recorded, {**captured, **fault.headers}, send_only=keep)
        content_type = fault.content_type or fault.headers.get("Content-Type", "text/plain")
        return self._send(fault.status, content_type, fault.body, fault.headers)

    def _drop(self, *, rst: bool) -> int:
        """Close the connection without a response: a FIN, or a TCP RST (SO_LINGER 0)."""
        self.close_connection = True
        if rst:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()   # before socketserver's shutdown(SHUT_WR) could send a FIN
        return 0

    def _stream_filler(self, fault: Fault) -> int:
        size = int(fault.size_bytes or 0)
        self.send_response(fault.status)
        self.send_header("Content-Type", fault.content_type or "text/html; charset=utf-8")
        if fault.declare_length:
            self.send_header("Content-Length", str(size))
        else:
            self.send_header("Connection", "close")   # the body ends when the connection does
        self.end_headers()
        self.close_connection = True
        chunk = (b"<p>" + b"x" * (BIG_CHUNK - 8) + b"</p>\n")[:BIG_CHUNK]
        sent = 0
        try:
            while sent < size and not self.server.stopping.is_set():
                piece = chunk[:size - sent]
                self.wfile.write(piece)
                sent += len(piece)
        except OSError:   # the client refused the rest (BrokenPipe / ConnectionReset): expected
            pass
        return sent

    def _send(self, status: int, content_type: str, payload: bytes,
              extra: dict[str, str] | None = None, send_only: int | None = None) -> int:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (extra or {}).items():
            if name.lower() not in ("content-type", "content-length"):
                self.send_header(name, value)
        self.end_headers()
        if self.command == "HEAD":
            return 0
        body = payload if send_only is None else payload[:send_only]
        try:
            self.wfile.write(body)
        except OSError:   # the client went away (it refused a fault): nothing to do
            self.close_connection = True
            return 0
        if send_only is not None:
            self.close_connection = True   # fewer bytes than promised, then the connection ends
        return len(body)

    do_GET = do_POST = do_HEAD = _serve


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    index: dict[str, Snapshot]
    faults: dict[str, list[Fault]]
    lock: threading.Lock
    stopping: threading.Event
    served: list[ServedFault]

    def record(self, served: ServedFault) -> None:
        with self.lock:
            self.served.append(served)

    def next_fault(self, live_url: str) -> Fault | None:
        """The next injected fault for this URL, once each, in order; then the snapshot."""
        with self.lock:
            queue = self.faults.get(canonicalize_url(live_url))
            return queue.pop(0) if queue else None


class ReplayServer:
    """Serves recorded snapshots on 127.0.0.1 (a free port unless one is given)."""

    def __init__(self, snapshot_dir: Path | None = None, port: int = 0,
                 index: dict[str, Snapshot] | None = None,
                 faults: dict[str, list[Fault]] | None = None,
                 listening: socket.socket | None = None) -> None:
        # `listening`: a socket already bound and listening, made by the process that started
        # this one (spiders/replay_process.py), served instead of a new one
        self._httpd = _Server(("127.0.0.1", port), _Handler, bind_and_activate=listening is None)
        if listening is not None:
            self._httpd.socket.close()
            self._httpd.socket, self._httpd.server_address = listening, listening.getsockname()
        self._httpd.index = index if index is not None else load_manifests(snapshot_dir)
        self._httpd.faults = {canonicalize_url(u): list(f) for u, f in (faults or {}).items()}
        self._httpd.lock = threading.Lock()
        self._httpd.stopping = threading.Event()
        self._httpd.served = []
        self._thread: threading.Thread | None = None

    @property
    def served(self) -> list[ServedFault]:
        """Every fault served so far, in order (injected ones and manifest ones)."""
        with self._httpd.lock:
            return list(self._httpd.served)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> ReplayServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def stop(self) -> None:
        self._httpd.stopping.set()   # pending hangs and streams end now
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
