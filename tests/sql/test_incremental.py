"""Incremental models rebuild only the days with newly loaded observations, and equal a full
rebuild."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import duckdb

from pipelines.warehouse.db import ensure_schema
from pipelines.warehouse.sql_models import load_models, rebuild_from, run_model
from spiders.layout import SQL_DIR
from tests.helpers.observations import insert, obs, record_crawl

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _observe(con, crawl_id: str, at: datetime, price: str, offer: str = "a") -> None:
    record_crawl(con, crawl_id, "idc_x")
    insert(con, [obs(price, observed_at=at, source="idc_x", vendor="X", sku=offer,
                     gpu_variant=None, price_per_gpu_hour_usd=Decimal(price) / 7, url="u",
                     raw_ref="r", offer_id=offer, crawl_id=crawl_id)])


def _tables(con, models) -> dict[str, list]:
    return {m.table: sorted(con.execute(f"select * from {m.table}").fetchall(), key=repr)
            for m in models if m.materialized != "view"}


def test_incremental_update_equals_full_rebuild():
    con = duckdb.connect()
    ensure_schema(con)
    models = load_models(SQL_DIR)
    for day in range(3):
        for hour in (0, 12):
            _observe(con, f"c{day}-{hour}", T0 + timedelta(days=day, hours=hour),
                     str(60 + day + hour / 12))
    for model in models:
        run_model(con, model)
    daily = next(m for m in models if m.table == "intermediate.int_offer_daily")
    assert rebuild_from(con, daily) is None            # nothing new since the build

    _observe(con, "c-new", T0 + timedelta(days=2, hours=18), "55")   # a new hour on the last day
    assert rebuild_from(con, daily) == "2026-11-03"
    hows = {m.table: run_model(con, m) for m in models}
    assert hows["intermediate.int_offer_daily"] == "incremental from 2026-11-03"
    incremental = _tables(con, models)

    for model in models:
        run_model(con, model, full=True)
    assert _tables(con, models) == incremental
    [(close, low, n)] = con.execute(
        """select close_price_cny_per_gpu_hour, low_price_cny_per_gpu_hour, observations
        from intermediate.int_offer_daily where observed_date = date '2026-11-03'""").fetchall()
    assert (close, low, n) == (Decimal("55"), Decimal("55"), 3)
