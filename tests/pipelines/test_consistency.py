"""Consistency across rows: a row whose per-GPU price is far (> 4x) from the same vendor's single
card of the same model, the signature of a GPU count or per-card misread, is quarantined at stage
"consistency" with both prices in the reason; real spreads (slices, servers, spot) pass."""

import json
from decimal import Decimal

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource

from pipelines.defs.normalize import observation_batch
from pipelines.normalize import CONSISTENCY_FACTOR, Quarantined, inconsistent_rows, normalize_offer
from pipelines.normalize.batch import normalize_pending
from pipelines.warehouse.db import ensure_schema


def row(price: str, count: int = 1, fraction: str = "1", kind: str = "on_demand",
        source: str = "idc_x", model: str = "H800-80GB") -> dict:
    return {"source": source, "gpu_model": model, "offer_kind": kind, "gpu_count": count,
            "gpu_fraction": Decimal(fraction), "price_per_gpu_hour_cny": Decimal(price)}


# a vendor's single H800 card listed hourly, daily and monthly (per GPU-hour: 40, 38, 30)
SINGLES = [row("40"), row("38"), row("30")]

CONSISTENT = [
    ("8-GPU server at a discount", [*SINGLES, row("33", count=8)]),
    ("slice at a premium", [*SINGLES, row("70", fraction="0.25")]),
    ("spot is compared with spot only", [*SINGLES, row("8", kind="spot")]),
    ("another vendor's price does not count", [*SINGLES, row("300", source="idc_y")]),
    ("another card does not count", [*SINGLES, row("300", model="A100-80GB")]),
    ("just inside the factor", [*SINGLES, row(str(38 * CONSISTENCY_FACTOR), count=8)]),
    # two single cards 8x apart: which one is wrong is unknown, the bounds still apply to both
    ("two single cards only", [row("40"), row("320")]),
    ("a server without any single card", [row("33", count=8), row("300", count=4)]),
]


@pytest.mark.parametrize(("case", "rows"), CONSISTENT, ids=[c for c, _ in CONSISTENT])
def test_real_spreads_are_consistent(case, rows):
    assert inconsistent_rows(rows) == {}


INCONSISTENT = [
    # "8卡 H800" read as one card: the server's 320 CNY/h stays on one GPU
    ("GPU count read as 1", [*SINGLES, row("320")], 3, "320 CNY per GPU-hour is 8.4x"),
    ("GPU count read as 1 on a server row", [*SINGLES, row("304", count=1)], 3, "8.0x"),
    # "￥8000/月/卡" on an 8-card row divided by 8 again
    ("per-card price divided again", [*SINGLES, row("4.75", count=8)], 3, "4.75 CNY per"),
    ("slice fraction lost", [*SINGLES, row("2", fraction="0.125")], 3, "19.0x"),
]


@pytest.mark.parametrize(("case", "rows", "bad", "words"), INCONSISTENT,
                         ids=[c for c, *_ in INCONSISTENT])
def test_misreads_are_found_and_named(case, rows, bad, words):
    reasons = inconsistent_rows(rows)
    assert list(reasons) == [bad]   # only the misread row, never the cards it is compared with
    assert words in reasons[bad]
    assert "single H800-80GB card at 38.00 CNY per GPU-hour" in reasons[bad]   # both prices
    assert "misread" in reasons[bad]


BASE_ITEM = {"source": "idc_x", "vendor": "X IDC", "vendor_kind": "idc", "region_text": "北京",
             "offer_kind": "on_demand", "available": True, "url": "https://idc.test/price",
             "raw_ref": "0" * 64, "observed_at": "2026-11-30T09:00:00Z"}
ITEMS = [  # a cheap H800 card by the hour, day and month, and a server misread as one card:
    # 90 CNY/h passes the H800 bounds, only the vendor's own single card shows it is 8 cards
    {"sku": "h800 | 1 | hour", "gpu_text": "H800 80G SXM5 单卡", "gpu_count": "1",
     "price_text": "¥12/时", "billing_period": "hour"},
    {"sku": "h800 | 1 | day", "gpu_text": "H800 80G SXM5 单卡", "gpu_count": "1",
     "price_text": "¥288/天", "billing_period": "day"},
    {"sku": "h800 | 1 | month", "gpu_text": "H800 80G SXM5 单卡", "gpu_count": "1",
     "price_text": "¥8760/月", "billing_period": "month"},
    {"sku": "h800 | 8 | hour", "gpu_text": "H800 80G SXM5 整机", "gpu_count": "1",
     "price_text": "¥90/时", "billing_period": "hour"},
]


def _pending(items: list[dict]) -> list[tuple]:
    return [("c1", n, "idc_x", json.dumps({**BASE_ITEM, **item})) for n, item in enumerate(items)]


def test_normalize_pending_quarantines_the_misread_row():
    batch, quarantined = normalize_pending(_pending(ITEMS))
    assert sorted(batch["sku"]) == ["h800 | 1 | day", "h800 | 1 | hour", "h800 | 1 | month"]
    [q] = quarantined
    assert (q["stage"], q["item_no"], q["crawl_id"], q["source"]) == (
        "consistency", 3, "c1", "idc_x")
    assert "90.000000 CNY per GPU-hour" in q["reason"] and "at 12.00 CNY" in q["reason"]
    assert json.loads(q["raw_item"])["sku"] == "h800 | 8 | hour"


def test_normalize_pending_keeps_a_consistent_batch():
    items = [*ITEMS[:3], {**ITEMS[3], "gpu_count": "8"}]   # 11.25 per GPU-hour
    batch, quarantined = normalize_pending(_pending(items))
    assert quarantined == [] and len(batch) == 4


def test_the_misread_row_lands_in_quarantine_not_in_the_batch(tmp_path):
    db = DuckDBResource(database=str(tmp_path / "prices.db"))
    with db.get_connection() as con:
        ensure_schema(con)
        con.execute("insert into raw.crawls (crawl_id, source, mode, passed, offers) "
                    "values ('c1', 'idc_x', 'replay', true, 4)")
        con.executemany("insert into raw.offers values (?, ?, ?, ?)", _pending(ITEMS))
    assert dg.materialize([observation_batch], resources={"duckdb": db}).success
    with duckdb.connect(db.database, read_only=True) as con:
        assert con.execute("select count(*) from observation_batch").fetchone()[0] == 3
        assert con.execute("select item_no, stage from quarantine").fetchall() == [
            (3, "consistency")]


# --- the per-card bounds catch the same misread of a typically priced card ----------------------

@pytest.mark.parametrize(("gpu_text", "server_price"), [
    ("H800 80G SXM5 整机", "¥360/时"),      # 8 x 45 CNY/h (Jiangsu's claimed H800 price)
    ("A100 80G SXM4 整机", "¥160/时"),      # 8 x 20 CNY/h
    ("RTX 4090 24G 整机", "¥16/时"),        # 8 x 2 CNY/h
    ("NVIDIA A800 80GB", "¥100/时"),        # 8 x 12.5 CNY/h
])
def test_an_8_gpu_server_read_as_one_card_is_out_of_bounds(gpu_text, server_price):
    item = {**BASE_ITEM, "sku": "s", "gpu_text": gpu_text, "price_text": server_price,
            "billing_period": "hour"}
    with pytest.raises(Quarantined) as exc:
        normalize_offer({**item, "gpu_count": "1"})
    assert exc.value.stage == "bounds" and "outside the plausible range" in exc.value.reason
    # read with its 8 cards, the same row is a plausible observation
    per_gpu = normalize_offer({**item, "gpu_count": "8"})["price_per_gpu_hour_cny"]
    assert per_gpu * 8 == Decimal(server_price[1:-2])
