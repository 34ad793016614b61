"""`gpuprices run` with the public price record on, once, on a temp data directory, beside the
session's default run without it (`default_run`: nothing opted in, GPUPRICES_RECORD=off as the
whole suite): the record's
offers are archive observations with their provenance, the history spans years, the price index
is built from what has calendar dates, and the alerts are the same as without the record
(history is not news). Then `gpuprices record` on the same directory loads nothing."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pipelines.backfill.record import RECORD_DIR, read_manifest
from spiders.default_sources import OPT_IN_ENV
from spiders.layout import REPO_ROOT
from tests.helpers.runs import query


def _gpuprices(data_dir, *args):
    env = {**os.environ, "GPUPRICES_DATA_DIR": str(data_dir), "GPUPRICES_RECORD": "on",
           "DAGSTER_HOME": str(data_dir.parent / "dagster_home")}
    env.pop(OPT_IN_ENV, None)          # a new user's run: nothing opted in
    return subprocess.run([sys.executable, "-m", "pipelines.cli", *args], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def record_run(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("record_run") / "data"
    proc = _gpuprices(data_dir, "run")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return data_dir, proc


def test_the_records_offers_are_archive_observations_with_their_provenance(record_run):
    data_dir, proc = record_run
    parts = read_manifest(RECORD_DIR)
    versions = sum(len(p.versions) for p in parts.values())
    assert f"public price record: loaded {versions} versions (0 loaded before)" in proc.stdout
    rows = query(data_dir, """
        select archive, count(distinct archive_commit), bool_and(reaches_via = 'archive'),
               bool_and(archive_file is not null and archive_line > 0
                        and url like 'https://github.com/%/blob/' || archive_commit || '/%')
        from observations where archive is not null group by 1 order by 1""")
    assert [r[0] for r in rows] == sorted(parts)
    for archive, commits, via_archive, cited in rows:
        assert via_archive and cited, archive
        assert 0 < commits <= len(parts[archive].versions)


def test_history_spans_years_and_the_index_has_the_calendar_archives_rows(record_run):
    data_dir, _ = record_run
    (days,) = query(data_dir, "select date_diff('day', min(observed_at), max(observed_at)) "
                              "from observations")[0]
    assert days >= 2 * 365
    (index_rows,) = query(data_dir, "select count(*) from marts.price_index")[0]
    # a curated table's edit dates are in no index series (int_index_offer_days): the index
    # is built from the record's archives with calendar dates, when it holds any
    calendar = any(p.calendar_signal for p in read_manifest(RECORD_DIR).values())
    assert (index_rows > 0) == calendar, index_rows


def test_the_first_run_with_the_record_sends_the_alerts_the_run_without_it_sends(
        record_run, default_run):
    # both runs are a new user's: nothing opted in (a run that opts in to more sources alerts on
    # more offers, whatever the record does)
    data_dir, _ = record_run
    assert default_run.returncode == 0, default_run.stdout + default_run.stderr
    assert "public price record: left out (GPUPRICES_RECORD=off)" in default_run.stdout
    sql = "select rule, alert_key from alerts.outbox order by all"
    with_record, without = query(data_dir, sql), query(default_run.data_dir, sql)
    assert without, "the run without the record alerts: the comparison must mean something"
    assert with_record == without


def test_gpuprices_record_then_shows_the_record_and_loads_nothing(record_run):
    data_dir, _ = record_run
    before = query(data_dir, "select count(*) from observations")
    proc = _gpuprices(data_dir, "record")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "public price record in" in proc.stdout and "edit dates (a curated table)" in \
        proc.stdout
    assert "already loaded" in proc.stdout and "brought up to date" not in proc.stdout
    assert query(data_dir, "select count(*) from observations") == before
