"""What becomes of each crawl of a batch, given what the blocking rules say of it and of the
crawls of its source that follow it (docs/robustness.md, "Settlement"):

* a crawl no rule refuses lands;
* a held crawl is settled by the crawls after it, in crawl order: the first of them that passes
  every rule against the level before the hold shows it was a glitch ('reverted': rejected);
  CONFIRMING_CRAWLS of them at its own level (refused only by the source rules, and passing
  those against the held crawl) show a real move ('confirmed': it lands with its original
  observation time, and so do they); a held crawl that passes every rule now lands ('cleared');
* a crawl a person accepted lands unless a row rule refuses it (no one can accept a wrong row);
* anything else is held, and a hold older than HOLD_ALERT_HOURS is alerted on once
  ('unresolved'), naming the commands that settle it.

Pure: the judgements in, the decisions out; pipelines/defs/crawl_holds.py reads and writes them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pipelines.quality.blast_radius import HoldReason
from pipelines.quality.thresholds import CONFIRMING_CRAWLS, HOLD_ALERT_HOURS

RULE = "rule:"            # decided_by of a rule's decision: 'rule:<name>'
PERSON = "person:"        # decided_by of a person's: 'person:<user>'
# The decisions after which a crawl's level is let in: the source rules no longer judge it.
LEVEL_SETTLED = ("confirmed", "accepted")
LANDS = ("cleared", "confirmed")
STAYS_HELD = "still held"   # no new decision: a hold that goes on, already recorded


@dataclass(frozen=True)
class BatchCrawl:
    """One crawl of the batch: its source, whether it was held before this run (and since when,
    whether that hold was alerted on), whether a person accepted it, and what the rules say."""
    crawl_id: str
    source: str
    reasons: tuple[HoldReason, ...] = ()
    held_since: datetime | None = None
    alerted: bool = False
    accepted: bool = False

    @property
    def clean(self) -> bool:
        return not self.reasons

    @property
    def level_only(self) -> bool:
        """Refused by the source rules alone: a level that later crawls may confirm."""
        return bool(self.reasons) and all(r.on_level for r in self.reasons)


@dataclass(frozen=True)
class Decision:
    crawl_id: str
    source: str
    decision: str     # 'held' | 'confirmed' | 'reverted' | 'cleared' | 'unresolved'
    decided_by: str
    reason: str
    held: HoldReason | None = None


@dataclass
class Outcome:
    """The crawls that land (each with the decision that let its level in, if any), and the
    decisions to record."""
    landing: dict[str, str | None] = field(default_factory=dict)
    decisions: list[Decision] = field(default_factory=list)


def settle(crawls: list[BatchCrawl], confirms: Callable[[str, list[str]], set[str]],
           now: datetime) -> Outcome:
    """The outcome of a batch's crawls. `confirms(held, later)`: those of `later` at the level
    of crawl `held` (blast_radius.confirming)."""
    outcome = Outcome()
    by_source: dict[str, list[BatchCrawl]] = {}
    for crawl in sorted(crawls, key=lambda c: c.crawl_id):
        by_source.setdefault(crawl.source, []).append(crawl)
    for chain in by_source.values():
        _settle_source(chain, confirms, now, outcome)
    return outcome


def _settle_source(chain: list[BatchCrawl], confirms, now: datetime, outcome: Outcome) -> None:
    decided: dict[str, Decision | None] = {}   # crawl_id -> its decision (None: lands as is)
    for i, crawl in enumerate(chain):
        if crawl.crawl_id in decided:
            continue
        later = chain[i + 1:]
        if crawl.clean:
            decided[crawl.crawl_id] = (None if crawl.held_since is None else _decision(
                crawl, "cleared", "passes every blocking rule now"))
            continue
        if crawl.accepted and crawl.level_only:
            outcome.landing[crawl.crawl_id] = "accepted"
            decided[crawl.crawl_id] = None
            _confirm_followers(crawl, later, confirms, decided, outcome, "accepted")
            continue
        back = next((c for c in later if c.clean), None)
        if back is not None and not crawl.accepted:
            decided[crawl.crawl_id] = _decision(
                crawl, "reverted", f"a glitch: {back.crawl_id}, after it, is back at the level "
                                   f"before ({_first(crawl).text()})")
            continue
        at_its_level = confirms(crawl.crawl_id, [c.crawl_id for c in later if c.level_only]) \
            if crawl.level_only else set()
        if len(at_its_level) >= CONFIRMING_CRAWLS:
            outcome.landing[crawl.crawl_id] = "confirmed"
            decided[crawl.crawl_id] = _decision(
                crawl, "confirmed", f"a real move: {', '.join(sorted(at_its_level))} after it "
                                    f"confirm its level ({_first(crawl).text()})")
            _confirm_followers(crawl, later, confirms, decided, outcome, "confirmed")
            continue
        decided[crawl.crawl_id] = _still_held(crawl, now)
    for crawl in chain:
        decision = decided[crawl.crawl_id]
        if decision is None or decision.decision in LANDS:
            outcome.landing.setdefault(crawl.crawl_id, None)
        if decision is not None and decision.decision != STAYS_HELD:
            outcome.decisions.append(decision)


def _confirm_followers(crawl: BatchCrawl, later: list[BatchCrawl], confirms,
                       decided: dict, outcome: Outcome, how: str) -> None:
    """The later crawls at `crawl`'s settled level land with it."""
    followers = confirms(crawl.crawl_id, [c.crawl_id for c in later if c.level_only])
    for follower in later:
        if follower.crawl_id in followers and follower.crawl_id not in decided:
            outcome.landing[follower.crawl_id] = "confirmed"
            decided[follower.crawl_id] = _decision(
                follower, "confirmed", f"at the level of {crawl.crawl_id} ({how})")


def _still_held(crawl: BatchCrawl, now: datetime) -> Decision:
    """A new hold, the one alert of a hold past HOLD_ALERT_HOURS, or a hold that goes on."""
    if crawl.held_since is None:
        return Decision(crawl.crawl_id, crawl.source, "held", RULE + _first(crawl).check,
                        "; ".join(r.text() for r in crawl.reasons), _first(crawl))
    if not crawl.alerted and now - crawl.held_since >= timedelta(hours=HOLD_ALERT_HOURS):
        return _decision(crawl, "unresolved",
                         f"held since {crawl.held_since:%Y-%m-%d %H:%M} UTC, neither confirmed "
                         f"nor reverted after {HOLD_ALERT_HOURS:g} h: settle it with "
                         f"{settle_commands(crawl.crawl_id)}")
    return _decision(crawl, STAYS_HELD, "")


def settle_commands(crawl_id: str) -> str:
    """The commands a person settles a held crawl with."""
    return (f"`gpuprices accept {crawl_id} --reason '...'` or "
            f"`gpuprices reject {crawl_id} --reason '...'`")


def _decision(crawl: BatchCrawl, decision: str, reason: str) -> Decision:
    return Decision(crawl.crawl_id, crawl.source, decision, RULE + decision, reason)


def _first(crawl: BatchCrawl) -> HoldReason:
    return crawl.reasons[0]
