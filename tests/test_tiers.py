"""No test lost between the tiers: every id the suite collects runs in exactly one of `make test`
(fast), `make test-e2e` and `make test-deploy`, and `.ci/run` runs all three. Each target
collects the whole suite and keeps its tier (tests/helpers/tiers.py, `--tier` in
tests/conftest.py), so the guard is that no target narrows its collection, no conftest hides a
file from it (but `--tier` the files that cannot hold one of its tests, and none that does), no
test picks its tier by hand, and every list entry still names a test."""

from __future__ import annotations

import re

import pytest

from spiders.layout import REPO_ROOT
from tests.conftest import COLLECTED_BY_TIER
from tests.helpers import tiers

TARGETS = {"test": tiers.FAST, "test-e2e": tiers.E2E, "test-deploy": tiers.DEPLOY}
# What a tier's pytest may pass besides `--tier`: how to run, never which tests.
RUN_OPTIONS = {"-n", "2", "--dist", "loadfile", "--no-loadscope-reorder", "-rP",
               "--durations=25", "$(PYTEST_ARGS)"}


def recipes(makefile: str) -> dict[str, list[str]]:
    """Each Makefile target's recipe lines, with the Makefile's `NAME := value` variables
    expanded (`$(PYTEST_ARGS)`, which a user sets, stays as written)."""
    variables = dict(re.findall(r"^(\w+) :?= (.*)$", makefile, re.MULTILINE))
    found: dict[str, list[str]] = {}
    target = None
    for line in makefile.splitlines():
        if line.startswith("\t") and target is not None:
            found[target].append(re.sub(r"\$\((\w+)\)",
                                        lambda m: variables.get(m.group(1), m.group(0)), line))
        elif match := re.match(r"^([\w-]+):(?!=)", line):
            target = match.group(1)
            found[target] = []
        else:
            target = None
    return found


def pytest_arguments(recipe: list[str]) -> list[list[str]]:
    """The arguments after `-m pytest` of every pytest a recipe runs."""
    runs = []
    for line in recipe:
        words = line.strip().lstrip("@").split()
        if "pytest" in words:
            runs.append(words[words.index("pytest") + 1:])
    return runs


@pytest.mark.parametrize("nodeid, fixtures, tier", [
    ("tests/e2e/test_ui.py::test_ui_starts", (), tiers.E2E),
    ("tests/e2e", (), tiers.E2E),
    ("tests/e2e_more/test_x.py::test_y", (), tiers.FAST),         # a prefix is not a directory
    ("tests/faults/test_crash_safety.py::test_kill[2]", (), tiers.E2E),
    ("tests/faults/test_a_new_soak.py::test_soak", (), tiers.E2E),  # a listed directory's
    ("tests/faults/test_price_input.py::test_a_price[x]", (), tiers.FAST),  # the longer entry
    ("tests/faults/test_price_input.py::test_a_price", ("two_source_run",), tiers.E2E),
    ("tests/spiders/test_default_sources.py::"
     "test_a_crawl_the_run_opted_in_to_is_crawled_and_says_so", (), tiers.E2E),
    ("tests/spiders/test_default_sources.py::"
     "test_a_crawl_the_run_opted_in_to_is_crawled_and_says_so2", (), tiers.FAST),
    ("tests/spiders/test_aws.py::test_parses", ("tmp_path",), tiers.FAST),
    ("tests/spiders/test_aws.py::test_crawls", ("tmp_path", "replay_server"), tiers.E2E),
    ("tests/report/test_report.py::test_draws[a]", ("browser",), tiers.E2E),
    ("tests/sql/test_x.py::test_on_a_real_run", ("snapshot_run",), tiers.E2E),
    ("tests/deploy/test_local_topology.py::test_ticks", ("replay_server",), tiers.DEPLOY),
    ("tests/deploy/test_deploy_units.py::test_units", (), tiers.FAST),
    ("tests/a_new_directory/test_new.py::test_new", (), tiers.FAST),  # fast until it is listed
])
def test_a_test_is_fast_unless_a_list_or_a_fixture_says_otherwise(nodeid, fixtures, tier):
    assert tiers.tier_of(nodeid, fixtures) == tier


def test_every_collected_test_is_in_exactly_one_tier(request):
    by_tier = request.config.stash[COLLECTED_BY_TIER]
    every = [nodeid for ids in by_tier.values() for nodeid in ids]
    assert len(every) == len(set(every))
    assert set(by_tier) == set(tiers.TIERS)
    assert request.node.nodeid in by_tier[tiers.FAST]


@pytest.mark.parametrize("path, tier, held", [
    ("tests/deploy/test_local_topology.py", tiers.DEPLOY, True),
    ("tests/deploy/test_deploy_units.py", tiers.DEPLOY, False),    # fast, beside them
    ("tests/e2e/test_soak.py", tiers.DEPLOY, False),
    ("tests/deploy/test_deploy_units.py", tiers.FAST, True),
    ("tests/sql/test_x.py", tiers.E2E, True),                      # a fixture may make it e2e
])
def test_a_tier_skips_collecting_only_what_cannot_hold_its_tests(path, tier, held):
    assert tiers.may_hold(path, tier) == held


def test_no_file_skipped_by_a_tier_holds_one_of_its_tests(request):
    """What `--tier` leaves uncollected (tiers.may_hold) holds none of the tier's ids in the
    whole collection."""
    by_tier = request.config.stash[COLLECTED_BY_TIER]
    skipped = [nodeid for tier, ids in by_tier.items() for nodeid in ids
               if not tiers.may_hold(nodeid.split("::")[0], tier)]
    assert not skipped


def test_each_tier_target_collects_the_whole_suite():
    found = recipes((REPO_ROOT / "Makefile").read_text(encoding="utf-8"))
    for target, tier in TARGETS.items():
        (arguments,) = pytest_arguments(found[target])
        place = arguments.index("--tier")
        assert arguments[place + 1] == tier, target
        narrowing = set(arguments[:place] + arguments[place + 2:]) - RUN_OPTIONS
        assert not narrowing, f"`make {target}` selects tests with {narrowing}: its tier does"
    untiered = [t for t, recipe in found.items() if pytest_arguments(recipe) and t not in TARGETS]
    assert not untiered, f"pytest runs outside the tier targets: {untiered}"


def test_ci_runs_every_tier():
    """`.ci/run` starts each tier's target once, the fast tier first (the other two run side by
    side), and passes none of them an option that would narrow it: at most a worker count and
    its own cache dir."""
    steps = re.findall(r"^(?:nice -n \d+ )?make ([\w-]+)(.*)$",
                       (REPO_ROOT / ".ci/run").read_text(encoding="utf-8"), re.MULTILINE)
    assert sorted(target for target, _ in steps) == sorted(TARGETS)
    assert steps[0] == ("test", "")
    for target, rest in steps:
        for passed in re.findall(r'PYTEST_ARGS="([^"]*)"', rest):
            assert re.fullmatch(r"(-n \d+ )?-o cache_dir=\S+", passed), (target, passed)


def test_no_test_picks_its_tier_by_hand_and_no_conftest_hides_one():
    by_hand = []
    for path in (REPO_ROOT / "tests").rglob("*.py"):
        if path.name in ("test_tiers.py", "tiers.py"):
            continue
        text = path.read_text(encoding="utf-8")
        if re.search(r"mark\.(e2e|deploy)\b|\bcollect_ignore", text):
            by_hand.append(str(path.relative_to(REPO_ROOT)))
    assert not by_hand, "tiers are given by tests/helpers/tiers.py alone"


@pytest.mark.parametrize("tier, entry", [(t, e) for t, entries in tiers.LISTED.items()
                                         for e in entries])
def test_every_listed_entry_names_a_test(tier, entry):
    path, _, name = entry.partition("::")
    target = REPO_ROOT / path
    assert target.exists(), f"{entry} ({tier}): no such file or directory"
    if name:
        assert re.search(rf"^def {re.escape(name)}\(", target.read_text(encoding="utf-8"),
                         re.MULTILINE), f"{entry} ({tier}): no such test"
    listed = [(t, e) for t, entries in tiers.LISTED.items() for e in entries]
    assert [e for _, e in listed].count(entry) == 1, f"{entry} is listed twice"
    outer = [(t, e) for t, e in listed if e != entry and tiers.names(entry, e)]
    # an entry inside another one is there to give its tests another tier
    assert all(t != tier for t, _ in outer), f"{entry} is inside {outer} of the same tier"
