"""The one home of which tier a test runs in. `make test` runs the fast tier, `make test-e2e`
the end-to-end tier, `make test-deploy` the deployed topology's; `.ci/run` runs all three, so
every test still runs in CI. Each tier collects the whole of tests/ (but the files that cannot
hold one of its tests, `may_hold`) and keeps the ids `tier_of` gives it (tests/conftest.py,
`--tier`), so together they run every test once (tests/test_tiers.py guards it).

A test's tier is the one of the longest entry below that names it (a directory, a file, or one
test as `file::name` with every parametrization of it), else fast; a test that would be fast
but uses one of END_TO_END_FIXTURES (a real run, a real crawl, Chromium) is end-to-end. A new
directory or file is therefore fast until it is listed, unless it sits in a listed directory
(tests/e2e, tests/faults) or uses those fixtures.
"""

from __future__ import annotations

FAST, E2E, DEPLOY = "fast", "e2e", "deploy"
TIERS = (FAST, E2E, DEPLOY)

# Fixtures that start what the end-to-end tier is for: the session's shared `gpuprices run`s
# (the real Dagster job over the replay server), the replay server that real `scrapy crawl`s
# fetch from, Chromium, the backfill of three archives of hundreds of commits.
END_TO_END_FIXTURES = frozenset({"snapshot_run", "default_run", "two_source_run", "replay_server",
                                 "browser", "backfilled"})

# The real Dagster job over the replay server, `scrapy crawl` subprocesses, crashes, faults
# injected into runs and crawls, soaks.
END_TO_END = (
    "tests/e2e",
    "tests/faults",
    "tests/backfill/test_record_run.py",
    "tests/backfill/test_resume.py",                  # a killed backfill, resumed
    "tests/backfill/test_cli.py::"
    "test_the_summary_names_the_database_it_published_and_a_second_run_adds_nothing",
    "tests/backfill/test_record.py::"
    "test_the_bundled_record_is_what_the_builder_makes_from_the_same_clones",
    "tests/bench",                                    # `make bench`'s figures, measured
    # every model built hour by hour against a full rebuild (the whole DAG, twice)
    "tests/sql/test_incremental_marts.py::"
    "test_every_model_built_incrementally_equals_a_full_rebuild",
    # the history rows each model's hourly build scans, on a 35-day and a 140-day simulated
    # history (both built hour by hour)
    "tests/sql/test_hourly_scans.py",
    # publishing by generations: the generation updated in place equals a whole copy, hour
    # after hour, and every fallback (a reader, a writer session, a failure, a kill) copies it
    # whole; each lands hours of a simulated history and builds every model
    "tests/pipelines/test_generations.py",
    # `make truth`'s grid of simulated histories, each published and scored
    "tests/truth/test_truth_grid.py::test_a_tiny_grid_writes_every_key",
    "tests/cli/test_check_sources.py",                # every source's snapshot probed, Chromium
    "tests/report/test_report_first_screen.py",       # the report at 1,280 x 800 in Chromium
    "tests/pipelines/test_crawl_many.py",
    "tests/pipelines/test_executor_choice.py",       # the executors' step processes, started
    "tests/pipelines/test_feeds_e2e.py",
    "tests/spiders/test_crawls.py",
    "tests/spiders/test_runpod.py::test_crawl_without_country_codes_fails_its_monitor",
    "tests/spiders/test_default_sources.py::test_a_crawl_the_run_opted_in_to_is_crawled_and_says_so",
    "tests/spiders/test_default_sources.py::"
    "test_a_crawler_skips_an_opt_in_source_it_was_not_told_to_crawl",
)

# The deployed topology (Postgres, code server, daemon, webserver): they wait on the schedule's
# minute ticks (`.ci/run` runs them last, alone).
DEPLOYED = (
    "tests/deploy/test_deploy_command.py",
    "tests/deploy/test_local_topology.py",
    "tests/deploy/test_multiprocess_topology.py",
)

# Fast files inside a listed directory: in-process checks of what the faults feed in.
FAST_INSIDE = (
    "tests/faults/test_crash_loop.py",
    "tests/faults/test_price_input.py",
    "tests/faults/test_disk_faults.py",
)

LISTED = {E2E: END_TO_END, DEPLOY: DEPLOYED, FAST: FAST_INSIDE}


def names(nodeid: str, entry: str) -> bool:
    """Whether a list entry names the test `nodeid` (a pytest id relative to the repository)."""
    return nodeid == entry or any(nodeid.startswith(entry + mark) for mark in ("/", "::", "["))


def may_hold(path: str, tier: str) -> bool:
    """Whether the test file `path` (relative to the repository) can hold a test of `tier`,
    known before collecting it: a deploy-tier test is one DEPLOYED names (no fixture makes one),
    so `--tier deploy` collects those files alone (the whole suite took each worker 18 s, for 7
    tests); any file may hold a fast or an end-to-end test (END_TO_END_FIXTURES)."""
    if tier != DEPLOY:
        return True
    return any(names(path, entry) or names(entry, path) for entry in DEPLOYED)


def tier_of(nodeid: str, fixtures: tuple[str, ...] | list[str] = ()) -> str:
    """The tier that runs the test `nodeid`, which uses `fixtures`."""
    matches = [(len(entry), tier) for tier, entries in LISTED.items() for entry in entries
               if names(nodeid, entry)]
    tier = max(matches)[1] if matches else FAST
    if tier == FAST and END_TO_END_FIXTURES.intersection(fixtures):
        return E2E
    return tier
