"""The settlement rules on their own (pipelines/quality/settlement.py): what becomes of each crawl
of a source, given what the rules say of it and of the crawls after it. Pure: no database."""

from datetime import UTC, datetime, timedelta

import pytest

from pipelines.quality.blast_radius import ROW_CHECK, SOURCE_CHECK, HoldReason
from pipelines.quality.settlement import BatchCrawl, settle
from pipelines.quality.thresholds import HOLD_ALERT_HOURS

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
LEVEL = HoldReason(SOURCE_CHECK, "price_level_ratio", "3.4 (A100-80GB)", "0.333..3")
ROW = HoldReason(ROW_CHECK, "observed_at", "2031-01-01 in 3 row(s)", "<= 2026-11-30")


def crawl(n: int, *reasons: HoldReason, held_hours: float | None = None, **more) -> BatchCrawl:
    return BatchCrawl(f"c{n}", "idc_b", reasons,
                      None if held_hours is None else NOW - timedelta(hours=held_hours), **more)


def at_its_level(held: str, later: list[str]) -> set[str]:
    """Every later crawl is at the held crawl's level."""
    return set(later)


def outcome_of(*crawls: BatchCrawl, confirms=at_its_level) -> tuple[dict, dict]:
    outcome = settle(list(crawls), confirms, NOW)
    return outcome.landing, {d.crawl_id: d.decision for d in outcome.decisions}


@pytest.mark.parametrize("crawls, landing, decisions", [
    # a clean crawl lands; a new refusal is held
    ([crawl(1), crawl(2, LEVEL)], {"c1": None}, {"c2": "held"}),
    # a held crawl that passes every rule now lands
    ([crawl(1, held_hours=1)], {"c1": None}, {"c1": "cleared"}),
    # a clean crawl after it: a glitch
    ([crawl(1, LEVEL, held_hours=1), crawl(2)], {"c2": None}, {"c1": "reverted"}),
    # one crawl at its level is not enough; the later one is held in turn
    ([crawl(1, LEVEL, held_hours=1), crawl(2, LEVEL)], {}, {"c2": "held"}),
    # two are: all three land, their new level let in
    ([crawl(1, LEVEL, held_hours=2), crawl(2, LEVEL, held_hours=1), crawl(3, LEVEL)],
     {"c1": "confirmed", "c2": "confirmed", "c3": "confirmed"},
     {"c1": "confirmed", "c2": "confirmed", "c3": "confirmed"}),
    # a wrong row is never confirmed, however many crawls repeat it
    ([crawl(1, ROW, held_hours=1), crawl(2, ROW), crawl(3, ROW)], {}, {"c2": "held", "c3": "held"}),
    # a person accepted it: it lands, and the crawls at its level with it
    ([crawl(1, LEVEL, accepted=True), crawl(2, LEVEL)],
     {"c1": "accepted", "c2": "confirmed"}, {"c2": "confirmed"}),
    # an accepted crawl a row rule refuses is held again: no one can accept a wrong row
    ([crawl(1, ROW, accepted=True)], {}, {"c1": "held"}),
    # unresolved past the hours: alerted once ...
    ([crawl(1, LEVEL, held_hours=HOLD_ALERT_HOURS + 1)], {}, {"c1": "unresolved"}),
    # ... and not again
    ([crawl(1, LEVEL, held_hours=HOLD_ALERT_HOURS + 2, alerted=True)], {}, {}),
])
def test_settlement(crawls, landing, decisions):
    assert outcome_of(*crawls) == (landing, decisions)


def test_crawls_at_another_level_confirm_nothing():
    landing, decisions = outcome_of(crawl(1, LEVEL, held_hours=1), crawl(2, LEVEL),
                                    crawl(3, LEVEL), confirms=lambda held, later: set())
    assert landing == {} and decisions == {"c2": "held", "c3": "held"}


def test_each_source_is_settled_on_its_own():
    other = BatchCrawl("d1", "idc_c", ())
    landing, decisions = outcome_of(crawl(1, LEVEL), other)
    assert landing == {"d1": None} and decisions == {"c1": "held"}
