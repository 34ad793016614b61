"""The blocking row check takes observation_batch's verdict only for the very rows and suite that
verdict was on: a clean batch is validated once per run, and any change to the batch after it was
judged is validated anew (and fails if it breaks a rule)."""

from datetime import UTC, datetime, timedelta

import dagster as dg
import pandas as pd
import pytest

import pipelines.quality.gx_checks as gx_checks
from pipelines.defs.normalize import observation_batch
from pipelines.defs.quality import observation_batch_meets_expectations
from pipelines.quality.gx_checks import suite_fingerprint
from pipelines.quality.suites import observation_suite
from tests.pipelines.test_checks import _seed_raw_offer

NOW = datetime(2026, 11, 30, 10, tzinfo=UTC)
FRAME = pd.DataFrame({"offer_id": ["a", "b", "c"], "price": [1.0, 2.0, 3.0],
                      "observed_at": pd.to_datetime(["2026-11-30T09:00Z"] * 3)})


@pytest.fixture
def row_validations(monkeypatch) -> list[str]:
    """The suite names GX validates the batch's rows with, in order (the source suite left out)."""
    seen: list[str] = []
    real = gx_checks.validation

    def counted(df, suite_name, expectations, result_format):
        if suite_name in ("crawl_rows", "observation_batch"):
            seen.append(suite_name)
        return real(df, suite_name, expectations, result_format)

    monkeypatch.setattr(gx_checks, "validation", counted)
    return seen


def _judged(db) -> None:
    _seed_raw_offer(db)
    result = dg.materialize([observation_batch], resources={"duckdb": db})
    assert result.success


def test_a_clean_batch_is_validated_once(db, row_validations):
    _seed_raw_offer(db)
    result = dg.materialize([observation_batch, observation_batch_meets_expectations],
                            resources={"duckdb": db})
    [evaluation] = result.get_asset_check_evaluations()
    assert evaluation.passed
    assert "as observation_batch judged them" in evaluation.description
    assert row_validations == ["crawl_rows"]


@pytest.mark.parametrize("change, passes", [
    ("gpu_fraction = 0", False),                           # breaks a rule: the check fails
    ("price_per_gpu_hour_cny = 63, price_amount = 63", True),   # still valid: validated anew
])
def test_a_batch_changed_after_judging_is_validated_again(db, row_validations, change, passes):
    _judged(db)
    with db.get_connection() as con:
        con.execute(f"update observation_batch set {change}")
    result = observation_batch_meets_expectations(duckdb=db)
    assert result.passed is passes
    assert "judged them" not in result.description
    assert row_validations == ["crawl_rows", "observation_batch"]


def test_a_check_before_any_judging_validates(db, row_validations):
    result = observation_batch_meets_expectations(duckdb=db)   # no raw.batch_suite_passes yet
    assert result.passed and "judged them" not in result.description


@pytest.mark.parametrize("other", [
    FRAME.assign(price=[1.0, 2.0, 3.5]),                  # a value
    FRAME.iloc[:2],                                       # a row fewer
    pd.concat([FRAME, FRAME.iloc[:1]]),                   # a row twice (uniqueness sees it)
    FRAME.drop(columns="price"),                          # a column
    FRAME.assign(price=FRAME["price"].astype("float32")),  # a type
])
def test_the_fingerprint_changes_with_the_rows(other):
    suite = observation_suite(NOW)
    assert suite_fingerprint(other, suite) != suite_fingerprint(FRAME, suite)


def test_the_fingerprint_changes_with_the_suite_and_not_with_row_order():
    suite = observation_suite(NOW)
    assert suite_fingerprint(FRAME.iloc[::-1], suite) == suite_fingerprint(FRAME, suite)
    assert suite_fingerprint(FRAME, observation_suite(NOW + timedelta(seconds=1))) != \
        suite_fingerprint(FRAME, suite)
    assert suite_fingerprint(FRAME, suite[:-1]) != suite_fingerprint(FRAME, suite)
