"""What one rental of an offer costs for a usage pattern under its billing period (hourly,
daily, or per started week, month or year)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from pipelines.advisor.offers import Offer

# Billing terms: a daily rental is paid per day used, a weekly/monthly/yearly one per started
# term of 7/30/365 days (the monthly price per GPU-hour uses 730 h; the rental term is 30 days).
TERM_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


@dataclass(frozen=True)
class Bill:
    units: float          # hours, days, weeks, months or years paid
    cost_cny: float       # for one rental of the offer
    text: str             # "56 h × 15.00 CNY"


def bill(offer: Offer, hours: float, days: int) -> Bill | None:
    """One rental of `offer` used `hours` hours spread over `days` days. Hourly: the hours used;
    daily: each day used; weekly/monthly/yearly: each started 7/30/365-day term. None: a billing
    period the advisor does not know."""
    price = offer.instance_price_cny
    period = offer.billing_period
    if period == "hour":
        units = hours
        return Bill(units, units * price, f"{units:,.4g} h × {price:,.2f} CNY/h")
    if period in TERM_DAYS:
        units = math.ceil(days / TERM_DAYS[period] - 1e-9)
        return Bill(units, units * price, f"{units} {period}{'s' if units != 1 else ''} × "
                                          f"{price:,.2f} CNY/{period}")
    return None
