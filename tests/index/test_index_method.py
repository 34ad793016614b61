"""The index method on hand-made histories (pipelines/index/, docs/price-index.md): matched
offers, vendors weighted equally, relatives beyond the bound, held and stale closes, entries,
evidence, the bootstrap's interval. Each history is loaded as observations and goes through the
SQL models and the publication as a run's would."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.index.method import ONE_VENDOR, vendor_weights
from pipelines.index.publish import read_rules
from pipelines.verdicts import NOT_ENOUGH_EVIDENCE
from tests.helpers.index_history import Offer, connect, flat, load, publish, series_rows
from tests.helpers.observations import build_only, insert

SERIES = "A100-80GB|china|on_demand|hour"


def rows_of(offers: list[Offer], series: str = SERIES) -> list[dict]:
    con = connect()
    load(con, offers)
    publish(con)
    return series_rows(con, series)


def levels(rows: list[dict]) -> list[float | None]:
    return [r["index_level"] for r in rows]


def test_vendors_weigh_the_same_whatever_their_listings():
    # Alpha lists ten offers and cuts them all 10 % on day 2; Bravo's one offer stays put: the
    # day's change is the geometric mean of the two vendors' changes, sqrt(0.9), not 10:1
    alpha = [Offer("Alpha", f"a{i}", [10, 10, 9, 9, 9]) for i in range(10)]
    bravo = [Offer("Bravo", "b0", flat(20, 5))]
    rows = rows_of(alpha + bravo)
    assert [r["index_date"].day for r in rows] == [1, 2, 3, 4]     # day 5 is still open
    assert rows[2]["change_pct"] == pytest.approx(100 * (math.sqrt(0.9) - 1), abs=1e-3)
    assert rows[2]["vendors_matched"] == 2 and rows[2]["offers_matched"] == 11
    assert rows[3]["index_level"] == pytest.approx(rows[0]["index_level"] * math.sqrt(0.9),
                                                   rel=1e-5)


def test_the_base_day_anchors_the_level_at_its_listing_median():
    rows = rows_of([Offer("Alpha", "a", flat(10, 4)), Offer("Bravo", "b", flat(14, 4)),
                    Offer("Charlie", "c", flat(30, 4))])
    base = rows[0]
    assert base["chained"] == "base" and base["change_pct"] is None
    assert base["index_level"] == base["base_level"] == base["listing_median"] == 14
    assert all(r["index_level"] == 14 and r["base_date"] == base["index_date"] for r in rows)


def test_cheap_offers_that_come_and_go_move_the_median_not_the_index():
    # the market's two offers never change price; a cheap offer is listed every other pair of
    # days: the listing median swings, the index does not (an entering offer needs two days)
    steady = [Offer("Alpha", "a", flat(10, 9)), Offer("Bravo", "b", flat(12, 9))]
    cheap = [Offer("Charlie", "c", [5, 5, None, None, 5, 5, None, None, 5]),
             Offer("Delta", "d", [5, 5, None, None, 5, 5, None, None, 5])]
    rows = rows_of(steady + cheap)
    assert set(levels(rows)) == {rows[0]["index_level"]}
    medians = {r["listing_median"] for r in rows}
    assert medians == {7.5, 11.0}                     # with and without the cheap pair


def test_a_newcomer_enters_at_the_mean_of_its_first_closes():
    # Charlie joins on day 3 and swings 4 <-> 16 for its entry closes (geometric mean 8), then
    # lists 8: it enters against its mean, so its swings never move the index; gpi-2 took its
    # first price (4) as its level and kept its swing into 8 (+100 %) for good
    entry = read_rules_of(connect()).entry_days
    swings = [4, 16] * (entry // 2) + [8] * (entry % 2)
    days = 2 + entry + 4
    offers = [Offer("Alpha", "a", flat(10, days)), Offer("Bravo", "b", flat(10, days)),
              Offer("Charlie", "c", [None, None, *swings, 8, 8, 16, 16])]
    rows = rows_of(offers)
    assert [r["offers_matched"] for r in rows[2:2 + entry]] == [2] * entry   # collecting
    assert rows[2 + entry]["offers_matched"] == 3                          # entered
    assert {r["index_level"] for r in rows[:-1]} == {10}
    # after its entry, its moves count at its share: 8 -> 16 on the last closed day is +100 %
    assert rows[-1]["change_pct"] == pytest.approx(100 * (2 ** (1 / 3) - 1), abs=1e-3)


@pytest.mark.parametrize("typo", [10.0, 100.0, 0.1, 7.0, 1 / 7])
def test_a_mistyped_price_is_an_error_not_a_change(typo):
    # two vendors make no judged market (no held observation): the bound alone catches the typo,
    # on the relative into it and on the one out of it
    alpha = [Offer("Alpha", "a", [10, 10, 10 * typo, 10, 10, 10]),
             Offer("Alpha", "a2", flat(12, 6))]
    rows = rows_of([*alpha, Offer("Bravo", "b", flat(10, 6))])
    assert set(levels(rows)) == {10}
    # the close after the typo is matched against the one before it (the typo was never
    # accepted), so only the relative into the typo is beyond the bound
    assert [r["offers_beyond_bound"] for r in rows] == [0, 0, 1, 0, 0]
    assert [r["offers_held"] for r in rows] == [0] * 5


def test_a_relative_inside_the_bound_is_a_price_change():
    con = connect()
    bound = read_rules_of(con).max_relative
    alpha = Offer("Alpha", "a", [10, 10, 10 * bound * 0.99, 10 * bound * 0.99])
    load(con, [alpha, Offer("Bravo", "b", flat(10, 4))])
    publish(con)
    rows = series_rows(con, SERIES)
    assert rows[2]["offers_beyond_bound"] == 0
    assert rows[2]["index_level"] == pytest.approx(10 * math.sqrt(bound * 0.99), rel=1e-5)


def read_rules_of(con):
    build_only(con, "intermediate.int_index_rules")
    return read_rules(con)


def test_a_stale_close_does_not_carry_the_index():
    # Bravo's only look on day 3 was at 16:30 UTC of day 2, 00:30 in Beijing: 23.5 h before
    # its local day's end, more than stale_after_hours; its doubled price there never counts
    bravo = Offer("Bravo", "b", flat(10, 5)).rows()
    early = datetime(2026, 10, 2, 16, 30, tzinfo=UTC)
    bravo[2].update(observed_at=early, observed_hour=early.replace(minute=0),
                    price_amount=bravo[2]["price_amount"] * 2)
    con = connect()
    load(con, [Offer("Alpha", "a", flat(10, 5)), Offer("Charlie", "c", flat(10, 5))])
    insert(con, bravo)
    publish(con)
    rows = series_rows(con, SERIES)
    assert rows[2]["offers_stale"] == 1 and rows[2]["offers_matched"] == 2
    assert rows[3]["offers_matched"] == 3             # day 4: Bravo matched against day 2
    assert set(levels(rows)) == {10}


def test_a_spike_that_reverts_across_a_stale_close_leaves_the_level():
    # Bravo's close on day 3 is 1.8x; on day 4 its only look, back at 10, is stale (00:30 in
    # Beijing); on day 5 it is 10 again. gpi-2 never matched day 5 with day 3 and kept the
    # spike for good; matched across the stale day, the spike and its reversal cancel
    bravo = Offer("Bravo", "b", [10, 10, 18, 10, 10, 10]).rows()
    early = datetime(2026, 10, 3, 16, 30, tzinfo=UTC)
    bravo[3].update(observed_at=early, observed_hour=early.replace(minute=0))
    con = connect()
    load(con, [Offer("Alpha", "a", flat(10, 6)), Offer("Charlie", "c", flat(10, 6))])
    insert(con, bravo)
    publish(con)
    rows = series_rows(con, SERIES)
    assert rows[2]["index_level"] == pytest.approx(10 * 1.8 ** (1 / 3), rel=1e-5)
    assert rows[3]["offers_stale"] == 1
    assert rows[3]["index_level"] == pytest.approx(rows[2]["index_level"])   # nobody knew yet
    assert rows[4]["index_level"] == pytest.approx(10, rel=1e-6)
    assert rows[2]["evidence"] == ONE_VENDOR and "Bravo's move alone" in \
        rows[2]["evidence_lacking"]


def test_a_volatile_vendor_moves_a_series_by_its_share_and_no_more():
    # Alpha and Bravo never change a price; Volatile joins on day 2 and moves every day. Once
    # it has entered, each day's change is a third of its move, and its moves telescope: the
    # level is always the base times (its price over its entry mean) ** (1/3)
    entry = read_rules_of(connect()).entry_days
    moves = [10, 12, 9, 11, 8, 10, 13, 9, 10, 12, 10, 11, 9, 10][:entry + 6]
    offers = [Offer("Alpha", "a", flat(10, len(moves) + 1)),
              Offer("Bravo", "b", flat(10, len(moves) + 1)),
              Offer("Volatile", "v", [None, *moves])]
    rows = rows_of(offers)
    mean = math.exp(sum(math.log(p) for p in moves[:entry]) / entry)
    for row, price in zip(rows[1 + entry:], moves[entry:], strict=False):
        assert row["index_level"] == pytest.approx(10 * (price / mean) ** (1 / 3), rel=1e-5)


def test_a_day_with_one_vendor_says_so_and_prints_no_level():
    offers = [Offer("Alpha", "a", [10, 10, 9, 9, 9]), Offer("Bravo", "b", [20, 20, None, 20, 20])]
    rows = rows_of(offers)
    day3 = rows[2]
    assert day3["index_level"] is None and day3["level_low"] is None
    assert day3["evidence"] == NOT_ENOUGH_EVIDENCE
    assert "1 vendor(s) behind the day's change, 2 needed" in day3["evidence_lacking"]
    # the chain carries Alpha's cut alone on day 3; on day 4 Bravo is back, matched against
    # day 2 with the market's move imputed, which pulls Alpha's cut back to its share
    assert day3["chain_level"] == pytest.approx(rows[0]["chain_level"] * 0.9, rel=1e-6)
    assert rows[3]["evidence"] != NOT_ENOUGH_EVIDENCE
    assert rows[3]["index_level"] == pytest.approx(rows[0]["index_level"] * math.sqrt(0.9),
                                                   rel=1e-6)


def test_a_series_with_one_vendor_never_prints_a_level():
    rows = rows_of([Offer("Alpha", f"a{i}", flat(10 + i, 5)) for i in range(4)])
    assert rows and all(r["index_level"] is None for r in rows)
    assert rows[0]["evidence_lacking"].startswith("base day: 1 vendor(s) listed")


def test_a_day_nobody_listed_is_a_row_that_says_so():
    offers = [Offer("Alpha", "a", [10, 10, None, 10, 10, 10]),
              Offer("Bravo", "b", [10, 10, None, 10, 10, 10])]
    rows = rows_of(offers)
    assert rows[2]["evidence_lacking"] == "no offer listed that day"
    assert rows[3]["index_level"] == 10               # matched across the empty day


def test_held_closes_are_left_out():
    # six vendors make a judged market; Alpha's close on day 3 is 20x the market, a first
    # sighting no later look confirms (it is back the next day): held, and left out
    market = [Offer(v, v.lower(), flat(10 + i, 6)) for i, v in
              enumerate(("Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot"))]
    market[0] = Offer("Alpha", "alpha", [10, 10, 200, 10, 10, 10])
    rows = rows_of(market)
    assert rows[2]["offers_held"] == 1 and rows[2]["offers_beyond_bound"] == 0
    assert rows[2]["offers_matched"] == 5
    assert len({round(r["index_level"], 6) for r in rows}) == 1


def test_exchange_rates_cannot_move_the_index():
    # the listed amounts stay; the CNY per GPU-hour moves 5 % (an exchange-rate swing)
    offers = [Offer("Alpha", "a", flat(2.0, 5), currency="USD"),
              Offer("Bravo", "b", flat(3.0, 5), currency="USD")]
    con = connect()
    load(con, offers)
    con.execute("update observations set price_per_gpu_hour_cny = price_per_gpu_hour_cny * 1.05 "
                "where observed_at >= '2026-10-03'")
    publish(con)
    rows = series_rows(con, "A100-80GB|world|on_demand|hour")
    assert {r["index_level"] for r in rows} == {2.5}


def test_the_interval_is_seeded_and_widens_with_disagreeing_vendors():
    agree = [Offer(v, v.lower(), [10, 10, 9, 9]) for v in ("Alpha", "Bravo", "Charlie")]
    apart = [Offer("Alpha", "alpha", [10, 10, 8, 8]), Offer("Bravo", "bravo", [10, 10, 10, 10]),
             Offer("Charlie", "charlie", [10, 10, 9, 9])]
    same = rows_of(agree)
    assert same[2]["level_low"] == pytest.approx(same[2]["index_level"])
    assert same[2]["level_high"] == pytest.approx(same[2]["index_level"])
    first, again = rows_of(apart), rows_of(apart)
    assert first[2]["level_low"] < first[2]["index_level"] < first[2]["level_high"]
    assert [r["content_hash"] for r in first] == [r["content_hash"] for r in again]


def test_a_vendor_joining_leaves_the_others_bootstrap_weights():
    rules = read_rules_of(connect())
    two = vendor_weights("s", ["Alpha", "Bravo"], rules)
    three = vendor_weights("s", ["Alpha", "Bravo", "Charlie"], rules)
    assert (two == three[:, :2]).all() and two.shape == (rules.bootstrap_replicates, 2)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=st.lists(st.floats(0.8, 1.25), min_size=2, max_size=6),
       sizes=st.lists(st.integers(1, 4), min_size=2, max_size=4),
       churners=st.integers(0, 3))
def test_a_market_wide_path_is_what_the_index_follows(path, sizes, churners):
    """Every offer follows the same factor path, whatever its level; some offers are listed on
    scattered days only (they come and go). The index is the base level times the path."""
    factors = [1.0]
    for step in path:
        factors.append(factors[-1] * step)
    offers = [Offer(f"V{v}", f"v{v}-{i}", [round(10 * (1 + i) * f, 6) for f in factors])
              for v, n in enumerate(sizes) for i in range(n)]
    offers += [Offer(f"Churn{c}", f"c{c}", [round(3 * f, 6) if (d + c) % 3 else None
                                             for d, f in enumerate(factors)])
               for c in range(churners)]
    rows = rows_of(offers)
    base = rows[0]["chain_level"]
    for row, factor in zip(rows, factors, strict=False):
        assert row["chain_level"] == pytest.approx(base * factor, rel=1e-4)


def test_a_curated_tables_source_is_in_no_series():
    # an archive whose commit times are edits (raw.crawls.calendar_signal false) says nothing of
    # the day a price held: its offers stay out, the crawled vendors carry the index
    curated = Offer("Curated", "k", [10, 10, 5, 5, 5], overrides={"crawl_id": "curated-1"})
    con = connect()
    load(con, [curated, Offer("Alpha", "a", flat(10, 5)), Offer("Bravo", "b", flat(10, 5))])
    con.execute("insert into raw.crawls (crawl_id, source, mode, passed, status, offers, "
                "calendar_signal) values ('curated-1', 'src_curated', 'archive', true, "
                "'passed', 5, false)")
    publish(con)
    rows = series_rows(con, SERIES)
    assert {r["vendors_listed"] for r in rows} == {2}
    assert set(levels(rows)) == {10}
