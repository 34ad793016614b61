"""raw.crawl_decisions: every decision about a crawl a blocking rule held back, by a rule or a
person, and the crawl's status after it (raw.crawls.status: 'held' while held). The one writer
of both, for the pipeline's settlement (pipelines/defs/crawl_holds.py) and for
`gpuprices accept` / `reject`."""

from __future__ import annotations

from datetime import datetime

import duckdb

from pipelines.quality.blast_radius import ROW_CHECK
from pipelines.quality.settlement import Decision
from pipelines.warehouse.sql_files import sql_text

# raw.crawls.status after each decision; 'unresolved' (an alert) leaves the crawl held.
STATUS_AFTER = {"held": "held", "confirmed": "passed", "cleared": "passed",
                "accepted": "passed", "reverted": "rejected", "rejected": "rejected"}


def record_decisions(con: duckdb.DuckDBPyConnection, decisions: list[Decision],
                     now: datetime) -> None:
    """Record each decision and set its crawl's status; a rejection sets the crawl aside
    (no longer passed, the reason among its failures; its raw offers stay)."""
    for d in decisions:
        held = d.held
        con.execute(sql_text(__file__, "record_crawl_decision"), {
            "crawl_id": d.crawl_id, "source": d.source, "decided_at": now,
            "decision": d.decision, "decided_by": d.decided_by,
            "check_name": held.check if held else None,
            "figure": held.figure if held else None, "bound": held.bound if held else None,
            "reason": d.reason})
        status = STATUS_AFTER.get(d.decision)
        if status == "rejected":
            con.execute(sql_text(__file__, "reject_crawl"),
                        {"reason": f"{d.decision}: {d.reason}", "crawl_id": d.crawl_id})
        elif status:
            con.execute("update raw.crawls set status = ? where crawl_id = ?",
                        [status, d.crawl_id])


def batch_crawl_holds(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    """(crawl_id, source, held_since, alerted, accepted) of every crawl of the batch."""
    return con.execute(sql_text(__file__, "batch_crawl_holds")).fetchall()


def crawl_state(con: duckdb.DuckDBPyConnection, crawl_id: str) -> tuple | None:
    """(source, passed, normalized_at, status, row_rule) of a crawl, or None: row_rule, the
    check of a row rule that holds it (null: none does)."""
    return con.execute(sql_text(__file__, "crawl_state"), [ROW_CHECK, crawl_id]).fetchone()
