"""The vendor's local calendar, the same rule as SQL staging (`dbt_like_sql/staging/
stg_observations.sql`): Beijing time for offers in China and for every Chinese vendor's source
(a source name ending in `_cn`), UTC elsewhere. Month-end effects follow this calendar, so a
Chinese vendor's month end starts at 16:00 UTC on the day before its last local days."""

from __future__ import annotations

import numpy as np
import pandas as pd

CHINA_TIME_ZONE = "Asia/Shanghai"
DEFAULT_TIME_ZONE = "UTC"


def local_time_zone(source: str | None, country: str | None) -> str:
    """The time zone of the vendor's billing calendar ('Asia/Shanghai' or 'UTC')."""
    if country == "CN" or (source or "").endswith("_cn"):
        return CHINA_TIME_ZONE
    return DEFAULT_TIME_ZONE


def month_end_window(hours: np.ndarray, days: int, time_zone: str) -> np.ndarray:
    """(T,) bool: epoch hour `hours` falls in the last `days` local days of its local month.

    Whole hours: for zones whose offset is whole hours (Beijing, UTC) an observation made within
    the hour has the same local day as its hour."""
    local = pd.to_datetime(np.asarray(hours, dtype=np.int64) * 3600, unit="s", utc=True
                           ).tz_convert(time_zone)
    return np.asarray(local.day > local.days_in_month - days, dtype=bool)
