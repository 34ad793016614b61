"""The month-end dip signal on simulated histories: a steady decline, listings that vanish at month
end and an exchange-rate swing around every month end each produce no dip signal, while a real
dip in the same history does (so the test can tell a blind mart from an honest one).

Three complete months of real offers (three configured IDCs in CNY, Vultr in USD), a crawl every
12 hours, 1 % noise; the groups are scored with make truth's own query
(tests/workshop/truth/sql/dip_groups.sql).
"""

from __future__ import annotations

from datetime import date

import duckdb
import pytest

from pipelines.simulate import (
    MonthEndChurn,
    MonthEndDip,
    Trend,
    load_offers,
    months_to_days,
    simulate,
)
from pipelines.verdicts import DOES_NOT_HOLD, HOLDS
from tests.workshop.truth import grid, metrics

START = date(2026, 1, 1)
DAYS = months_to_days(START, 3) + grid.NEXT_START_DAYS


@pytest.fixture(scope="module")
def groups(tmp_path_factory):
    offers = load_offers(sources=["idc_sinnet_bj", "idc_ulanqab", "idc_nanjing", "vultr"])
    effects = [Trend(-9, ("idc_sinnet_bj",)),                 # 1.5 % cheaper every 5 days
               MonthEndChurn("vanish", ("idc_nanjing",), days=5, share=0.5),
               MonthEndDip(5, ("idc_ulanqab",)),
               *grid.fx_swings(START, DAYS)]                  # USD -5 % from the 27th to the 2nd
    path = tmp_path_factory.mktemp("false-dips") / "sim.db"
    simulate(path, start=START, days=DAYS, offers=offers, effects=effects, seed=11,
             every_hours=12, noise_pct=1.0)
    con = duckdb.connect(str(path), read_only=True)
    try:
        yield metrics.query(con, "dip_groups")
    finally:
        con.close()


@pytest.mark.parametrize(("source", "category"), [
    ("idc_sinnet_bj", "trend"), ("idc_nanjing", "churn"), ("vultr", "fx")])
def test_no_dip_signal_without_a_dip(groups, source, category):
    mine = groups[groups["source"] == source]
    assert len(mine) > 0 and set(mine["category"]) == {category}
    assert (mine["dip_verdict"] == DOES_NOT_HOLD).any()     # judged, not merely unseen
    assert not (mine["dip_verdict"] == HOLDS).any(), mine[mine["dip_verdict"] == HOLDS]


def test_the_real_dip_in_the_same_history_signals(groups):
    dipped = groups[groups["source"] == "idc_ulanqab"]
    assert set(dipped["category"]) == {"dip"}
    assert (dipped["dip_verdict"] == HOLDS).all(), dipped
