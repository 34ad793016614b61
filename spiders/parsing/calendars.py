"""A vendor's billing calendar: the time zone its days and months are counted in (a month-end
discount ends at the vendor's midnight, not UTC's).

A source's zone is its spider's `local_time_zone` (spiders/base/spider.py). A spider that declares
none follows the house's naming of sources: a Chinese vendor's source is named `*_cn` and bills
in Beijing time, every other one in UTC. An offer in China follows Beijing time whatever its
source. Normalization writes the offer's zone on its observation; staging
(dbt_like_sql/staging/stg_observations.sql) reads it, and applies the same rule to rows from
before the column; the simulator's calendar is this one (pipelines/simulate/calendar.py).
Zones must be UTC or east of it: the incremental local-day models rebuild from UTC days.
"""

from __future__ import annotations

CHINA_TIME_ZONE = "Asia/Shanghai"
DEFAULT_TIME_ZONE = "UTC"
CHINA_SOURCE_SUFFIX = "_cn"


def source_time_zone(source: str | None, declared: str | None = None) -> str:
    """The zone of a source's calendar: the one its spider declares, else Beijing time for a
    Chinese vendor's source (named *_cn), else UTC."""
    if declared:
        return declared
    return CHINA_TIME_ZONE if (source or "").endswith(CHINA_SOURCE_SUFFIX) else DEFAULT_TIME_ZONE


def offer_time_zone(country: str | None, source_zone: str) -> str:
    """The zone an offer's days and months are counted in: Beijing time for an offer in China,
    else its source's."""
    return CHINA_TIME_ZONE if country == "CN" else source_zone
