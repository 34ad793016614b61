"""The guides' rules evaluated per option, and the verdicts restated as the answer's.

An option a rule refuses keeps its place below the line with the rule that refused it, never at
rank 1: a card over 90 % full is tight (add cards); a 72B-class fine-tune wants at least 80 GB per
card; online inference with a p99 below 50 ms at peak is not run shared; a slice (a shared card)
where the workload's verdict is a whole card, or exclusive use. The thresholds are
efficiency.toml's [rules].

The verdicts printed at the top are the answer's: each rule's verdict for the workload is restated
for the option at rank 1 (a slice is enough, but the whole card finishes the work for less: the
verdict is the whole card, and says why), so they never contradict each other or the answer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pipelines.advisor.configurations import Option
from pipelines.advisor.decision_rules import RULES, Verdict
from pipelines.advisor.efficiency import efficiency
from pipelines.advisor.workload import Workload

TERM_PERIODS = ("week", "month", "quarter", "year")


def refusals(option: Option, workload: Workload, verdicts: Sequence[Verdict]) -> tuple[str, ...]:
    """The rules that keep `option` from rank 1, in words with the numbers (empty: none)."""
    r = efficiency().rules
    by_rule = {v.rule: v.verdict for v in verdicts}
    out: list[str] = []
    vram = option.vram_gb_per_card
    share = option.need_gb_per_card / vram if vram else 1.0
    if share > r["tight_memory_share"]:
        out.append(f"memory headroom: {share:.0%} of the card's {vram:g} GB full (over "
                   f"{r['tight_memory_share']:.0%} is tight: add cards)")
    large = workload.params >= r["large_finetune_params"] and workload.training
    if large and vram < r["large_finetune_card_gb"]:
        out.append(f"per-card memory: a {workload.params / 1e9:g}B fine-tune wants at least "
                   f"{r['large_finetune_card_gb']:g} GB per card, not {vram:g} GB")
    shared = option.offer.is_slice
    if shared and workload.p99_ms is not None and workload.p99_ms < r["latency_p99_ms"]:
        out.append(f"latency: p99 {workload.p99_ms:g} ms < {r['latency_p99_ms']:g} ms at peak "
                   "QPS: not shared")
    if shared and by_rule.get(RULES[0]) == "whole card":
        out.append("whole card vs slice: the workload needs a whole card")
    if shared and by_rule.get(RULES[1]) == "exclusive":
        out.append("exclusive vs shared: the workload needs exclusive use (a slice is shared)")
    return tuple(out)


def _cheapest(options: Sequence[Option], slices: bool) -> Option | None:
    return next((o for o in options if o.offer.is_slice == slices and not o.refused_by), None)


def answer_verdicts(verdicts: Sequence[Verdict], options: Sequence[Option]) -> list[Verdict]:
    """Each rule's verdict restated for the answer (options[0] when no rule refuses it); with no
    answer, the workload's verdicts as they are."""
    answer = options[0] if options and not options[0].refused_by else None
    if answer is None:
        return list(verdicts)
    out = []
    for v in verdicts:
        figures = {**v.figures, "rule_verdict": v.verdict}
        verdict, because = _settle(v, answer, options)
        out.append(replace(v, verdict=verdict, because=because, figures=figures))
    return out


def _settle(v: Verdict, answer: Option, options: Sequence[Option]) -> tuple[str, str]:
    """(verdict, because) of one rule for the answer."""
    is_slice = answer.offer.is_slice
    other = _cheapest(options, not is_slice)
    versus = (f"; it finishes the work for {answer.cost_cny:,.0f} CNY against "
              f"{other.cost_cny:,.0f} CNY on the cheapest {'whole card' if is_slice else 'slice'}"
              if other else "")
    if v.rule == RULES[0]:
        verdict = "slice" if is_slice else "whole card"
        if v.verdict.startswith("slice") and not is_slice:
            return verdict, f"a slice would do ({v.because}){versus or '; no slice fits'}"
        return verdict, v.because + (versus if v.verdict.startswith("slice") else "")
    if v.rule == RULES[1]:
        verdict = "shared" if is_slice else "exclusive"
        if v.verdict == "shared" and not is_slice:
            return verdict, f"shared would do ({v.because}){versus or '; no slice fits'}"
        return verdict, v.because
    if v.rule == RULES[2]:
        if answer.parallelism == "independent runs":
            return (f"single card per run ({answer.rentals} concurrent runs)",
                    f"{v.because}; each run on its own card or slice")
        if answer.parallelism == "replicas":
            return (f"single card per replica ({answer.rentals} replicas)",
                    f"{v.because}; replicas carry one A100-80GB's load")
        if answer.cards == 1:
            return "single card", v.because
        verdict = f"multi-GPU ({answer.parallelism}, {answer.cards} cards)"
        if v.verdict == "single card":
            return verdict, (f"{v.because}; but no single card finishes within the deadline for "
                             f"less: {answer.cards} cards, {answer.interconnect}")
        return verdict, v.because + (f"; {answer.interconnect}" if answer.interconnect else "")
    if v.rule == RULES[3]:
        spot = answer.offer.offer_kind == "spot"
        if v.verdict == "allowed":
            return ("allowed: the answer is spot" if spot else
                    "allowed, not chosen: on-demand finishes for less"), v.because
        return v.verdict, v.because
    if v.rule == RULES[4]:
        period = answer.offer.billing_period
        verdict = "monthly" if period in TERM_PERIODS else "hourly (or daily)"
        note = f"; the answer is billed per {period}"
        if verdict != v.verdict:
            note += f" (the rule alone says {v.verdict}: that term is not the cheapest way to " \
                    "finish here)"
        return verdict, v.because.split("; today's cheapest")[0] + note
    return v.verdict, v.because
