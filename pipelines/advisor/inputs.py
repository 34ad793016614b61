"""What the guides say to measure, as the answer states it: each input given or absent (an absent
one is said, with what it would change), and, with --utilisation and --project-months, hourly
cloud against a monthly or yearly term (bare metal, a dedicated host) with the arithmetic."""

from __future__ import annotations

import math
from collections.abc import Iterable

from pipelines.advisor.configurations import Option
from pipelines.advisor.efficiency import efficiency
from pipelines.advisor.offers import Offer
from pipelines.advisor.workload import Workload


def input_notes(workload: Workload) -> list[str]:
    """One line per input the guides ask for that was not given (the memory line is the
    estimate's own: memory.MEMORY_NOT_MEASURED)."""
    w, r = workload, efficiency().rules
    notes = []
    if w.runs == 1:
        notes.append("one run: for a parameter search give --runs N (N times the work)")
    if w.deadline_days is None:
        notes.append("no --deadline: ranked by the cost of finishing, however long it takes"
                      + (f" (--gpu-hours: within --days {w.days})" if w.gpu_hours else ""))
    if not w.interruptible:
        notes.append("not --interruptible: no spot (the guides: only for work that checkpoints)")
    if w.task == "inference" and (w.qps is None or w.p99_ms is None):
        notes.append(f"no --qps / --p99-ms: latency not checked (the guides: p99 < "
                     f"{r['latency_p99_ms']:g} ms at peak QPS → not shared)")
    if w.utilisation is None or w.project_months is None:
        notes.append("no --utilisation / --project-months: hourly cloud against a monthly or "
                     "yearly term not weighed")
    return notes


def _cheapest(offers: Iterable[Offer], like: Offer, period: str) -> Offer | None:
    same = [o for o in offers if o.billing_period == period and o.gpu_model == like.gpu_model
            and o.gpu_count == like.gpu_count and o.gpu_fraction == like.gpu_fraction
            and o.offer_kind == like.offer_kind]
    return min(same, key=lambda o: o.instance_price_cny, default=None)


def term_lines(workload: Workload, answer: Option | None, offers: Iterable[Offer]) -> list[str]:
    """Hourly cloud vs a monthly term vs a yearly one for the answer's configuration, at the
    given utilisation over the project, with the arithmetic; nothing without both inputs."""
    w = workload
    if answer is None or w.utilisation is None or w.project_months is None:
        return []
    offers = list(offers)
    month_h = float(efficiency().rules["month_hours"])
    busy = w.utilisation * month_h * w.project_months
    rent = answer.rent_per_hour_cny
    lines = [f"hourly cloud: {w.utilisation:.0%} × {month_h:g} h × {w.project_months:g} months "
             f"= {busy:,.0f} h × {rent:,.2f} CNY/h = {busy * rent:,.0f} CNY"]
    rentals = answer.rentals
    for period, months in (("month", 1.0), ("year", 12.0)):
        term = _cheapest(offers, answer.offer, period)
        if term is None:
            lines.append(f"{period}ly term: no real {period}ly price of {answer.config} today "
                         "(no evidence yet)")
            continue
        terms = math.ceil(w.project_months / months - 1e-9)
        cost = terms * term.instance_price_cny * rentals
        break_even = term.instance_price_cny * rentals / months / (month_h * rent)
        lines.append(f"{period}ly term ({term.vendor}): {terms} × "
                     f"{term.instance_price_cny * rentals:,.0f} CNY = {cost:,.0f} CNY; it pays "
                     f"off above {break_even:.0%} utilisation")
    return lines
