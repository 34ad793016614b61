"""The vendor's local calendar, the rule of spiders/parsing/calendars.py (which staging,
`dbt_like_sql/staging/stg_observations.sql`, applies too): Beijing time for offers in China and
for every Chinese vendor's source, UTC elsewhere, unless the offer states its zone. Month-end
effects follow this calendar, so a Chinese vendor's month end starts at 16:00 UTC on the day
before its last local days."""

from __future__ import annotations

import numpy as np
import pandas as pd

from spiders.parsing.calendars import (
    CHINA_TIME_ZONE,
    DEFAULT_TIME_ZONE,
    offer_time_zone,
    source_time_zone,
)

__all__ = ["CHINA_TIME_ZONE", "DEFAULT_TIME_ZONE", "local_time_zone", "month_end_window"]


def local_time_zone(source: str | None, country: str | None,
                    declared: str | None = None) -> str:
    """The time zone of the vendor's billing calendar ('Asia/Shanghai' or 'UTC'); `declared`:
    the zone the offer carries (its spider's local_time_zone), if any."""
    return offer_time_zone(country, source_time_zone(source, declared))


def month_end_window(hours: np.ndarray, days: int, time_zone: str) -> np.ndarray:
    """(T,) bool: epoch hour `hours` falls in the last `days` local days of its local month.

    Whole hours: for zones whose offset is whole hours (Beijing, UTC) an observation made within
    the hour has the same local day as its hour."""
    local = pd.to_datetime(np.asarray(hours, dtype=np.int64) * 3600, unit="s", utc=True
                           ).tz_convert(time_zone)
    return np.asarray(local.day > local.days_in_month - days, dtype=bool)
