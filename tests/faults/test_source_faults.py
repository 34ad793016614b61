"""A vendor's answer changes under a live crawl (issue 39 item 4): a renamed field, a changed
unit, an error page. Each fault is a real `scrapy crawl` (subprocess) over the replay server on a
copy of the snapshot the fault rewrote, or with the fault served by the server; the source fails
alone, and its verdict names the field, the unit or the status. What the pipeline then does with
the failed crawl (its reason in raw.crawls, the source's last good prices kept and the source
reported stale) is the last test, and the soak (tests/e2e/test_soak.py) does it over a day.
docs/robustness.md, "Live-mode faults", has the table.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from dagster_duckdb import DuckDBResource

from pipelines.defs.ingest import record_crawl
from pipelines.defs.quality import sources_are_fresh
from pipelines.query.prices import source_states_sql
from pipelines.resources import CrawlResult
from pipelines.warehouse.db import ensure_schema
from spiders.layout import SNAPSHOT_DIR
from spiders.replay_server import Fault, ReplayServer
from tests.helpers.crawl import run_crawl

VASTAI_URL = "https://console.vast.ai/api/v0/bundles/"
AZURE_PAGES = [e["url"] for e in
               json.loads((SNAPSHOT_DIR / "azure" / "manifest.json").read_text())["entries"]]
ERROR_PAGE = (b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>"
              b"<body><h1>502 Bad Gateway</h1></body></html>")
FAST = ("RETRY_BACKOFF_BASE=0.1",)


def rewritten(tmp_path: Path, source: str, old: str, new: str) -> Path:
    """A snapshot directory whose `source` has every `old` in its JSON bodies replaced by `new`."""
    root = tmp_path / "snapshots"
    shutil.copytree(SNAPSHOT_DIR / source, root / source)
    for path in (root / source).glob("*.json"):
        if path.name != "manifest.json":
            text = path.read_text(encoding="utf-8")
            assert old in text, f"{old} not in {path}"
            path.write_text(text.replace(old, new), encoding="utf-8")
    return root


# (id, source, body rewrite (old, new) or None, served fault (URL, Fault) or None, named)
FAULTS = [
    ("renamed-field-in-every-offer", "vastai", ('"gpu_name"', '"gpuName"'), None,
     "field 'gpu_name' missing from the answer"),
    ("renamed-field-the-spider-checks", "matpool_cn", ('"gpu_model"', '"gpuModel"'), None,
     "matpool_cn: pool without gpu_model"),
    ("renamed-offer-list", "azure", ('"Items"', '"items"'), None, "azure: no list at 'Items'"),
    ("changed-unit", "azure", ('"1 Hour"', '"1 Minute"'), None,
     "unitOfMeasure '1 Minute', not '1 Hour'"),
    ("http-403", "vastai", None, (VASTAI_URL, Fault(403, body=b"Forbidden")),
     "responses had an error status (HTTP 403 x1)"),
    ("http-502-error-page", "vastai", None,
     (VASTAI_URL, Fault(502, {"Content-Type": "text/html"}, ERROR_PAGE)), "HTTP 502"),
    ("html-error-page-with-200", "azure", None,
     (AZURE_PAGES[0], Fault(200, {"Content-Type": "text/html"}, ERROR_PAGE)),
     "got an HTML page (HTTP 200, Content-Type text/html, title '502 Bad Gateway')"),
    ("html-error-page-labelled-json", "vastai", None,
     (VASTAI_URL, Fault(200, {"Content-Type": "application/json"}, ERROR_PAGE)),
     "got an HTML page (HTTP 200, Content-Type application/json, title '502 Bad Gateway')"),
]


@pytest.mark.parametrize(("source", "rewrite", "served", "named"),
                         [pytest.param(*f[1:], id=f[0]) for f in FAULTS])
def test_a_changed_answer_fails_its_source_naming_what_changed(source, rewrite, served, named,
                                                               tmp_path):
    snapshots = rewritten(tmp_path, source, *rewrite) if rewrite else SNAPSHOT_DIR
    # a persistent fault: every attempt (1 + RETRY_TIMES) gets it
    faults = {served[0]: [served[1]] * 3} if served else {}
    with ReplayServer(snapshots, faults=faults) as server:
        offers, verdict = run_crawl(source, server.url, tmp_path, *FAST)
    assert not verdict["passed"] and offers == [], verdict
    assert any(named in f for f in verdict["failures"]), verdict["failures"]


def test_a_failed_source_keeps_its_last_good_prices_and_is_reported_stale(tmp_path):
    """One run: vastai's crawl passed hours ago and landed; now it fails (its field renamed)
    beside a passing source. Its reason is in raw.crawls, nothing of it is loaded (nothing of its
    earlier crawl is touched: the soak checks its prices stay over the hours it fails), and the
    freshness check names it."""
    db = DuckDBResource(database=str(tmp_path / "prices.db"))
    now = datetime.now(UTC)
    failed = CrawlResult("vastai", "vastai-now", False, 0,
                         ["only 0 offers collected (expected at least 10)",
                          "parse error on https://console.vast.ai/api/v0/bundles/: field "
                          "'gpu_name' missing from the answer (KeyError: renamed or dropped?)"],
                         tmp_path / "none.jsonl",
                         {"started_at": now.isoformat(), "finished_at": now.isoformat()})
    passed_items = tmp_path / "vultr.jsonl"
    passed_items.write_text(json.dumps({"source": "vultr", "sku": "x"}) + "\n")
    passed = CrawlResult("vultr", "vultr-now", True, 1, [], passed_items,
                         {"started_at": now.isoformat(), "finished_at": now.isoformat()})
    with db.get_connection() as con:
        ensure_schema(con)
        con.execute("insert into raw.crawls (crawl_id, source, mode, passed, status, offers, "
                    "finished_at, normalized_at) values ('vastai-old', 'vastai', 'live', true, "
                    "'passed', 52, ?, ?)", [now - timedelta(hours=5), now - timedelta(hours=5)])
        for result in (failed, passed):
            record_crawl(con, result, "run-now", "live")
        rows = con.execute("select source, passed, status, failures from raw.crawls "
                           "where crawl_id like '%-now' order by 1").fetchall()
        loaded = con.execute("select source, count(*) from raw.offers group by 1").fetchall()
    assert rows[0][:3] == ("vastai", False, "failed")
    assert "field 'gpu_name' missing" in " ".join(rows[0][3])
    assert rows[1][:3] == ("vultr", True, "passed") and loaded == [("vultr", 1)]
    stale = sources_are_fresh(duckdb=db)
    assert not stale.passed
    assert [s["source"] for s in stale.metadata["stale"].value] == ["vastai"]
    # and every reader marks its last good prices: failed, since its last published crawl
    # (tests/query/test_source_states.py)
    with db.get_connection() as con:
        [(state, since)] = con.execute(f"select source_state, source_stale_since from "
                                       f"({source_states_sql()}) where source = 'vastai'"
                                       ).fetchall()
    assert (state, since) == ("failed", now - timedelta(hours=5))
