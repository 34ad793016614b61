"""The month-end dip's strength floor (dbt_like_sql/marts/month_end_dip.sql, `min_strength_pct`):
a dip too shallow to matter does not hold even when every offer-month shows it, while the same
history with a dip above the floor holds (so the test can tell the floor from a blind mart).

Four months of one IDC's real offers, without noise: every offer-month has the same depth, so the
noise is at its floor and only the strength decides."""

from __future__ import annotations

from datetime import date

import duckdb
import pytest

from pipelines.simulate import MonthEndDip, load_offers, simulate
from pipelines.verdicts import DOES_NOT_HOLD, HOLDS
from tests.workshop.truth import metrics

SOURCE = "idc_ulanqab"


def dip_groups(path, size_pct: float):
    simulate(path, start=date(2026, 1, 1), days=120, offers=load_offers(sources=[SOURCE]),
             effects=[MonthEndDip(size_pct, (SOURCE,))], seed=3, every_hours=12, noise_pct=0.0)
    with duckdb.connect(str(path), read_only=True) as con:
        return metrics.query(con, "dip_groups")


@pytest.mark.parametrize(("size_pct", "verdict"), [(0.5, DOES_NOT_HOLD), (3.0, HOLDS)],
                         ids=["below-the-1-pct-floor", "above-it"])
def test_only_a_dip_above_the_strength_floor_holds(tmp_path, size_pct, verdict):
    groups = dip_groups(tmp_path / "sim.db", size_pct)
    mine = groups[groups["source"] == SOURCE]
    assert (mine["months_observed"] >= 3).all()
    # 0.5 % +/- 1.645 x 0.375 / sqrt(3): the interval lies below 1 %, so it is judged "no"
    assert set(mine["dip_verdict"]) == {verdict}, mine
