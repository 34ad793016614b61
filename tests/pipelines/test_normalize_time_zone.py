"""A source's calendar is carried on each observation (issue 26): normalization writes the zone
its spider declares (`local_time_zone`), else the house rule of spiders/parsing/calendars.py, and
an offer in China counts Beijing days whatever its source; staging reads the column and applies
the same rule to rows from before it."""

from __future__ import annotations

import pytest

from pipelines.normalize import normalize_offer
from tests.helpers.observations import build_only, insert, obs, records

BASE = {"vendor": "V", "vendor_kind": "gpu_cloud", "sku": "a100", "gpu_count": "1",
        "gpu_text": "A100 80GB", "price_text": "$2.00/hr", "offer_kind": "on_demand",
        "url": "https://v.test/p", "raw_ref": "0" * 64, "observed_at": "2026-11-30T09:15:00Z"}


@pytest.mark.parametrize(("source", "region_text", "declared", "zone"), [
    ("lambda_cloud", "us-east-1", None, "UTC"),                 # the rule: UTC
    ("autodl_cn", "北京", None, "Asia/Shanghai"),                # a *_cn source
    ("lambda_cloud", "us-east-1", "Asia/Tokyo", "Asia/Tokyo"),  # the spider's own calendar
    ("lambda_cloud", "北京", None, "Asia/Shanghai"),             # an offer in China
])
def test_normalization_writes_the_offers_calendar(source, region_text, declared, zone):
    item = {**BASE, "source": source, "region_text": region_text}
    if declared:
        item["local_time_zone"] = declared
    assert normalize_offer(item)["local_time_zone"] == zone


@pytest.mark.parametrize(("written", "source", "zone"), [
    ("Asia/Tokyo", "cloud_test", "Asia/Tokyo"),     # as written
    (None, "cloud_test", "UTC"),                     # a row from before the column: the rule
    (None, "vendor_cn", "Asia/Shanghai"),
])
def test_staging_reads_the_zone_and_falls_back_to_the_rule(con, written, source, zone):
    insert(con, [obs(50, source=source, country="US", province_or_state="Virginia", city=None,
                     region_code="us-east-1", local_time_zone=written)])
    build_only(con, "staging.stg_observations")
    [row] = records(con, "select local_time_zone from staging.stg_observations")
    assert row["local_time_zone"] == zone
