"""The blast radius of the blocking checks, wired: observation_batch judges every crawl of the
batch by every blocking rule (pipelines/quality/blast_radius.py), settles the crawls held
before (pipelines/quality/settlement.py), records the decisions (raw.crawl_decisions), and
remakes the batch of the crawls that land. The blocking checks then run on what remains, as a
safety net: one source's bad hour holds that source's crawl, never the batch.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

import duckdb
import pandas as pd

from pipelines.defs.quality import batch_frame
from pipelines.normalize.batch import crawl_counts, normalize_each, normalize_pending
from pipelines.quality.blast_radius import RowVerdict, confirming, level_reasons, row_verdict
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


@dataclass
class BatchMade:
    """What observation_batch made: the decisions, the landing crawls' batch rows, every refused
    offer (of the landing crawls, and of those held or rejected), the landing crawls' offers."""
    outcome: Outcome
    batch: pd.DataFrame
    quarantined: list[dict]
    landing_offers: int


def land_or_hold(con: duckdb.DuckDBPyConnection, pending: list[tuple],
                 now: datetime) -> BatchMade:
    """Judge every crawl of raw.batch_crawls (its `pending` offers) by every blocking rule, record
    the decisions, and make observation_batch of the crawls that land. Each crawl is judged on its
    own normalization: a held crawl's rows never sway another's (the "consistency" stage compares
    a vendor's rows within what is normalized together); the landing crawls are then normalized
    together, as the batch always was (an offer-hour two of them saw is kept once). Each offer
    is normalized once (normalize_each): the passes differ only in which offers meet."""
    each = normalize_each(pending)
    alone = [normalize_pending(offers, each) for offers in _by_crawl(pending).values()]
    judged = pd.concat([b for b, _ in alone], ignore_index=True) if alone else pd.DataFrame()
    if len(judged):   # an offer-hour two crawls saw is the earlier one's, as normalize_pending
        judged = judged.drop_duplicates(["offer_id", "observed_hour"])   # keeps it (crawl order)
    _write_batch(con, judged, [q for _, refused in alone for q in refused], pending)
    levels = con.execute(sql_text(__file__, "crawl_levels"),
                         {"trailing_crawls": TRAILING_CRAWLS}).df()
    verdicts = [row_verdict(batch_frame(con), now)]
    reasons = _merged(verdicts[0].reasons, level_reasons(levels))
    crawls = [BatchCrawl(crawl_id, source, tuple(reasons.get(crawl_id, ())), held_since,
                         alerted, accepted)
              for crawl_id, source, held_since, alerted, accepted in batch_crawl_holds(con)]
    outcome = settle(crawls, lambda held, later: confirming(levels, held, later), now)
    sources = {c.crawl_id: c.source for c in crawls}
    while True:
        landing = [offer for offer in pending if offer[0] in outcome.landing]
        batch, quarantined = normalize_pending(landing, each)
        _keep_landing(con, outcome.landing)
        _write_batch(con, batch, quarantined, landing)
        # what is normalized together may differ from each crawl alone (an offer-hour a
        # left-out crawl kept now comes from the next crawl that saw it): judged again, so the
        # blocking checks never meet a row no rule saw (the same rows: judged already)
        if _row_keys(batch) == _row_keys(judged[judged["crawl_id"].isin(outcome.landing)]
                                         if len(judged) else judged):
            break
        verdicts.append(row_verdict(batch_frame(con), now))
        again = verdicts[-1].reasons
        if not again:
            break
        for crawl_id, found in sorted(again.items()):
            outcome.landing.pop(crawl_id, None)
            outcome.decisions.append(Decision(
                crawl_id, sources[crawl_id], "held", RULE + found[0].check,
                "; ".join(r.text() for r in found), found[0]))
    record_decisions(con, outcome.decisions, now)
    record_suite_passes(con, verdicts, now)
    settled = pd.DataFrame([(c, how) for c, how in outcome.landing.items() if how],
                           columns=["crawl_id", "level_settled_by"])
    con.register("settled", settled)
    con.execute(sql_text(__file__, "mark_level_settled"))
    con.unregister("settled")
    alert_unresolved(con, [d for d in outcome.decisions if d.decision == "unresolved"])
    # every refused offer is recorded once: a held crawl's are refused all the same
    left_out = [q for _, refused in alone for q in refused if q["crawl_id"] not in outcome.landing]
    _record_quarantine(con, quarantined + left_out)
    return BatchMade(outcome, batch, quarantined + left_out, len(landing))


def _row_keys(rows: pd.DataFrame) -> set[tuple]:
    if not len(rows):
        return set()
    return set(zip(rows["crawl_id"], rows["offer_id"], rows["observed_hour"], strict=True))


def _by_crawl(pending: list[tuple]) -> dict[str, list[tuple]]:
    crawls: dict[str, list[tuple]] = {}
    for offer in pending:
        crawls.setdefault(offer[0], []).append(offer)
    return crawls


def _merged(*found: dict[str, list]) -> dict[str, list]:
    merged: dict[str, list] = {}
    for reasons in found:
        for crawl_id, more in reasons.items():
            merged.setdefault(crawl_id, []).extend(more)
    return merged


def _write_batch(con: duckdb.DuckDBPyConnection, batch: pd.DataFrame, quarantined: list[dict],
                 pending: list[tuple]) -> None:
    """observation_batch := `batch`; each batch crawl's counts of what became of its offers."""
    con.execute("delete from observation_batch")
    if len(batch):
        con.register("batch_df", as_insertable(batch))
        con.execute("insert into observation_batch by name select * from batch_df")
        con.unregister("batch_df")
    con.register("crawl_counts", crawl_counts(pending, quarantined))
    con.execute(sql_text(__file__, "count_batch_crawls"))
    con.unregister("crawl_counts")
    con.execute(sql_text(__file__, "count_quarantined"))


def record_suite_passes(con: duckdb.DuckDBPyConnection, verdicts: list[RowVerdict],
                         now: datetime) -> None:
    """The fingerprints of the batches the row suite passed as a whole: the blocking check that
    reads the same rows (and suite) takes that verdict instead of validating them again."""
    passes = pd.DataFrame({"fingerprint": [v.fingerprint for v in verdicts if v.passed]},
                          dtype=object)
    passes["judged_at"] = pd.Series([now] * len(passes), dtype="datetime64[us, UTC]")
    con.register("suite_passes", passes)
    con.execute(sql_text(__file__, "record_suite_passes"))
    con.unregister("suite_passes")


def _keep_landing(con: duckdb.DuckDBPyConnection, landing: dict[str, str | None]) -> None:
    """raw.batch_crawls of the landing crawls alone: `observations` marks just those."""
    con.register("landing", pd.DataFrame({"crawl_id": sorted(landing)}, dtype=object))
    con.execute(sql_text(__file__, "keep_landing_crawls"))
    con.unregister("landing")


def _record_quarantine(con: duckdb.DuckDBPyConnection, quarantined: list[dict]) -> None:
    if quarantined:
        con.register("quarantined", pd.DataFrame(quarantined))
        con.execute(sql_text(__file__, "insert_quarantined"))
        con.unregister("quarantined")


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
