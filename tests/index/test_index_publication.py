"""Publication of the price index (pipelines/index/chain.py, publish.py): a published row is
never rewritten, whatever arrives later (late data for a published day, a crawl rejected by the
checks, history loaded from an archive before the first day); new days chain on from the last
published row; each row's content hash is recomputable."""

from __future__ import annotations

import math
from datetime import date, timedelta

import pytest

from pipelines.index import INDEX_COLUMNS, content_hash, read_rules
from tests.helpers.index_history import (
    PUBLISHED_AT,
    START,
    Offer,
    connect,
    flat,
    load,
    publish,
    series_rows,
)
from tests.helpers.observations import insert

SERIES = "A100-80GB|china|on_demand|hour"


def as_text(con) -> list[tuple]:
    """Every published row, every column cast to text: what 'byte-identical' compares."""
    columns = ", ".join(f"{c}::varchar" for c in INDEX_COLUMNS)
    return con.execute(f"select {columns} from marts.price_index "
                       "order by series_id, index_date").fetchall()


def market(days: int) -> list[Offer]:
    return [Offer("Alpha", "a", flat(10, days)), Offer("Bravo", "b", flat(12, days)),
            Offer("Charlie", "c", flat(11, days))]


def test_a_second_publication_adds_nothing():
    con = connect()
    load(con, market(5))
    first = publish(con)
    assert first.appended == 4 and first.rows[SERIES] == 4
    before = as_text(con)
    again = publish(con, PUBLISHED_AT + timedelta(hours=1))
    assert again.appended == 0 and as_text(con) == before


def test_late_data_never_rewrites_a_published_day_and_enters_the_next_change():
    con = connect()
    load(con, market(5))                      # days 1-5 seen, 1-4 published
    publish(con)
    before = as_text(con)
    # late: day 4 gains Alpha's second offer at 8 (it was listed at 8 on day 3 too), and day 5
    # and 6 arrive; Alpha cuts its first offer to 9 on day 5
    late = Offer("Alpha", "a2", [None, None, 8, 8, 8, 8]).rows()
    day5 = Offer("Alpha", "a", [None] * 4 + [9, 9]).rows()
    rest = [row for o in (Offer("Bravo", "b", [None] * 5 + [12]),
                          Offer("Charlie", "c", [None] * 5 + [11])) for row in o.rows()]
    con.execute("delete from observations where sku = 'a' and observed_at >= ?",
                [day5[0]["observed_at"]])
    insert(con, late + day5 + rest)
    report = publish(con, PUBLISHED_AT + timedelta(days=1))
    after = as_text(con)
    assert after[:len(before)] == before                  # the published days, byte for byte
    assert report.rows[SERIES] == 1                       # day 5 (day 6 is open)
    rows = series_rows(con, SERIES)
    day4, day5_row = rows[3], rows[4]
    assert day5_row["chained"] == "forward"
    # day 5's change: Alpha's first offer (a: 10 -> 9; a2 joined on day 3, a newcomer still
    # collecting its entry closes), then the vendors' mean
    alpha = math.log(0.9)
    assert day5_row["change_pct"] == pytest.approx(100 * math.expm1(alpha / 3), abs=1e-3)
    assert day5_row["chain_level"] == pytest.approx(day4["chain_level"] * math.exp(alpha / 3),
                                                    rel=1e-6)


def test_a_rejected_crawl_leaves_the_index_as_it_was():
    # a crawl the checks rejected lands in raw.crawls as failed, and none of its offers become
    # observations: the next publication finds nothing new
    con = connect()
    load(con, market(5))
    publish(con)
    before = as_text(con)
    con.execute("insert into raw.crawls (crawl_id, source, mode, passed, status, offers) "
                "values ('rejected', 'src_alpha', 'replay', false, 'failed', 3)")
    assert publish(con, PUBLISHED_AT + timedelta(days=1)).appended == 0
    assert as_text(con) == before


def test_history_before_the_first_day_extends_the_series_backwards():
    con = connect()
    later = [Offer(o.vendor, o.sku, [None] * 3 + [p * 0.9 for p in o.prices[3:]])
             for o in market(8)]                          # days 4-8 at 90 %
    load(con, later)
    publish(con)
    before = as_text(con)
    base = series_rows(con, SERIES)[0]
    assert base["index_date"] == START + timedelta(days=3) and base["chained"] == "base"
    # an archive brings days 1-3 at full price (and day 4's step down)
    earlier = [Offer(o.vendor, o.sku, o.prices[:3]) for o in market(8)]
    load(con, earlier)
    report = publish(con, PUBLISHED_AT + timedelta(days=1))
    assert report.rows[SERIES] == 3
    rows = series_rows(con, SERIES)
    assert [r["chained"] for r in rows[:3]] == ["backward"] * 3
    assert {r["base_date"] for r in rows} == {base["index_date"]}
    assert rows[0]["index_level"] == pytest.approx(base["index_level"] / 0.9, rel=1e-6)
    assert set(as_text(con)) >= set(before)


def test_a_new_series_starts_at_its_own_base():
    con = connect()
    load(con, market(4))
    publish(con)
    h100 = [Offer(v, f"h-{v}", flat(30 + i, 3), overrides={"gpu_model": "H800-80GB"})
            for i, v in enumerate(("Alpha", "Bravo"))]
    load(con, h100, start=START + timedelta(days=3))
    publish(con, PUBLISHED_AT + timedelta(days=1))
    rows = series_rows(con, "H100/H800 SXM|china|on_demand|hour")
    assert rows[0]["base_date"] == START + timedelta(days=3)
    assert rows[0]["index_level"] == 30.5


def test_every_row_carries_its_method_and_a_recomputable_hash():
    con = connect()
    load(con, market(4))
    publish(con)
    rows = series_rows(con, SERIES)
    for row in rows:
        assert row["method_version"] == read_rules(con).method_version
        values = {k: (float(v) if isinstance(v, float) else v) for k, v in row.items()}
        assert content_hash(values) == row["content_hash"]
    changed = {**rows[1], "index_level": rows[1]["index_level"] + 0.01}
    assert content_hash(changed) != rows[1]["content_hash"]


def test_the_open_day_is_never_published():
    con = connect()
    load(con, market(3))
    publish(con)
    days = [r["index_date"] for r in series_rows(con, SERIES)]
    assert days == [START, START + timedelta(days=1)]
    assert date(2026, 10, 3) not in days
