"""The savings the guides name, each with its evidence or "no evidence yet": monthly terms at
their break-even (20 % for one card, 40 %+ for a multi-card whole machine: a monthly price pays
off once the hours a month pass (1 - saving) × 730), spot for work that checkpoints, and the
month-end, night and holiday prices the signal marts measure, with their verdicts (marts.
market_claims, and marts.month_end_dip for the answer's own card and vendor)."""

from __future__ import annotations

from pipelines.advisor.efficiency import cited_claims, efficiency

# The guides' monthly saving by machine: a multi-card whole machine saves 40 %+ (guide 004).
MULTI_CARD_MONTHLY_SAVING = 0.40
# The scorecard's claims each saving cites (marts.market_claims claim_id).
SIGNAL_CLAIMS = {"month-end": "month_end_dips", "night": "off_peak_discounts",
                 "holiday": "holiday_promotions"}


def signal_evidence_from_db(con) -> dict:
    """{"claims": market_claims rows by claim_id, "month_end": {(vendor, gpu_model):
    (dip_verdict, strength_pct)}} (empty where a mart is missing)."""
    import duckdb

    out: dict = {"claims": {}, "month_end": {}}
    try:
        cursor = con.execute("select * from marts.market_claims")
        names = [d[0] for d in cursor.description]
        out["claims"] = {r["claim_id"]: r for r in
                         (dict(zip(names, row, strict=True)) for row in cursor.fetchall())}
        rows = con.execute(
            "select vendor, gpu_model, any_value(dip_verdict), any_value(strength_pct) "
            "from marts.month_end_dip group by all").fetchall()
        out["month_end"] = {(v, g): (verdict, strength) for v, g, verdict, strength in rows}
    except duckdb.CatalogException:   # no signal marts yet: every saving says no evidence
        pass
    return out


def _claim(claims: dict, claim_id: str) -> str:
    row = claims.get(claim_id)
    if not row or row.get("median_value") is None:
        return "no evidence yet"
    return (f"measured median {float(row['median_value']):.3g} over {row.get('offers')} offers "
            f"of {row.get('vendors')} vendors: {row.get('verdict')}")


def savings_lines(advice) -> list[str]:
    """One line per saving, for the answer (advice.answer) and the workload."""
    from pipelines.advisor.inputs import term_lines

    w, answer = advice.workload, advice.answer
    signals = getattr(advice, "signals", None) or {}
    claims = signals.get("claims", {})
    month_h = float(efficiency().rules["month_hours"])
    monthly = cited_claims()["monthly_saving"]
    multi = answer is not None and answer.cards >= 2 and not answer.offer.is_slice
    saving = MULTI_CARD_MONTHLY_SAVING if multi else (monthly.expected_low or 0) / 100
    used = w.hours_per_day * min(w.days, 30)
    if answer is not None:
        used = min(used, answer.wall_hours)
    break_even = (1 - saving) * month_h
    lines = [f"monthly: pays off above {break_even:,.0f} h a month (a {saving:.0%} saving on "
             f"{month_h:g} h, the guides' figure for "
             f"{'a multi-card whole machine' if multi else 'one card'}); this work uses "
             f"{used:,.0f} h in its first 30 days: "
             f"{'take the monthly term' if used >= break_even else 'stay hourly or daily'} "
             f"({monthly.claim_id}: {_claim(claims, monthly.claim_id)})"]
    if answer is not None and answer.alternatives:
        lines.append("the answer's rental under its other terms: " + ", ".join(answer.alternatives))
    spot = cited_claims()["spot_share"]
    lines.append(("spot: the work checkpoints (--interruptible), spot allowed" if w.interruptible
                  else "spot: not for work that cannot be interrupted (--interruptible)")
                 + f" ({spot.claim_id}: {_claim(claims, spot.claim_id)})")
    for name, claim_id in SIGNAL_CLAIMS.items():
        lines.append(f"{name} prices: {claim_id}: {_claim(claims, claim_id)}")
    if answer is not None:
        own = signals.get("month_end", {}).get((answer.offer.vendor, answer.offer.gpu_model))
        lines.append(f"month-end for {answer.offer.vendor} {answer.offer.gpu_model}: "
                     + (f"{own[0]}" + (f" (strength {float(own[1]):.2g} %)"
                                       if own[1] is not None else "") if own
                        else "no evidence yet"))
    lines += term_lines(w, answer, getattr(advice, "offers", ()) or ())
    return lines
