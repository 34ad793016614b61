"""A batch's Decimal columns insert whatever their first rows hold: DuckDB types an object column
from a sample of its first rows, so a batch whose first thousand prices are below 10 and a later
one is not failed the whole insert ("Casting value 10.000000 to DECIMAL(7,6) failed")."""

from __future__ import annotations

from decimal import Decimal

import duckdb
import pandas as pd
import pytest

from pipelines.warehouse.db import as_insertable


@pytest.mark.parametrize("late", [Decimal("10.000000"), Decimal("123456.654321"),
                                  Decimal("250.750000")])
def test_a_late_wide_value_still_inserts_exactly(late):
    con = duckdb.connect()
    # a column with a null is typed from a sample: the real batch that failed (6,266 offers of
    # the-full-stack-website, USD/GPU-h null on CNY rows) had one 10.000000 its sample missed
    con.execute("create table t (price decimal(18, 6), note varchar, n integer)")
    prices = [Decimal("1.234567")] * 2500 + [None, late]
    frame = pd.DataFrame({"price": prices, "note": ["x"] * len(prices),
                          "n": range(len(prices))})
    with pytest.raises(duckdb.Error, match="out of range"):   # the failure being fixed
        con.register("f", frame)
        con.execute("insert into t by name select * from f")
    con.register("g", as_insertable(frame))
    con.execute("insert into t by name select * from g")
    assert con.execute("select price from t where n = 2501").fetchone() == (late,)
    assert con.execute("select count(*), count(price) from t").fetchone() == (2502, 2501)
    assert con.execute("select sum(n) from t").fetchone() == (sum(range(2502)),)


def test_a_frame_without_decimals_is_left_as_it_is():
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", None], "c": [0.5, 1.5]})
    assert as_insertable(frame).equals(frame)
