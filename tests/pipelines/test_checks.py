"""The blocking quality checks: clean batches pass, each kind of defect fails them; a crawl a
rule refuses is held before the checks run (tests/pipelines/test_crawl_holds.py has the rest)."""

import json
from datetime import UTC, datetime
from decimal import Decimal

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource

import pipelines.normalize.batch as normalize_batch
from pipelines.defs.normalize import observation_batch, observations
from pipelines.defs.quality import (
    observation_batch_meets_expectations,
    observation_batch_sources_consistent,
    sources_are_fresh,
)

OBSERVED = datetime(2026, 11, 30, 9, tzinfo=UTC)
CLEAN_ROW = {
    "observed_at": OBSERVED, "observed_hour": OBSERVED, "source": "idc_x", "vendor": "X IDC",
    "vendor_kind": "idc", "region_code": "北京", "country": "CN", "province_or_state": "Beijing",
    "city": "Beijing", "is_tier1_city": True, "sku": "A100 | 1", "gpu_model": "A100-80GB",
    "gpu_variant": "SXM", "gpu_count": 1, "gpu_fraction": Decimal("1"), "vram_gb": Decimal("80"),
    "offer_kind": "on_demand", "billing_period": "hour", "price_amount": Decimal("62"),
    "currency": "CNY", "price_per_gpu_hour_cny": Decimal("62"),
    "price_per_gpu_hour_usd": Decimal("8.7"), "fx_rate_date": OBSERVED.date(), "available": True,
    "url": "https://idc.test/price", "raw_ref": "0" * 64, "offer_id": "a", "crawl_id": "c1",
}


def _load_batch(db: DuckDBResource, rows: list[dict]) -> None:
    columns = list(CLEAN_ROW)
    if not rows:
        return
    with db.get_connection() as con:
        con.executemany(f"insert into observation_batch ({', '.join(columns)}) values "
                        f"({', '.join('?' * len(columns))})",
                        [[r[c] for c in columns] for r in rows])


def test_clean_batch_passes(db):
    _load_batch(db, [CLEAN_ROW, {**CLEAN_ROW, "offer_id": "b", "gpu_fraction": Decimal("0.25")}])
    result = observation_batch_meets_expectations(duckdb=db)
    assert result.passed, result.metadata


@pytest.mark.parametrize("defect, rows, expectation", [
    ("natural key repeated (uniqueness)", [CLEAN_ROW, CLEAN_ROW],
     "expect_compound_columns_to_be_unique"),
    ("fraction 0 (validity)", [{**CLEAN_ROW, "gpu_fraction": Decimal("0")}],
     "expect_column_values_to_be_between"),
    ("unknown currency (validity)", [{**CLEAN_ROW, "currency": "XBT"}],
     "expect_column_values_to_be_in_set"),
    ("card not in the catalog (validity)", [{**CLEAN_ROW, "gpu_model": "Ascend910B-64GB"}],
     "expect_column_values_to_be_in_set"),
    ("missing FX date (completeness)", [{**CLEAN_ROW, "fx_rate_date": None}],
     "expect_column_values_to_not_be_null"),
    ("observed in the future (timeliness)",
     [{**CLEAN_ROW, "observed_at": datetime(2031, 1, 1, tzinfo=UTC)}],
     "expect_column_values_to_be_between"),
    ("negative CNY price (validity)", [{**CLEAN_ROW, "price_per_gpu_hour_cny": Decimal("-62")}],
     "expect_column_values_to_be_between"),
    ("negative USD price (validity)", [{**CLEAN_ROW, "price_per_gpu_hour_usd": Decimal("-8.7")}],
     "expect_column_values_to_be_between"),
    ("A100 at 0.5 CNY per GPU-hour (plausibility)",
     [{**CLEAN_ROW, "price_per_gpu_hour_cny": Decimal("0.5")}],
     "expect_column_values_to_be_in_set"),
    ("slice at a third of the whole card per GPU (plausibility)",
     [CLEAN_ROW, {**CLEAN_ROW, "offer_id": "s", "sku": "A100 2g.20gb | 1",
                  "gpu_fraction": Decimal("0.25"), "price_per_gpu_hour_cny": Decimal("20")}],
     "expect_column_values_to_be_in_set"),
])
def test_each_defect_fails_the_check(db, defect, rows, expectation):
    _load_batch(db, rows)
    result = observation_batch_meets_expectations(duckdb=db)
    assert not result.passed, defect
    assert result.severity == dg.AssetCheckSeverity.ERROR
    assert expectation in {f["expectation"] for f in result.metadata["failures"].value}


def test_failures_name_the_offending_rows(db):
    _load_batch(db, [CLEAN_ROW, {**CLEAN_ROW, "offer_id": "b", "sku": "A100 | 8",
                                 "price_per_gpu_hour_cny": Decimal("0.5")}])
    result = observation_batch_meets_expectations(duckdb=db)
    [failure] = [f for f in result.metadata["failures"].value
                 if f["column"] == "price_within_card_bounds"]
    assert failure["unexpected_count"] == 1
    assert failure["rows"][0]["sku"] == "A100 | 8" and failure["rows"][0]["source"] == "idc_x"


def _history(db: DuckDBResource, price: Decimal, rows: int) -> None:
    """A published crawl of idc_x an hour earlier: `rows` observations at `price`."""
    with db.get_connection() as con:
        con.execute("insert into raw.crawls (crawl_id, source, mode, passed, status, offers, "
                    "normalized_at, normalized_rows) values ('c0', 'idc_x', 'replay', true, "
                    "'passed', ?, now(), ?)", [rows, rows])
        con.execute("insert into raw.crawls (crawl_id, source, mode, passed, status, offers) "
                    "values ('c1', 'idc_x', 'replay', true, 'passed', 1)")
        # the batch was built from c1 (observation_batch records the crawls it read)
        con.execute("insert into raw.batch_crawls (crawl_id, normalized_rows, quarantined_rows) "
                    "values ('c1', 1, 0)")
        earlier = OBSERVED.replace(hour=8)
        for n in range(rows):
            row = {**CLEAN_ROW, "offer_id": f"h{n}", "observed_at": earlier,
                   "observed_hour": earlier, "price_per_gpu_hour_cny": price, "crawl_id": "c0"}
            con.execute(f"insert into observations ({', '.join(row)}) values "
                        f"({', '.join('?' * len(row))})", list(row.values()))


def test_source_consistent_with_its_history_passes(db):
    _history(db, Decimal("60"), rows=2)
    _load_batch(db, [CLEAN_ROW, {**CLEAN_ROW, "offer_id": "b"}])
    assert observation_batch_sources_consistent(duckdb=db).passed


def test_source_without_history_passes(db):
    with db.get_connection() as con:
        con.execute("insert into raw.crawls (crawl_id, source, mode, passed, status, offers) "
                    "values ('c1', 'idc_x', 'replay', true, 'passed', 1)")
        con.execute("insert into raw.batch_crawls (crawl_id, normalized_rows, quarantined_rows) "
                    "values ('c1', 1, 0)")
    _load_batch(db, [CLEAN_ROW])
    assert observation_batch_sources_consistent(duckdb=db).passed


def test_price_level_jump_fails_naming_source_and_card(db):
    # a misread currency: every price of the source is 7x its last crawl
    _history(db, Decimal("62") / 7, rows=1)
    _load_batch(db, [CLEAN_ROW])
    result = observation_batch_sources_consistent(duckdb=db)
    assert not result.passed
    [failure] = result.metadata["failures"].value
    assert failure["column"] == "price_level_ratio"
    [row] = failure["rows"]
    assert (row["source"], row["gpu_model"]) == ("idc_x", "A100-80GB")
    assert float(row["price_level_ratio"]) == pytest.approx(7.0)


def test_volume_collapse_fails(db):
    _history(db, Decimal("62"), rows=10)
    _load_batch(db, [CLEAN_ROW, {**CLEAN_ROW, "offer_id": "b"}])   # 2 rows against a median of 10
    result = observation_batch_sources_consistent(duckdb=db)
    assert not result.passed
    assert {f["column"] for f in result.metadata["failures"].value} == {"volume_ratio"}


def test_a_source_whose_crawl_yielded_no_rows_fails_as_a_collapse(db):
    _history(db, Decimal("62"), rows=10)
    _load_batch(db, [])                         # c1 was read, and none of its offers landed
    result = observation_batch_sources_consistent(duckdb=db)
    assert not result.passed
    [failure] = result.metadata["failures"].value
    assert failure["column"] == "volume_ratio"
    assert [row["source"] for row in failure["rows"]] == ["idc_x"]


def test_an_archive_version_whose_rows_were_all_refused_is_no_collapse(db):
    # a chunk of an archive's history: the versions it holds gave none of idc_x's rows (the
    # archive wrote them so then), against a median of 10 from its earlier versions
    _history(db, Decimal("62"), rows=10)
    with db.get_connection() as con:
        con.execute("update raw.crawls set mode = 'archive' where crawl_id = 'c1'")
    _load_batch(db, [])
    assert observation_batch_sources_consistent(duckdb=db).passed


def test_an_archive_versions_price_level_jump_still_fails(db):
    _history(db, Decimal("62") / 7, rows=1)
    with db.get_connection() as con:
        con.execute("update raw.crawls set mode = 'archive' where crawl_id = 'c1'")
    _load_batch(db, [CLEAN_ROW])
    result = observation_batch_sources_consistent(duckdb=db)
    assert [f["column"] for f in result.metadata["failures"].value] == ["price_level_ratio"]


def test_a_crawl_loaded_after_the_batch_was_built_is_judged_with_the_next_batch(db):
    _history(db, Decimal("62"), rows=2)
    with db.get_connection() as con:
        # idc_y has a history and a pending crawl that this batch did not read
        con.execute("insert into raw.crawls (crawl_id, source, mode, passed, status, offers, "
                    "normalized_at, normalized_rows) values ('y0', 'idc_y', 'replay', true, "
                    "'passed', 5, now(), 5), "
                    "('y1', 'idc_y', 'replay', true, 'passed', 5, null, null)")
    _load_batch(db, [CLEAN_ROW, {**CLEAN_ROW, "offer_id": "b"}])
    result = observation_batch_sources_consistent(duckdb=db)
    assert result.passed, result.metadata["failures"].value
    assert result.metadata["rows"].value == 1          # idc_x only


def test_freshness_warns_about_stale_sources(db):
    with db.get_connection() as con:
        con.execute("insert into raw.crawls (crawl_id, source, mode, passed, status, offers, "
                    "finished_at) values ('old', 'idc_old', 'live', true, 'passed', 5, "
                    "now() - interval 5 hour), "
                    "('new', 'idc_new', 'live', true, 'passed', 5, now())")
    result = sources_are_fresh(duckdb=db)
    assert not result.passed and result.severity == dg.AssetCheckSeverity.WARN
    assert [s["source"] for s in result.metadata["stale"].value] == ["idc_old"]


def test_freshness_reads_the_run_clock_not_the_wall_clock(db):
    """The run reached its check hours after its crawl: its own crawls stay fresh; a source
    whose last passing crawl is more than the window before the newest crawl is stale; a source
    only ever backfilled from an archive is never stale."""
    with db.get_connection() as con:
        con.execute("insert into raw.crawls (crawl_id, source, mode, passed, status, offers, "
                    "finished_at) values "
                    "('a', 'idc_a', 'live', true, 'passed', 5, now() - interval 10 hour), "
                    "('b', 'idc_b', 'live', false, 'failed', 0, now() - interval 10 hour), "
                    "('b0', 'idc_b', 'live', true, 'passed', 5, now() - interval 14 hour), "
                    "('z', 'archive_z', 'archive', true, 'passed', 5, now() - interval 90 day)")
    result = sources_are_fresh(duckdb=db)
    assert [s["source"] for s in result.metadata["stale"].value] == ["idc_b"]


def test_freshness_names_a_held_source_with_since_when(db):
    with db.get_connection() as con:
        con.execute("insert into raw.crawls (crawl_id, source, mode, passed, status, offers, "
                    "finished_at) values ('a1', 'idc_a', 'live', true, 'passed', 5, now()), "
                    "('b0', 'idc_b', 'live', true, 'passed', 5, now() - interval 1 hour), "
                    "('b1', 'idc_b', 'live', true, 'held', 5, now())")
    result = sources_are_fresh(duckdb=db)
    assert not result.passed and result.severity == dg.AssetCheckSeverity.WARN
    assert result.metadata["stale"].value == []        # its last crawl that landed is recent
    assert [h["source"] for h in result.metadata["held"].value] == ["idc_b"]
    assert result.description.startswith("held sources: idc_b (since ")


def _seed_raw_offer(db: DuckDBResource) -> None:
    item = {"source": "idc_x", "vendor": "X IDC", "vendor_kind": "idc", "sku": "A100 | 1",
            "gpu_text": "NVIDIA A100 80G", "gpu_count": "1", "region_text": "北京",
            "offer_kind": "on_demand", "price_text": "¥62.00/时", "billing_period": "hour",
            "available": True, "url": "https://idc.test/price", "raw_ref": "0" * 64,
            "observed_at": "2026-11-30T09:00:00Z"}
    with db.get_connection() as con:
        con.execute("insert into raw.crawls (crawl_id, source, mode, passed, offers) "
                    "values ('c1', 'idc_x', 'replay', true, 1)")
        con.execute("insert into raw.offers values ('c1', 0, 'idc_x', ?)", [json.dumps(item)])


def _materialize(db: DuckDBResource):
    return dg.materialize([observation_batch, observations, observation_batch_meets_expectations],
                          resources={"duckdb": db}, raise_on_error=False)


def test_a_crawl_a_rule_refuses_is_held_and_the_checks_see_what_lands(db, monkeypatch):
    _seed_raw_offer(db)
    real_normalize = normalize_batch.normalize_offer
    # A normalizer regression: every slice fraction comes out as 0.
    monkeypatch.setattr(normalize_batch, "normalize_offer",
                        lambda item: {**real_normalize(item), "gpu_fraction": Decimal("0")})
    result = _materialize(db)
    [evaluation] = result.get_asset_check_evaluations()
    assert evaluation.passed      # the safety net: the held crawl's rows are not in the batch
    with duckdb.connect(db.database, read_only=True) as con:
        assert con.execute("select count(*) from observations").fetchone()[0] == 0
        # the crawl is held, pending: a fixed normalizer lands it on the next run
        assert con.execute("select status, normalized_at from raw.crawls").fetchone() == \
            ("held", None)
        [(decision, check, bound)] = con.execute(
            "select decision, check_name, bound from raw.crawl_decisions").fetchall()
    assert (decision, check, bound) == ("held", "observation_batch_meets_expectations", "0..1")


def test_a_passing_check_publishes_the_batch(db):
    _seed_raw_offer(db)
    result = _materialize(db)
    assert result.success
    with duckdb.connect(db.database, read_only=True) as con:
        assert con.execute("select price_per_gpu_hour_cny from observations"
                           ).fetchall() == [(Decimal("62"),)]
        assert con.execute("select count(*) from observation_batch").fetchone()[0] == 0
