"""Resources: the DuckDB file and the crawler that runs spiders in subprocesses (declared for the
code location in pipelines/defs/resources.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.warehouse.db import DUCKDB_CONFIG
from spiders.layout import REPO_ROOT, SNAPSHOT_DIR, data_dir, work_db_path
from spiders.registry import spider_class
from spiders.replay_server import ReplayServer, load_raw_archive

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

    @property
    def status(self) -> str:
        return "skipped" if self.skipped else "passed" if self.passed else "failed"


class CrawlerResource(dg.ConfigurableResource):
    """Runs `scrapy crawl <source>` in a subprocess (a Twisted reactor cannot restart in-process).

    mode "replay" (the default) serves the bundled snapshots on 127.0.0.1 for the crawl's
    duration; "raw" serves the latest archived crawl of each source from data/raw/ (a re-run
    without crawling); "live" requests the vendors' real sites.
    """

    mode: str = "replay"
    data_dir: str
    snapshot_dir: str = str(SNAPSHOT_DIR)
    timeout_seconds: int = 600

    def items_path(self, source: str, crawl_id: str) -> Path:
        return Path(self.data_dir) / "raw" / "items" / source / f"{crawl_id}.jsonl"

    def crawl(self, source: str, crawl_id: str,
              log: dg.DagsterLogManager | None = None) -> CrawlResult:
        if self.mode not in MODES:
            raise ValueError(f"crawler mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        root = Path(self.data_dir)
        items_path = self.items_path(source, crawl_id)
        missing_key = spider_class(source).missing_key()
        if missing_key:
            return CrawlResult(source, crawl_id, False, 0, [missing_key], items_path, skipped=True)
        verdict_path = root / "raw" / "crawls" / source / f"{crawl_id}.json"
        items_path.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "GPUPRICES_DATA_DIR": str(root)}
        env.pop("GPUPRICES_REPLAY_URL", None)
        cmd = [sys.executable, "-m", "scrapy", "crawl", source, "-a", f"crawl_id={crawl_id}",
               "-O", f"{items_path}:jsonlines", "-s", "LOG_LEVEL=INFO"]
        server = None
        if self.mode == "replay":
            server = ReplayServer(Path(self.snapshot_dir)).start()
        elif self.mode == "raw":
            server = ReplayServer(index=load_raw_archive(root / "raw")).start()
        try:
            if server:
                env["GPUPRICES_REPLAY_URL"] = server.url
            proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                                  timeout=self.timeout_seconds)
        except subprocess.TimeoutExpired:
            return CrawlResult(source, crawl_id, False, 0,
                               [f"crawl timed out after {self.timeout_seconds} s"], items_path)
        finally:
            if server:
                server.stop()
        if log:
            for line in proc.stderr.splitlines():
                if " ERROR" in line or "Traceback" in line:
                    log.error(f"[{source}] {line}")
        if not verdict_path.exists():
            tail = "\n".join(proc.stderr.splitlines()[-15:])
            return CrawlResult(source, crawl_id, False, 0,
                               [f"spider did not finish (exit code {proc.returncode}): {tail}"],
                               items_path)
        verdict = json.loads(verdict_path.read_text(encoding="utf-8"))
        return CrawlResult(source, crawl_id, verdict["passed"], verdict["offers"],
                           verdict["failures"], items_path, verdict)


def crawler_from_env() -> CrawlerResource:
    return CrawlerResource(mode=os.environ.get("GPUPRICES_MODE", "replay"),
                           data_dir=str(data_dir()),
                           snapshot_dir=os.environ.get("GPUPRICES_SNAPSHOT_DIR", str(SNAPSHOT_DIR)))


def duckdb_from_env() -> DuckDBResource:
    path = work_db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    return DuckDBResource(database=str(path), connection_config=DUCKDB_CONFIG)
