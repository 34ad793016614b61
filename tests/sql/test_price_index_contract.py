"""marts.price_index, the mart Python writes (pipelines/index/), keeps a contract like the SQL
marts: its DDL header declares its grain and audits, its asset checks them after each
publication as a blocking check, and a broken audit stops what publishes after it."""

from __future__ import annotations

import dagster as dg
import pytest
from dagster_duckdb import DuckDBResource

import pipelines.defs.index as index_defs
from pipelines.defs.models import CONTRACT_CHECK
from pipelines.index import INDEX_TABLE, Publication
from pipelines.index.publish import ensure_index_table
from pipelines.warehouse.model_contract import audit_failures, model_contract

# One row of the index as a publication writes it; the tests break one audit at a time.
ROW = {"series_id": "A100-80GB|china|on_demand|hour", "index_card": "A100-80GB",
       "market": "china", "currency": "CNY", "offer_kind": "on_demand", "term": "hour",
       "index_date": "2026-08-01", "index_level": 10.0, "chain_level": 10.0,
       "base_date": "2026-08-01", "base_level": 10.0, "offers_matched": 3, "vendors_matched": 2,
       "offers_listed": 3, "vendors_listed": 2, "vendors_in_series": 2, "offers_beyond_bound": 0,
       "offers_held": 0, "offers_stale": 0, "evidence": "enough", "evidence_lacking": None,
       "chained": "base", "method_version": "v", "content_hash": "h",
       "published_at": "2026-08-02 00:00:00+00"}


def _insert(con, **changes) -> None:
    row = ROW | changes
    con.execute(f"insert into {INDEX_TABLE} by name select "
                + ", ".join(f"${k} as {k}" for k in row), row)


def test_the_index_declares_its_grain_as_its_primary_key_and_audits():
    contract = model_contract(index_defs.INDEX_CONTRACT)
    assert contract.grain == ("series_id", "index_date", "method_version")
    assert f"primary key ({', '.join(contract.grain)})" in index_defs.INDEX_CONTRACT.sql
    assert contract.audits


@pytest.mark.parametrize("changes, audit", [
    ({"evidence_lacking": "too few vendors"}, "evidence_without_its_reason"),
    ({"evidence": "not enough evidence"}, "evidence_without_its_reason"),
    ({"currency": "USD"}, "currency_not_the_markets"),
    ({"base_level": 0.0}, "level_not_positive"),
    ({"vendors_listed": 4}, "more_vendors"),
    ({"chained": "sideways"}, "unknown_chaining"),
])
def test_a_bad_row_fails_its_audit_and_a_good_one_none(con, changes, audit):
    ensure_index_table(con)
    _insert(con)
    assert audit_failures(con, index_defs.INDEX_CONTRACT) == []
    _insert(con, series_id="other", **changes)
    [failure] = audit_failures(con, index_defs.INDEX_CONTRACT)
    assert (failure.audit, failure.bad_rows, failure.sample[0]["series_id"]) == (
        audit, 1, "other")


def test_a_broken_audit_fails_the_index_check_and_blocks_the_publish(tmp_path, monkeypatch):
    """The price_index asset in a real Dagster run, its publication writing a row whose currency
    is not its market's: the blocking check fails naming the audit; the asset after it does not
    run."""
    def publish_a_bad_row(con, published_at):
        ensure_index_table(con)
        _insert(con, currency="USD")
        return Publication(rows={ROW["series_id"]: 1}, series=1)

    monkeypatch.setattr(index_defs, "publish_index", publish_a_bad_row)
    published = []

    @dg.asset(deps=[index_defs.INDEX_KEY])
    def publish() -> None:
        published.append(True)

    result = dg.materialize(
        [index_defs.price_index, publish], raise_on_error=False,
        resources={"duckdb": DuckDBResource(database=str(tmp_path / "prices.db"))})
    assert not result.success and published == []
    [check] = result.get_asset_check_evaluations()
    assert (check.asset_key, check.check_name, check.passed) == (
        index_defs.INDEX_KEY, CONTRACT_CHECK, False)
    assert check.description == (
        "marts.price_index: audit 'currency_not_the_markets' failed: 1 bad rows")
