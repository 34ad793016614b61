"""The one home of which tier a test runs in. `make test` runs the fast tier, `make test-e2e`
the end-to-end tier, `make test-deploy` the deployed topology's; `.ci/run` runs all three, so
every test still runs in CI. Each tier collects the whole of tests/ and keeps the ids
`tier_of` gives it (tests/conftest.py, `--tier`), so together they run every test once
(tests/test_tiers.py guards it).

A test is fast unless an entry below names it: a directory, a file, or one test
(`file::name`, every parametrization of it). A new directory or file is therefore fast until it
is listed; list it here when its tests start real processes: the Dagster job (`gpuprices run`),
a `scrapy crawl` over the replay server, Chromium, a kill or a fault injected into a run.
"""

from __future__ import annotations

FAST, E2E, DEPLOY = "fast", "e2e", "deploy"
TIERS = (FAST, E2E, DEPLOY)

# The real Dagster job over the replay server (`gpuprices run`, the session's shared runs),
# Chromium on a built report or the UI, `scrapy crawl` subprocesses, crashes, faults and soaks.
END_TO_END = (
    "tests/e2e",
    "tests/faults/test_concurrent_runs.py",
    "tests/faults/test_crash_safety.py",
    "tests/faults/test_hostile_input.py",
    "tests/faults/test_step_isolation.py",
    "tests/faults/test_disk_faults.py::test_a_real_run_clears_a_stale_wal_for_every_reader",
    "tests/faults/test_fetch_faults.py::"
    "test_pipeline_with_a_source_down_keeps_its_earlier_observations",
    "tests/backfill/test_record_run.py",
    "tests/pipelines/test_feeds_e2e.py",
    "tests/report/test_report.py::test_report_on_a_real_replayed_run",
    "tests/sql/test_market_claim_verdicts.py::"
    "test_every_verdict_of_a_built_database_is_one_of_the_three",
    "tests/sql/test_price_outliers.py::"
    "test_real_spreads_in_the_bundled_snapshots_hold_nothing_back",
)

# The deployed topology (Postgres, code server, daemon, webserver): they wait on the schedule's
# minute ticks, and beside the other tiers' workers their timings would measure the suite.
DEPLOYED = (
    "tests/deploy/test_deploy_command.py",
    "tests/deploy/test_local_topology.py",
    "tests/deploy/test_multiprocess_topology.py",
)

LISTED = {E2E: END_TO_END, DEPLOY: DEPLOYED}


def names(nodeid: str, entry: str) -> bool:
    """Whether a list entry names the test `nodeid` (a pytest id relative to the repository)."""
    return nodeid == entry or any(nodeid.startswith(entry + mark) for mark in ("/", "::", "["))


def tier_of(nodeid: str) -> str:
    """The tier that runs the test `nodeid`: the first list that names it, else the fast one."""
    for tier, entries in LISTED.items():
        if any(names(nodeid, entry) for entry in entries):
            return tier
    return FAST
