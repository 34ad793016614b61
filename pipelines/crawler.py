"""The crawler: spiders run in subprocesses, several sources per process, over the replay server
or the live sites. No Dagster here: `gpuprices run` starts its crawl with it before Dagster has
loaded (pipelines/crawl_ahead.py); the code location's resource (pipelines/resources.py
CrawlerResource) has the same settings and hands its calls to it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from spiders.default_sources import crawl_refusal, is_opted_in, opt_in_from_env
from spiders.layout import (
    REPO_ROOT,
    SNAPSHOT_DIR,
    crawl_items_path,
    crawl_verdict_path,
    data_dir,
    fetch_log_path,
)
from spiders.replay_process import ReplayProcess
from spiders.source_manifest import manifest

MODES = ("replay", "raw", "live")


@dataclass
class CrawlResult:
    source: str
    crawl_id: str
    passed: bool
    offers: int
    failures: list[str]
    items_path: Path
    verdict: dict = field(default_factory=dict)
    skipped: bool = False
    # crawled in a process of its own because the shared crawl process died first (why: below)
    retried_alone: bool = False
    retry_reason: str = ""
    # the run named this source (spiders/default_sources.py): its modeled prices may be shown
    opted_in: bool = False

    @property
    def status(self) -> str:
        return "skipped" if self.skipped else "passed" if self.passed else "failed"


@dataclass
class ProcessOutcome:
    """How a crawl process ended: its exit code (None: killed at its deadline) and its stderr."""

    returncode: int | None
    stderr: str
    timeout_seconds: float

    def death(self) -> str:
        """Why the process ended before its crawls did, in words."""
        if self.returncode is None:
            return f"timed out after {self.timeout_seconds:g} s and was killed"
        if self.returncode < 0:
            return f"was killed by signal {-self.returncode}"
        return f"exited with code {self.returncode}"


def run_bounded(cmd: list[str], env: dict[str, str], timeout: float) -> ProcessOutcome:
    """Run a crawl process in its own process group; at the deadline the whole group (Chromium
    and Playwright's driver included) is killed."""
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, stderr = proc.communicate(timeout=timeout)
        returncode = proc.returncode
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        _, stderr = proc.communicate()
        returncode = None
    return ProcessOutcome(returncode, stderr or "", timeout)


@dataclass
class Crawler:
    """Runs the spiders in subprocesses (a Twisted reactor cannot restart in-process).

    `crawl_many` runs every plain-HTTP source in one Scrapy process and every Chromium source in
    another sharing one browser (spiders/crawl_many.py), each source with its own items file,
    verdict, settings and time limit; the sources a dead process left unfinished are retried each
    in its own process. `crawl` runs one `scrapy crawl <source>` alone.

    mode "replay" (the default) serves the bundled snapshots on 127.0.0.1 for the crawl's
    duration; "raw" serves the latest archived crawl of each source from data/raw/ (a re-run
    without crawling); "live" requests the vendors' real sites.
    """

    data_dir: str
    mode: str = "replay"
    snapshot_dir: str = str(SNAPSHOT_DIR)
    # each source's time limit (CLOSESPIDER_TIMEOUT when shared; the process's when alone)
    timeout_seconds: int = 600
    # a shared process gets this much beyond the per-source limit to close its crawls cleanly
    shared_grace_seconds: int = 60
    # sources crawled alone at once (retries after a shared process died);
    # GPUPRICES_CRAWL_CONCURRENCY
    alone_concurrency: int = 4
    # the sources this run opts in to (names, or "all"; GPUPRICES_OPT_IN): an opt-in source
    # (spiders/default_sources.py) not named here is skipped, not crawled
    opt_in: list[str] = field(default_factory=list)

    def items_path(self, source: str, crawl_id: str) -> Path:
        return crawl_items_path(source, crawl_id, self.data_dir)

    def verdict_path(self, source: str, crawl_id: str) -> Path:
        return crawl_verdict_path(source, crawl_id, self.data_dir)

    @contextlib.contextmanager
    def replay(self) -> Iterator[str | None]:
        """The replay server's URL for the crawl's duration (None for a live crawl)."""
        if self.mode not in MODES:
            raise ValueError(f"crawler mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        server = None
        if self.mode == "replay":   # in a process of its own: spiders/replay_process.py says why
            server = ReplayProcess(snapshot_dir=Path(self.snapshot_dir))
        elif self.mode == "raw":
            server = ReplayProcess(raw_root=Path(self.data_dir))
        try:
            yield server.url if server else None
        finally:
            if server:
                server.stop()

    def _env(self, replay_url: str | None) -> dict[str, str]:
        env = {**os.environ, "GPUPRICES_DATA_DIR": str(Path(self.data_dir))}
        env.pop("GPUPRICES_REPLAY_URL", None)
        if replay_url:
            env["GPUPRICES_REPLAY_URL"] = replay_url
        return env

    def _skipped(self, source: str, crawl_id: str) -> CrawlResult | None:
        why = (crawl_refusal(source, self.opt_in, self.mode, self.snapshot_dir)
               or manifest()[source].missing_key())
        if why:
            return CrawlResult(source, crawl_id, False, 0, [why],
                               self.items_path(source, crawl_id), skipped=True)
        return None

    def _opted_in(self, result: CrawlResult) -> CrawlResult:
        result.opted_in = is_opted_in(result.source, self.opt_in)
        return result

    def _from_verdict(self, source: str, crawl_id: str) -> CrawlResult | None:
        path = self.verdict_path(source, crawl_id)
        if not path.exists():
            return None
        verdict = json.loads(path.read_text(encoding="utf-8"))
        return CrawlResult(source, crawl_id, verdict["passed"], verdict["offers"],
                           verdict["failures"], self.items_path(source, crawl_id), verdict)

    def crawl(self, source: str, crawl_id: str, log: Any = None) -> CrawlResult:
        """One source alone, in its own `scrapy crawl` process (and its own replay server)."""
        with self.replay() as replay_url:
            return self._opted_in(self._crawl_alone(source, crawl_id, log, replay_url))

    def _crawl_alone(self, source: str, crawl_id: str, log, replay_url: str | None,
                     settings: dict | None = None) -> CrawlResult:
        skipped = self._skipped(source, crawl_id)
        if skipped:
            return skipped
        items_path = self.items_path(source, crawl_id)
        items_path.parent.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "scrapy", "crawl", source, "-a", f"crawl_id={crawl_id}",
               "-O", f"{items_path}:jsonlines", "-s", "LOG_LEVEL=INFO"]
        for name, value in (settings or {}).items():
            cmd += ["-s", f"{name}={value}"]
        outcome = run_bounded(cmd, self._env(replay_url), self.timeout_seconds)
        _forward_errors(log, source, outcome.stderr)
        if outcome.returncode is None:
            return CrawlResult(source, crawl_id, False, 0,
                               [f"crawl timed out after {self.timeout_seconds} s"], items_path)
        result = self._from_verdict(source, crawl_id)
        if result is None:
            tail = "\n".join(outcome.stderr.splitlines()[-15:])
            return CrawlResult(source, crawl_id, False, 0,
                               [f"spider did not finish (exit code {outcome.returncode}): {tail}"],
                               items_path)
        return result

    def crawl_many(self, jobs: dict[str, str], log: Any = None,
                   settings: dict[str, dict] | None = None) -> dict[str, CrawlResult]:
        """Crawl every source of `jobs` (source -> crawl id): the plain-HTTP sources in one
        process, the Chromium sources in another, both at once over one replay server. A source
        whose shared process died before its verdict was written is crawled again alone.
        `settings`: per-source Scrapy setting overrides (source -> {name: value})."""
        settings = settings or {}
        results: dict[str, CrawlResult] = {}
        groups: dict[str, list[str]] = {"plain-HTTP": [], "Chromium": []}
        for source, crawl_id in jobs.items():
            skipped = self._skipped(source, crawl_id)
            if skipped:
                results[source] = skipped
            else:
                group = "Chromium" if manifest()[source].render_js else "plain-HTTP"
                groups[group].append(source)
        with self.replay() as replay_url:
            with ThreadPoolExecutor(max_workers=2) as pool:
                outcomes = {name: pool.submit(self._crawl_shared, sources, jobs, settings,
                                              replay_url)
                            for name, sources in groups.items() if sources}
                outcomes = {name: future.result() for name, future in outcomes.items()}
            unfinished: dict[str, str] = {}
            for name, outcome in outcomes.items():
                _forward_errors(log, name, outcome.stderr)
                for source in groups[name]:
                    result = self._from_verdict(source, jobs[source])
                    if result is not None:
                        results[source] = result
                        continue
                    unfinished[source] = (f"the shared {name} crawl process {outcome.death()} "
                                          "before this source finished")
            with ThreadPoolExecutor(max_workers=self.alone_concurrency) as pool:
                retried = {s: pool.submit(self._retry_alone, s, jobs[s], reason, log, replay_url,
                                          settings.get(s))
                           for s, reason in unfinished.items()}
                results.update({s: future.result() for s, future in retried.items()})
        return {source: self._opted_in(results[source]) for source in jobs}

    def _crawl_shared(self, sources: list[str], jobs: dict[str, str],
                      settings: dict[str, dict], replay_url: str | None) -> ProcessOutcome:
        specs = []
        for source in sources:
            items_path = self.items_path(source, jobs[source])
            items_path.parent.mkdir(parents=True, exist_ok=True)
            specs.append({"source": source, "crawl_id": jobs[source], "items": str(items_path),
                          "settings": {"CLOSESPIDER_TIMEOUT": self.timeout_seconds,
                                       **settings.get(source, {})}})
        cmd = [sys.executable, "-m", "spiders.crawl_many", json.dumps(specs)]
        return run_bounded(cmd, self._env(replay_url),
                           self.timeout_seconds + self.shared_grace_seconds)

    def _retry_alone(self, source: str, crawl_id: str, reason: str, log,
                     replay_url: str | None, settings: dict | None) -> CrawlResult:
        if log:
            log.warning(f"[{source}] {reason}: crawling it again in a process of its own")
        # the dead process's half-written fetch log would be appended to: start it afresh
        fetches = fetch_log_path(source, crawl_id, self.data_dir)
        fetches.unlink(missing_ok=True)
        result = self._crawl_alone(source, crawl_id, log, replay_url, settings)
        result.retried_alone, result.retry_reason = True, reason
        return result


def _forward_errors(log, name: str, stderr: str) -> None:
    if log:
        for line in stderr.splitlines():
            if " ERROR" in line or "Traceback" in line:
                log.error(f"[{name}] {line}")


def settings_from_env() -> dict[str, Any]:
    """The crawler's settings that the environment decides (the code location's crawler, and the
    crawl `gpuprices run` starts before the Dagster run, pipelines/crawl_ahead.py)."""
    return {"mode": os.environ.get("GPUPRICES_MODE", "replay"), "data_dir": str(data_dir()),
            "snapshot_dir": os.environ.get("GPUPRICES_SNAPSHOT_DIR", str(SNAPSHOT_DIR)),
            "alone_concurrency": int(os.environ.get("GPUPRICES_CRAWL_CONCURRENCY") or 4),
            "opt_in": opt_in_from_env()}


# Every setting of a crawler, in the order Crawler declares them.
SETTINGS = tuple(f.name for f in fields(Crawler))
