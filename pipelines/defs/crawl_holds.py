"""The blast radius of the blocking checks, wired: observation_batch judges every crawl of the
batch by every blocking rule (pipelines/quality/blast_radius.py), settles the crawls held
before (pipelines/quality/settlement.py), records the decisions (raw.crawl_decisions), and
remakes the batch of the crawls that land. The blocking checks then run on what remains, as a
safety net: one source's bad hour holds that source's crawl, never the batch.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

import duckdb
import pandas as pd

from pipelines.defs.quality import batch_frame
from pipelines.normalize.batch import normalize_pending
from pipelines.quality.blast_radius import confirming, level_reasons, row_reasons
from pipelines.quality.settlement import (
    RULE,
    BatchCrawl,
    Decision,
    Outcome,
    settle,
)
from pipelines.quality.thresholds import TRAILING_CRAWLS
from pipelines.warehouse.crawl_decisions import batch_crawl_holds, record_decisions
from pipelines.warehouse.db import as_insertable
from pipelines.warehouse.sql_files import sql_text

HELD_ALERT_RULE = "held_crawl"   # the alert rule of an unresolved hold (pipelines/alerts/)


def land_or_hold(con: duckdb.DuckDBPyConnection, pending: list[tuple], now: datetime) -> Outcome:
    """Judge the batch in observation_batch (every crawl of raw.batch_crawls, normalized), record
    the decisions, and leave in the batch only the crawls that land. The outcome says which."""
    levels = con.execute(sql_text(__file__, "crawl_levels"),
                         {"trailing_crawls": TRAILING_CRAWLS}).df()
    reasons = _merged(row_reasons(batch_frame(con), now), level_reasons(levels))
    crawls = [BatchCrawl(crawl_id, source, tuple(reasons.get(crawl_id, ())), held_since,
                         alerted, accepted)
              for crawl_id, source, held_since, alerted, accepted in batch_crawl_holds(con)]
    outcome = settle(crawls, lambda held, later: confirming(levels, held, later), now)
    sources = {c.crawl_id: c.source for c in crawls}
    while len(outcome.landing) < len(crawls):
        _remake_batch(con, pending, outcome.landing)
        # an offer-hour a left-out crawl kept now comes from the next crawl that saw it: judged
        # too, so the blocking checks never meet a row no rule saw
        again = row_reasons(batch_frame(con), now)
        if not again:
            break
        for crawl_id, found in sorted(again.items()):
            outcome.landing.pop(crawl_id, None)
            outcome.decisions.append(Decision(
                crawl_id, sources[crawl_id], "held", RULE + found[0].check,
                "; ".join(r.text() for r in found), found[0]))
    record_decisions(con, outcome.decisions, now)
    settled = pd.DataFrame([(c, how) for c, how in outcome.landing.items() if how],
                           columns=["crawl_id", "level_settled_by"])
    con.register("settled", settled)
    con.execute(sql_text(__file__, "mark_level_settled"))
    con.unregister("settled")
    alert_unresolved(con, [d for d in outcome.decisions if d.decision == "unresolved"])
    return outcome


def _merged(*found: dict[str, list]) -> dict[str, list]:
    merged: dict[str, list] = {}
    for reasons in found:
        for crawl_id, more in reasons.items():
            merged.setdefault(crawl_id, []).extend(more)
    return merged


def _remake_batch(con: duckdb.DuckDBPyConnection, pending: list[tuple],
                  landing: dict[str, str | None]) -> None:
    """observation_batch and raw.batch_crawls of the landing crawls alone. Their quarantine was
    recorded with the whole batch (a held crawl's refused offers are refused all the same)."""
    batch, _ = normalize_pending([offer for offer in pending if offer[0] in landing])
    con.register("landing", pd.DataFrame({"crawl_id": sorted(landing)}, dtype=object))
    con.execute(sql_text(__file__, "keep_landing_crawls"))
    con.unregister("landing")
    con.execute("delete from observation_batch")
    if len(batch):
        con.register("batch_df", as_insertable(batch))
        con.execute("insert into observation_batch by name select * from batch_df")
        con.unregister("batch_df")


def alert_unresolved(con: duckdb.DuckDBPyConnection, unresolved: list[Decision]) -> None:
    """One alert per hold past its hours, into alerts.outbox: the alerts step of this run sends
    it through the run-failure channels (operators' ones)."""
    if not unresolved:
        return
    from pipelines.alerts.outbox import Alert, ensure_outbox, insert_alerts
    from pipelines.alerts.rules import AlertConfigError, load_rules

    try:
        route = load_rules().run_failure.channels
    except AlertConfigError:   # the alerts step names a broken rules file; the alert still goes
        route = ()
    ensure_outbox(con)
    insert_alerts(con, [Alert(
        f"{HELD_ALERT_RULE}:" + hashlib.sha256(d.crawl_id.encode()).hexdigest()[:16],
        HELD_ALERT_RULE, f"gpuprices: {d.source} held, unresolved ({d.crawl_id})",
        f"{d.source}: crawl {d.crawl_id} {d.reason}",
        {"source": d.source, "crawl_id": d.crawl_id}, route) for d in unresolved])
