"""One home for the SQL models' shared pieces (issue 26, item 3): the incremental filter is written
once (the macros since_day() and since_hour(n), pipelines/warehouse/sql/since_macros.sql) and the
same-day like-for-like join once (intermediate.int_like_for_like_pairs, which the pairing marts
read)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlglot import exp

from pipelines.warehouse.sql_models import load_models, parsed_sql
from spiders.layout import SQL_DIR
from tests.helpers.observations import EXTERNAL

ROOT = Path(__file__).resolve().parents[1]
MODELS = load_models(SQL_DIR, EXTERNAL)
PAIRS = "intermediate.int_like_for_like_pairs"
# the comparison each pairing mart reads from the shared model
PAIRING_MARTS = {"marts.slice_to_whole_ratio": "slice_to_whole",
                 "marts.multi_gpu_discount": "multi_gpu",
                 "marts.spot_discount": "spot",
                 "marts.monthly_vs_hourly_saving": "monthly_vs_hourly"}
# what makes a join a same-day like-for-like pairing: both sides of the same day and place
SAME_DAY_AND_PLACE = {"observed_date", "source", "vendor", "region_code"}
GETVARIABLE = re.compile(r"getvariable\s*\(", re.I)
# Models another helper of issue 26 owns that still type the filter by hand: each must switch to
# since_day() / since_hour(n) and leave this set (the test fails while an entry is stale).
NOT_YET_SWITCHED: set[str] = set()


def _rel(path: Path) -> str:
    return path.relative_to(SQL_DIR).as_posix()


def test_no_model_types_the_incremental_filter_by_hand():
    typing = {_rel(m.path) for m in MODELS if GETVARIABLE.search(m.sql)}
    assert typing == NOT_YET_SWITCHED, (
        f"read `since` through since_day() / since_hour(n): {sorted(typing - NOT_YET_SWITCHED)}; "
        f"switched, drop from NOT_YET_SWITCHED: {sorted(NOT_YET_SWITCHED - typing)}")


def test_each_variable_is_read_in_one_sql_file_of_the_pipeline():
    """`since` by the incremental macros, `price_reference_day` by the price-age macros."""
    readers = sorted(p.relative_to(ROOT).as_posix()
                     for p in (ROOT / "pipelines").rglob("*")
                     if p.suffix in (".sql", ".py") and GETVARIABLE.search(p.read_text("utf-8")))
    assert readers == ["pipelines/warehouse/sql/price_age_macros.sql",
                       "pipelines/warehouse/sql/since_macros.sql"]


def _same_named_equalities(join: exp.Join) -> set[str]:
    """The columns a join's condition equates between two sides under one name (a.x = b.x)."""
    names = set()
    for eq in (join.args.get("on") or exp.true()).find_all(exp.EQ):
        left, right = eq.this, eq.expression
        if isinstance(left, exp.Column) and isinstance(right, exp.Column) \
                and left.name == right.name and left.table != right.table:
            names.add(left.name)
    return names


def test_the_same_day_like_for_like_join_is_written_once():
    pairing = {m.table for m in MODELS
               if any(_same_named_equalities(j) >= SAME_DAY_AND_PLACE
                      for j in parsed_sql(m.sql).find_all(exp.Join))}
    assert pairing == {PAIRS}


@pytest.mark.parametrize(("mart", "comparison"), PAIRING_MARTS.items())
def test_each_pairing_mart_reads_its_comparison_of_the_shared_model(mart, comparison):
    model = next(m for m in MODELS if m.table == mart)
    assert model.reads == (PAIRS,)
    assert re.search(rf"\bcomparison = '{comparison}'", model.sql), mart


def test_every_comparison_of_the_shared_model_has_its_mart():
    pairs = next(m for m in MODELS if m.table == PAIRS)
    values = parsed_sql(pairs.sql).find(exp.Values)
    comparisons = {row.expressions[0].name for row in values.expressions}
    assert comparisons == set(PAIRING_MARTS.values())
    readers = {m.table for m in MODELS if PAIRS in m.reads}
    # marts.held_pairs lists every comparison's held pairs, with their reasons
    assert readers == {*PAIRING_MARTS, "marts.held_pairs"}
