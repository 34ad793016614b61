"""Shared fixtures: the replay server, one `gpuprices run` over the snapshots for the tests that
only read it, temp data dirs, an in-memory DuckDB with the pipeline's schema. Shared functions
live in tests/helpers/."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import pytest

from pipelines.warehouse import price_age
from pipelines.warehouse.db import ensure_schema
from spiders.layout import SNAPSHOT_DIR
from spiders.replay_server import ReplayServer
from tests.helpers import tiers
from tests.helpers.observations import TODAY
from tests.helpers.runs import TWO_SOURCES, SharedRun, shared_run
from tests.helpers.shared import session_root

# Every `gpuprices run` of the suite would load the public price record first (~25 s, 29k
# offers); the record's own tests (tests/backfill/test_record*.py) turn it on where they need it.
os.environ["GPUPRICES_RECORD"] = "off"


@pytest.fixture(scope="session")
def replay_server():
    with ReplayServer(SNAPSHOT_DIR) as server:
        yield server


@pytest.fixture(scope="session")
def snapshot_run(tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    """`gpuprices run` over every bundled snapshot, opt-in ones too (GPUPRICES_OPT_IN=all: the
    tests of the pipeline's mechanics use the illustrative fixtures), once per test session (all
    its workers)."""
    return shared_run(session_root(tmp_path_factory) / "snapshot_run")


@pytest.fixture(scope="session")
def default_run(tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    """`gpuprices run` as a new user runs it: no source opted in (GPUPRICES_OPT_IN unset), once
    per session."""
    return shared_run(session_root(tmp_path_factory) / "default_run", opt_in=None)


@pytest.fixture(scope="session")
def two_source_run(tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    """`gpuprices run` over idc_sinnet_bj (HTML) and azure (JSON), the pair the fault and bad-input
    tests start from, once per session."""
    return shared_run(session_root(tmp_path_factory) / "two_source_run", *TWO_SOURCES)


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    monkeypatch.setenv("GPUPRICES_DATA_DIR", str(path))
    return path


@pytest.fixture(autouse=True)
def test_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Readers in this process count price ages to TODAY, the day after the hand-made
    observations' DAY, not to the real date: an offer seen that day stays within the horizon of
    "now" however long after it the suite runs (the models count to TODAY too: tests/helpers/
    observations.set_test_clock)."""
    monkeypatch.setattr(price_age, "utc_today", lambda: TODAY)


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the pipeline's schema (the SQL and alert tests build on it)."""
    connection = duckdb.connect()
    ensure_schema(connection)
    yield connection
    connection.close()


# The suite's order under `-n 2 --dist loadfile --no-loadscope-reorder` (Makefile): the longest
# files first, longest of all first (each a few tests that make several real runs; their totals
# from the end-to-end tier's --durations on clean clones, docs/scaling.md), then every other file
# with an end-to-end test, then the rest in their own order. Long files then run beside each other
# while both workers are fresh, and the many short ones even out the end; xdist's default order
# (most tests first) left the longest files to the end, one worker alone. A worker takes its next
# file early when 2 or fewer tests of its current one are left. Files that start from the same
# shared run are kept apart (the index run between the two on the snapshot run), so that one
# worker seldom waits on the lock while the other makes it.
LONGEST_FIRST = ("tests/faults/test_crash_safety.py",          # ~330 s: 6 killed runs and reruns
                 "tests/backfill/test_record_run.py",          # 130-225 s: the record's first run
                 "tests/e2e/test_job_on_snapshots.py",         # ~160 s: the snapshot run, 4 reruns
                 "tests/e2e/test_index_run.py",                # 65-90 s: on the two-source run
                 "tests/e2e/test_bad_input.py",                # ~95 s: on the snapshot run
                 "tests/cli/test_check_sources.py",            # 75-95 s: every source probed
                 "tests/faults/test_hostile_input.py",         # ~75 s
                 "tests/e2e/test_multiprocess_executor.py",    # ~70 s
                 "tests/e2e/test_soak.py",                     # ~65 s
                 "tests/bench/test_bench.py",                  # ~55 s
                 "tests/e2e/test_price_basis_page.py",         # ~50 s
                 "tests/faults/test_concurrent_runs.py")       # ~40 s

# Every id this session collected, by tier, before `--tier` kept one (tests/test_tiers.py).
COLLECTED_BY_TIER = pytest.StashKey[dict[str, list[str]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--tier", choices=tiers.TIERS, default=None,
                     help="run only this tier's tests (tests/helpers/tiers.py); all without it")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With `--tier`, a test file that cannot hold one of its tests is not collected
    (tiers.may_hold: the deploy tier collects its own files alone)."""
    tier = config.getoption("--tier")
    if tier is None or collection_path.suffix != ".py" or collection_path.name == "conftest.py":
        return None
    try:
        relative = collection_path.relative_to(config.rootpath).as_posix()
    except ValueError:
        return None
    return None if tiers.may_hold(relative, tier) else True


@pytest.hookimpl(tryfirst=True)       # before `-m` or `-k` deselect any: the whole collection
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    by_tier: dict[str, list[str]] = {tier: [] for tier in tiers.TIERS}
    tier_of = {item: tiers.tier_of(item.nodeid, getattr(item, "fixturenames", ()))
               for item in items}
    for item, tier in tier_of.items():
        by_tier[tier].append(item.nodeid)
        if tier != tiers.FAST:
            item.add_marker(tier)
    config.stash[COLLECTED_BY_TIER] = by_tier
    chosen = config.getoption("--tier")
    if chosen is not None:
        left = [item for item in items if tier_of[item] != chosen]
        if left:
            config.hook.pytest_deselected(items=left)
        items[:] = [item for item in items if tier_of[item] == chosen]
    rank = {config.rootpath / path: place for place, path in enumerate(LONGEST_FIRST)}
    end_to_end = {item.path for item in items if item.get_closest_marker(tiers.E2E)}
    # stable: within each group every file keeps its order
    items.sort(key=lambda item: (rank.get(item.path, len(rank)), item.path not in end_to_end))


def pytest_report_collectionfinish(config: pytest.Config) -> list[str]:
    by_tier = config.stash.get(COLLECTED_BY_TIER, {})
    if not by_tier:         # xdist's controller collects nothing itself
        return []
    counts = ", ".join(f"{tier} {len(ids)}" for tier, ids in by_tier.items())
    return [f"tiers (tests/helpers/tiers.py): {counts}; {sum(map(len, by_tier.values()))} in all"]
