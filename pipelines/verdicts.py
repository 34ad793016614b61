"""The three verdicts every signal and claim gives, in one place: the marts write these words
(tests/sql/test_verdicts.py checks every verdict column against VERDICTS), and the CLI, the
report and the API read them from here.

A verdict never says "does not hold" when it means "not yet": `NOT_ENOUGH_EVIDENCE` is what a
signal or claim says until its evidence can tell, with the evidence that would be needed beside it
(the mart's `*_needed` column)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
NOT_ENOUGH_EVIDENCE = "not enough evidence"
VERDICTS = (HOLDS, DOES_NOT_HOLD, NOT_ENOUGH_EVIDENCE)

# How each verdict is shown: rich markup in the terminal, a CSS class in the report.
TERMINAL_MARKUP = {HOLDS: "[green bold]holds[/]", DOES_NOT_HOLD: "[red bold]does not hold[/]",
                   NOT_ENOUGH_EVIDENCE: "[yellow]not enough evidence[/]"}
CSS_CLASSES = {HOLDS: "verdict-holds", DOES_NOT_HOLD: "verdict-fails",
               NOT_ENOUGH_EVIDENCE: "verdict-nodata"}


def css_class(verdict: str | None) -> str:
    """The report's classes of a verdict's cell (an unknown word is shown as unknown)."""
    return f"verdict {CSS_CLASSES.get(verdict, 'verdict-unknown')}"


def tally(verdicts: Iterable[str]) -> str:
    """'3 hold, 1 does not hold, 15 not enough evidence'."""
    counts = Counter(verdicts)
    holds, fails = counts[HOLDS], counts[DOES_NOT_HOLD]
    return (f"{holds} {HOLDS if holds == 1 else 'hold'}, "
            f"{fails} {DOES_NOT_HOLD if fails == 1 else 'do not hold'}, "
            f"{counts[NOT_ENOUGH_EVIDENCE]} {NOT_ENOUGH_EVIDENCE}")
