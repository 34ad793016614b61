"""Run one real `scrapy crawl` in a subprocess over the replay server (a Twisted reactor cannot
restart in-process); return its offers and its monitor verdict (plus the raw fetch log)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from spiders.layout import REPO_ROOT


def run_crawl(source: str, replay_url: str, data_dir: Path,
              *settings: str) -> tuple[list[dict], dict]:
    items = data_dir / f"{source}.jsonl"
    env = {**os.environ, "GPUPRICES_REPLAY_URL": replay_url, "GPUPRICES_DATA_DIR": str(data_dir)}
    cmd = [sys.executable, "-m", "scrapy", "crawl", source, "-a", "crawl_id=test",
           "-O", f"{items}:jsonlines"]
    for setting in settings:
        cmd += ["-s", setting]
    proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=180)
    verdict_path = data_dir / "raw" / "crawls" / source / "test.json"
    assert verdict_path.exists(), proc.stderr[-3000:]
    verdict = json.loads(verdict_path.read_text())
    fetch_log = data_dir / "raw" / "fetches" / source / "test.jsonl"
    verdict["fetches"] = [json.loads(line) for line in fetch_log.read_text().splitlines()]
    offers = [json.loads(line) for line in items.read_text().splitlines()] if items.exists() else []
    return offers, verdict
