"""A curated table's commit time is when someone edited it, so it carries no calendar signal:
the month-end marts (and the month phases, off-peak hours) leave its sources out, while a
catalog's dated history goes in. The rule has one home, pipelines/backfill/archives.py, whose
declaration every backfilled crawl carries (raw.crawls.calendar_signal), read by
intermediate.int_sources_without_calendar; with it switched on, the same curated history would
fill the month-end marts (so these tests can fail)."""

from __future__ import annotations

import shutil

import duckdb
import pytest

from pipelines.backfill.archives import ARCHIVES
from pipelines.warehouse.sql_models import load_models, run_model
from spiders.layout import SQL_DIR, work_db_path
from tests.backfill.conftest import read

CURATED = ("cloud-gpus:%", "full-stack:%")
CALENDAR_TABLES = ("intermediate.int_offer_month_depth", "intermediate.int_source_month_reads",
                   "marts.month_end_dip", "marts.month_phase_stability")


def _sources(con_or_root, table: str) -> set[str]:
    sql = f"select distinct source from {table}"
    if isinstance(con_or_root, duckdb.DuckDBPyConnection):
        return {s for s, in con_or_root.execute(sql).fetchall()}
    return {s for s, in read(con_or_root, sql)}


def _curated(sources: set[str]) -> set[str]:
    return {s for s in sources if s.split(":")[0] in ("cloud-gpus", "full-stack")}


def test_each_archive_declares_its_calendar_once_and_every_crawl_carries_it(backfilled):
    root, stats = backfilled
    assert {a.name: a.calendar_signal for a in ARCHIVES.values()} == {
        "skypilot-catalog": True, "cloud-gpus": False, "full-stack": False,
        "gcp-pricing": True, "alibaba-priceserver": False, "featurize-doc": False,
        "ustc-saids": False, "ikkem": False}
    carried = read(root, """select split_part(source, ':', 1), calendar_signal, count(*)
                            from raw.crawls where mode = 'archive' group by all order by 1""")
    prefixes = {a.prefix: a.calendar_signal for a in ARCHIVES.values() if a.name in stats}
    assert [(p, s) for p, s, _ in carried] == sorted(prefixes.items())
    assert _sources(root, "intermediate.int_sources_without_calendar") == {
        "cloud-gpus:aws", "cloud-gpus:lambda_cloud", "cloud-gpus:tensordock",
        "full-stack:aws", "full-stack:gcp"}


@pytest.mark.parametrize("table", CALENDAR_TABLES)
def test_the_calendar_marts_leave_curated_sources_out(backfilled, table):
    root, _ = backfilled
    found = _sources(root, table)
    assert not _curated(found)
    if table != "marts.month_phase_stability":
        assert "skypilot:aws" in found      # the catalog's dated history is read


def test_off_peak_hours_leave_curated_sources_out(backfilled):
    root, _ = backfilled
    assert not _curated(_sources(root, "marts.off_peak_discount"))


def test_with_the_rule_switched_on_curated_history_would_fill_them(backfilled, tmp_path):
    root, _ = backfilled
    copy = tmp_path / "calendar.db"
    shutil.copy(work_db_path(root), copy)
    con = duckdb.connect(str(copy))
    try:
        con.execute("update raw.crawls set calendar_signal = true")
        for model in load_models(SQL_DIR):
            run_model(con, model, full=True)
        assert _curated(_sources(con, "intermediate.int_offer_month_depth"))
        assert _curated(_sources(con, "intermediate.int_source_month_reads"))
        assert _curated(_sources(con, "marts.month_end_dip"))
    finally:
        con.close()
