"""Where alerts go: the Apprise channels configured in the environment, and one send.

Notification URLs carry tokens and passwords, so they come from the environment only
(GPUPRICES_NOTIFY_URLS, GPUPRICES_NOTIFY_CONFIG), are never written to the database and never
logged: a channel is shown as its scheme (and host, for schemes whose host is a real host name),
stored as a hash, and every part of its URL is masked in Apprise's messages.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from ipaddress import ip_address
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

NOTIFY_URLS_ENV = "GPUPRICES_NOTIFY_URLS"
NOTIFY_CONFIG_ENV = "GPUPRICES_NOTIFY_CONFIG"


# Apprise's own tag keywords: a route of "all" reaches every channel; a URL tagged "always"
# receives every alert.
ALL_TAG, ALWAYS_TAG = "all", "always"
TAG_PATTERN = r"[A-Za-z0-9_-]+"
# One item of GPUPRICES_NOTIFY_URLS: an optional "tag=" or "tag1,tag2=" (Apprise's config-file
# syntax), then a URL; an item starts at the beginning of a word or after a comma.
_ITEM_START = re.compile(rf"(?:^|,)((?:{TAG_PATTERN}(?:,{TAG_PATTERN})*=)?[A-Za-z][\w+.-]*://)")
_TAGGED = re.compile(rf"^({TAG_PATTERN}(?:,{TAG_PATTERN})*)=(.+)$", re.S)


class NotifyConfigError(ValueError):
    """A notification URL or Apprise config file is unusable; the message holds no secrets."""


# Schemes whose host part is a real server name (safe to show); elsewhere (dingtalk://TOKEN,
# slack://TOKEN/..., lark://TOKEN) the "host" is a secret and only the scheme is shown.
HOST_SCHEMES = {"json", "jsons", "xml", "xmls", "form", "forms", "mailto", "mailtos",
                "ntfy", "ntfys", "gotify", "gotifys", "apprise", "apprises", "mmost", "mmosts",
                "rocket", "rockets", "matrix", "matrixs", "nctalk", "nctalks", "ncloud", "nclouds"}


# Apprise's own query options (not secrets): their values would otherwise be redacted from
# every message ("overflow=upstream" would turn each "upstream" into ***).
APPRISE_KNOBS = {"overflow", "retry", "wait", "optional", "method", "format", "mode", "cto",
                 "rto", "verify", "image", "footer", "timestamp", "blocks", "emojis", "store",
                 "tz", "lang", "pgp", "reply"}


@dataclass(frozen=True)
class Channel:
    id: str                      # sha256 of the URL, 12 hex digits: stored, never reversible
    label: str                   # "json://127.0.0.1:8080", "dingtalk://…": safe to log
    secrets: tuple[str, ...] = field(repr=False)   # URL parts never to appear in a message
    plugin: Any = field(repr=False, compare=False)
    tags: frozenset[str] = frozenset()           # Apprise tags: "ops", "buyers"; none: default

    def routed(self, route: Iterable[str]) -> bool:
        """Whether an alert routed to these tags goes here, as Apprise matches tags: an empty
        route means the untagged channels; "all" every channel; a channel tagged "always" gets
        every alert."""
        route = {t.lower() for t in route}
        if ALWAYS_TAG in self.tags or ALL_TAG in route:
            return True
        return bool(self.tags & route) if route else not self.tags

    def redact(self, text: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            text = text.replace(secret, "***")
        return text


def _url_parts(url: str) -> tuple[str, str, tuple[str, ...]]:
    """(scheme, safe label, secrets) of an Apprise URL."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        host, port = parts.hostname or "", parts.port
    except ValueError:
        host, port = "", None
    secrets = {url, parts.netloc, parts.path, parts.query}
    secrets |= {unquote(s) for s in (parts.username, parts.password) if s}
    secrets |= {s for s in parts.path.split("/") if s}
    secrets |= {v for k, v in parse_qsl(parts.query) if v and k.lower() not in APPRISE_KNOBS}
    shown = scheme in HOST_SCHEMES and host and (_is_ip(host) or host == "localhost"
                                                 or "." in host)
    if shown:
        label = f"{scheme}://{host}{f':{port}' if port else ''}"
        secrets -= {host, f"{host}:{port}" if port else host}
    else:
        label = f"{scheme}://…"
        secrets.add(host)
    # Short fragments ("1", "to") would redact ordinary words; tokens are longer.
    return scheme, label, tuple(s for s in secrets if len(s) >= 4)


def _is_ip(host: str) -> bool:
    try:
        ip_address(host)
        return True
    except ValueError:
        return False


def _channel(url: str, plugin: Any, tags: Iterable[str] = ()) -> Channel:
    _, label, secrets = _url_parts(url)
    full = plugin.url()   # Apprise's own normalized form, for its error messages
    more = _url_parts(full)[2] if full else ()
    # The id hashes the URL alone: tagging a URL later keeps what it already received.
    return Channel(hashlib.sha256(url.encode()).hexdigest()[:12], label,
                   tuple(sorted(set(secrets) | set(more) - {label})), plugin,
                   frozenset(str(t).lower() for t in tags))


class _CaptureApprise(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextmanager
def _apprise_messages() -> Iterator[list[str]]:
    """Apprise's warnings and errors for one send, kept from the root logger (they can name the
    endpoint; we log them ourselves, redacted)."""
    logger = logging.getLogger("apprise")
    handler = _CaptureApprise()
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield handler.messages
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def split_entries(text: str) -> list[tuple[tuple[str, ...], str]]:
    """(tags, URL) of every item of GPUPRICES_NOTIFY_URLS: items are separated by whitespace or
    by a comma before a new `scheme://` or `tag=scheme://` (commas inside one URL, as in
    mailto's ?to=a@x,b@y, stay); `ops=json://...` or `ops,buyers=json://...` tags an item."""
    entries = []
    for word in text.split():
        starts = [m.start(1) for m in _ITEM_START.finditer(word)] or [0]
        starts[0] = 0
        for begin, end in zip(starts, [*starts[1:], len(word)], strict=True):
            item = word[begin:end].strip(",")
            if not item:
                continue
            tagged = _TAGGED.match(item)
            if tagged:
                tags = tuple(dict.fromkeys(t.lower() for t in tagged.group(1).split(",")))
                entries.append((tags, tagged.group(2)))
            else:
                entries.append(((), item))
    return entries


def split_urls(text: str) -> list[str]:
    """The URLs of GPUPRICES_NOTIFY_URLS, tags left off (see split_entries)."""
    return [url for _, url in split_entries(text)]


def load_channels(env: Mapping[str, str] | None = None) -> list[Channel]:
    """The notification channels configured in the environment (none: an empty list)."""
    import apprise

    env = os.environ if env is None else env
    channels: list[Channel] = []
    for n, (tags, url) in enumerate(split_entries(env.get(NOTIFY_URLS_ENV, "")), start=1):
        scheme = url.split("://", 1)[0] if "://" in url else None
        with _apprise_messages():   # Apprise's complaint would quote the URL
            plugin = (apprise.Apprise.instantiate(url, suppress_exceptions=True)
                      if scheme else None)
        if not plugin:
            what = f"scheme {scheme!r}" if scheme else "no scheme://"
            raise NotifyConfigError(f"{NOTIFY_URLS_ENV}: entry {n} ({what}) is not a valid "
                                    "Apprise URL (see docs/alerts.md)")
        channels.append(_channel(url, plugin, tags))
    config_file = env.get(NOTIFY_CONFIG_ENV)
    if config_file:
        if not Path(config_file).is_file():
            raise NotifyConfigError(f"{NOTIFY_CONFIG_ENV}: {config_file}: no such file")
        config = apprise.AppriseConfig()
        with _apprise_messages():
            config.add(str(Path(config_file).resolve()))
            bundle = apprise.Apprise()
            bundle.add(config)
            servers = list(bundle)   # every service in the file, with its tags
        if not servers:
            raise NotifyConfigError(f"{NOTIFY_CONFIG_ENV}: {config_file}: no valid Apprise URL "
                                    "in it")
        channels += [_channel(plugin.url(), plugin, plugin.tags) for plugin in servers]
    # A URL listed twice is one channel, with the tags of both.
    tags: dict[str, frozenset[str]] = {}
    for c in channels:
        tags[c.id] = tags.get(c.id, frozenset()) | c.tags
    unique = {c.id: c for c in reversed(channels)}
    return [replace(c, tags=tags[c.id]) for c in channels if unique[c.id] is c]


def routed_channels(channels: list[Channel], route: Iterable[str]) -> list[Channel]:
    """The channels an alert routed to `route` (tags; empty: the default) goes to."""
    route = tuple(route)
    return [c for c in channels if c.routed(route)]


def send(channel: Channel, title: str, body: str, failure: bool = False) -> str | None:
    """One attempt through one channel: None when sent, else why not (redacted). The body goes
    as plain text, which Apprise converts to the service's format (escaping HTML or Markdown);
    the title is escaped for it here where Apprise passes it on as it is (escaping.py)."""
    import apprise

    from pipelines.alerts.escaping import for_channel

    with _apprise_messages() as messages:
        try:
            ok = channel.plugin.notify(
                title=for_channel(channel.plugin, title), body=body,
                body_format=apprise.NotifyFormat.TEXT,
                notify_type=apprise.NotifyType.FAILURE if failure else apprise.NotifyType.INFO)
        except Exception as exc:   # a plugin bug must not stop the other alerts
            ok, messages = False, [*messages, f"{type(exc).__name__}: {exc}"]
    if ok:
        return None
    detail = " / ".join(dict.fromkeys(m.strip() for m in messages if m.strip()))
    return channel.redact(f"{channel.label}: {detail or 'Apprise reported a failure'}")
