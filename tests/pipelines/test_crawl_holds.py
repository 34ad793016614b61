"""The blast radius of the blocking rules: one faulty source among several is held alone, with
its reason, and the others land in that run and the next; a held crawl is settled by rule
(confirmed, reverted, unresolved -> alert) or by a person (accept / reject, who recorded)."""

from __future__ import annotations

import getpass
import json
from datetime import UTC, datetime
from decimal import Decimal

import dagster as dg
import duckdb
import pandas as pd
import pytest
from click.testing import CliRunner

from pipelines.cli.group import main
from pipelines.cli.sources import holds_text
from pipelines.defs.normalize import observation_batch, observations
from pipelines.defs.quality import (
    batch_frame,
    observation_batch_meets_expectations,
    observation_batch_sources_consistent,
)
from pipelines.quality.blast_radius import level_reasons, row_reasons
from pipelines.warehouse.db import ensure_schema
from tests.pipelines.test_checks import CLEAN_ROW, _load_batch

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
SOURCES = ("idc_a", "idc_b", "idc_c")


def _rows_of_three_crawls(defect: dict, extra: list[dict] | None = None) -> list[dict]:
    """One clean row for each of three crawls of three sources; `defect` applied to idc_b's."""
    rows = [{**CLEAN_ROW, "source": s, "crawl_id": f"c_{s}", "offer_id": f"o_{s}"}
            for s in SOURCES]
    rows[1].update(defect)
    return rows + (extra or [])


SLICE = {**CLEAN_ROW, "source": "idc_b", "crawl_id": "c_idc_b", "offer_id": "s",
         "sku": "A100 2g.20gb | 1", "gpu_fraction": Decimal("0.25"),
         "price_per_gpu_hour_cny": Decimal("20")}


@pytest.mark.parametrize("defect, extra, rule", [
    ({"fx_rate_date": None}, None, "fx_rate_date"),
    ({"currency": "XBT"}, None, "currency"),
    ({"gpu_model": "Ascend910B-64GB"}, None, "gpu_model"),
    ({"gpu_fraction": Decimal("0")}, None, "gpu_fraction"),
    ({"observed_at": datetime(2031, 1, 1, tzinfo=UTC)}, None, "observed_at"),      # future
    ({"price_per_gpu_hour_cny": Decimal("-62")}, None, "price_per_gpu_hour_cny"),
    ({"price_per_gpu_hour_cny": Decimal("0.5")}, None, "price_within_card_bounds"),
    ({}, [SLICE], "slice_price_plausible"),                                        # a slice
    ({}, [{**CLEAN_ROW, "source": "idc_b", "crawl_id": "c_idc_b", "offer_id": "o_idc_b"}],
     "offer_id+observed_hour"),                                                     # unique
])
def test_each_row_rule_names_the_faulty_crawl_alone(db, defect, extra, rule):
    _load_batch(db, _rows_of_three_crawls(defect, extra))
    with db.get_connection() as con:
        reasons = row_reasons(batch_frame(con), NOW)
    assert list(reasons) == ["c_idc_b"]
    [reason] = [r for r in reasons["c_idc_b"] if r.rule == rule]   # (an unknown card has no
    assert reason.check == "observation_batch_meets_expectations"  # bounds either)
    assert reason.figure and reason.bound and not reason.on_level


def test_a_repeat_across_crawls_holds_the_later_crawl_and_says_so(db):
    # the same offer-hour in two crawls (normalization keeps the earlier; this is the safety net)
    _load_batch(db, _rows_of_three_crawls({}, [{**CLEAN_ROW, "source": "idc_c",
                                                "crawl_id": "c_idc_c", "offer_id": "o_idc_a"}]))
    with db.get_connection() as con:
        reasons = row_reasons(batch_frame(con), NOW)
    assert list(reasons) == ["c_idc_c"]
    assert reasons["c_idc_c"][0].earlier_crawl == "c_idc_a"
    assert "across crawls" in reasons["c_idc_c"][0].text()


def _levels(**faulty) -> pd.DataFrame:
    """crawl_levels.sql's frame for three crawls, idc_b's figures replaced by `faulty`."""
    rows = [{"crawl_id": f"c_{s}", "source": s, "gpu_model": "A100-80GB", "level_settled_by": None,
             "crawl_rows": 10.0, "trailing_median_rows": 10.0, "volume_ratio": 1.0,
             "median_now": 62.0, "median_before": 62.0, "price_level_ratio": 1.0}
            for s in SOURCES]
    rows[1].update(faulty)
    return pd.DataFrame(rows)


@pytest.mark.parametrize("faulty, rule, figure, bound", [
    ({"volume_ratio": 0.3}, "volume_ratio", "0.3", ">= 0.5"),
    ({"price_level_ratio": 3.4}, "price_level_ratio", "3.4 (A100-80GB)", "0.333..3"),
    ({"price_level_ratio": 0.001}, "price_level_ratio", "0.001 (A100-80GB)", "0.333..3"),
])
def test_each_source_rule_names_the_faulty_crawl_alone(faulty, rule, figure, bound):
    reasons = level_reasons(_levels(**faulty))
    assert list(reasons) == ["c_idc_b"]
    [reason] = reasons["c_idc_b"]
    assert (reason.rule, reason.figure, reason.bound) == (rule, figure, bound)
    assert reason.on_level


# --- the job's steps over raw offers: three sources, hour after hour --------------------------

def _crawl(db, source: str, hour: int, price: float, offers: int = 3) -> str:
    """A passing crawl of `source` observed at `hour` UTC: `offers` A100 offers at `price`."""
    crawl_id = f"{source}-20261130T{hour:02d}0000"
    with db.get_connection() as con:
        con.execute("insert into raw.crawls (crawl_id, source, mode, passed, status, offers, "
                    "finished_at) values (?, ?, 'replay', true, 'passed', ?, ?)",
                    [crawl_id, source, offers, datetime(2026, 11, 30, hour, tzinfo=UTC)])
        for n in range(offers):
            item = {"source": source, "vendor": source, "vendor_kind": "idc",
                    "sku": f"A100 | {n}", "gpu_text": "NVIDIA A100 80G", "gpu_count": "1",
                    "region_text": "北京", "offer_kind": "on_demand",
                    "price_text": f"¥{price:.2f}/时", "billing_period": "hour",
                    "available": True, "url": "https://idc.test/price", "raw_ref": "0" * 64,
                    "observed_at": f"2026-11-30T{hour:02d}:00:00Z"}
            con.execute("insert into raw.offers values (?, ?, ?, ?)",
                        [crawl_id, n, source, json.dumps(item, ensure_ascii=False)])
    return crawl_id


def _run(db, hour: int, prices: dict[str, float]) -> dict[str, str]:
    """One run's crawls (source -> price at `hour`) through the batch, the checks and the
    publish; the checks must pass (the faulty crawl is held before they run)."""
    crawls = {source: _crawl(db, source, hour, price) for source, price in prices.items()}
    result = dg.materialize([observation_batch, observations,
                             observation_batch_meets_expectations,
                             observation_batch_sources_consistent],
                            resources={"duckdb": db}, raise_on_error=False)
    assert result.success
    assert all(c.passed for c in result.get_asset_check_evaluations())
    return crawls


def _landed(db) -> dict[str, list[int]]:
    """{source: the hours of its observations}."""
    with duckdb.connect(db.database, read_only=True) as con:
        rows = con.execute("select distinct source, hour(observed_hour) from observations"
                           ).fetchall()
    landed: dict[str, list[int]] = {}
    for source, hour in sorted(rows):
        landed.setdefault(source, []).append(hour)
    return landed


def _crawl_row(db, crawl_id: str) -> tuple:
    with duckdb.connect(db.database, read_only=True) as con:
        return con.execute("select status, normalized_at is not null from raw.crawls "
                           "where crawl_id = ?", [crawl_id]).fetchone()


def _decisions(db, crawl_id: str) -> list[tuple]:
    with duckdb.connect(db.database, read_only=True) as con:
        return con.execute("select decision, decided_by, check_name, figure, bound "
                           "from raw.crawl_decisions where crawl_id = ? order by decided_at",
                           [crawl_id]).fetchall()


BASE = 30.0   # CNY per A100-hour: 3.4x and 1/7 of it stay within the card's bounds
CLEAN = dict.fromkeys(SOURCES, BASE)


@pytest.fixture
def spiked(db):
    """A clean hour of three sources, then an hour where idc_b's level is 3.4x: held alone."""
    _run(db, 8, CLEAN)
    crawls = _run(db, 9, {**CLEAN, "idc_b": BASE * 3.4})
    return db, crawls["idc_b"]


def test_a_faulty_source_is_held_and_the_others_land(spiked):
    db, held = spiked
    assert _landed(db) == {"idc_a": [8, 9], "idc_b": [8], "idc_c": [8, 9]}
    assert _crawl_row(db, held) == ("held", False)
    [(decision, by, check, figure, bound)] = _decisions(db, held)
    assert (decision, by, check) == ("held", "rule:observation_batch_sources_consistent",
                                     "observation_batch_sources_consistent")
    assert (figure, bound) == ("3.4 (A100-80GB)", "0.333..3")
    with duckdb.connect(db.database, read_only=True) as con:   # as `gpuprices sources` shows it
        shown = holds_text(con)
    assert list(shown) == ["idc_b"]
    assert shown["idc_b"].startswith("HELD since 20") and f"({held}): " in shown["idc_b"]
    assert "price_level_ratio 3.4 (A100-80GB), bound 0.333..3" in shown["idc_b"]
    assert "last: held 20" in shown["idc_b"]


def test_a_spike_that_reverts_is_rejected_and_every_source_lands(spiked):
    db, held = spiked
    _run(db, 10, CLEAN)                            # the pages are clean again
    assert _landed(db) == {"idc_a": [8, 9, 10], "idc_b": [8, 10], "idc_c": [8, 9, 10]}
    assert _crawl_row(db, held) == ("rejected", False)
    assert [d[:2] for d in _decisions(db, held)] == [("held", "rule:observation_batch_sources_"
                                                               "consistent"),
                                                      ("reverted", "rule:reverted")]
    with duckdb.connect(db.database, read_only=True) as con:
        assert holds_text(con)["idc_b"].startswith("last: reverted ")


def test_a_move_the_next_crawls_confirm_lands_with_its_original_time(spiked):
    db, held = spiked
    _run(db, 10, {**CLEAN, "idc_b": BASE * 3.4})   # one crawl at the new level: not yet
    assert _landed(db)["idc_b"] == [8]
    _run(db, 11, {**CLEAN, "idc_b": BASE * 3.4})   # the second: a real move
    assert _landed(db)["idc_b"] == [8, 9, 10, 11]
    assert _crawl_row(db, held) == ("passed", True)
    assert [d[:2] for d in _decisions(db, held)][-1] == ("confirmed", "rule:confirmed")
    _run(db, 12, {**CLEAN, "idc_b": BASE * 3.4})   # the new level is the level now
    assert _landed(db)["idc_b"] == [8, 9, 10, 11, 12]


def test_an_unresolved_hold_alerts_once_naming_the_crawl_and_the_commands(spiked):
    db, held = spiked
    with db.get_connection() as con:   # the hold began seven hours ago
        con.execute("update raw.crawl_decisions set decided_at = decided_at - interval 7 hour")
    _run(db, 10, {**CLEAN, "idc_b": BASE / 7})     # neither back nor at the held level
    _run(db, 11, {**CLEAN, "idc_b": BASE / 7})
    assert [d[0] for d in _decisions(db, held)] == ["held", "unresolved"]
    with duckdb.connect(db.database, read_only=True) as con:
        [(rule, title, body)] = con.execute("select rule, title, body from alerts.outbox"
                                            ).fetchall()
    assert rule == "held_crawl" and "idc_b" in title
    assert held in body and f"gpuprices accept {held}" in body and "gpuprices reject" in body


def _cli(db, *args: str):
    root = db.database.rsplit("/.work/", 1)[0]
    return CliRunner(env={"GPUPRICES_DATA_DIR": root, "GPUPRICES_LOCK_WAIT": "0"}
                     ).invoke(main, list(args))


@pytest.fixture
def work_db(tmp_path):
    """The working database of a data directory, as the commands find it."""
    from dagster_duckdb import DuckDBResource

    (tmp_path / ".work").mkdir()
    resource = DuckDBResource(database=str(tmp_path / ".work" / "prices.db"))
    with resource.get_connection() as con:
        ensure_schema(con)
    return resource


def _decided_by_hand(work_db, command: str, reason: str) -> str:
    """A clean hour, a held spike of idc_b, then `command` (accept | reject) on it: the decision
    recorded as the person's. The held crawl's id."""
    _run(work_db, 8, CLEAN)
    held = _run(work_db, 9, {**CLEAN, "idc_b": BASE * 3.4})["idc_b"]
    result = _cli(work_db, command, held, "--reason", reason)
    assert result.exit_code == 0, result.output
    decision, by, *_ = _decisions(work_db, held)[-1]
    assert (decision, by) == (f"{command}ed", f"person:{getpass.getuser()}")
    return held


def test_accept_records_the_person_and_the_crawl_lands_next_run(work_db):
    held = _decided_by_hand(work_db, "accept", "a 70 % promotion, on the vendor's page")
    _run(work_db, 10, CLEAN)
    assert _landed(work_db)["idc_b"] == [8, 9, 10]
    assert _crawl_row(work_db, held) == ("passed", True)


def test_reject_records_the_person_and_the_crawl_never_lands(work_db):
    held = _decided_by_hand(work_db, "reject", "currency misread")
    assert _crawl_row(work_db, held) == ("rejected", False)
    _run(work_db, 10, {**CLEAN, "idc_b": BASE * 3.4})
    assert _landed(work_db)["idc_b"] == [8]        # the next one at that level is held in turn


def test_accept_refuses_a_crawl_that_is_not_held(work_db):
    landed = _run(work_db, 8, CLEAN)["idc_a"]
    result = _cli(work_db, "accept", landed)
    assert result.exit_code == 2 and "not pending" in result.output
