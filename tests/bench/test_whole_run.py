"""(e)'s crawl span (tests/workshop/bench/whole_run.py): the crawl's wall time read from its
verdicts, since `gpuprices run` starts it before the Dagster run and the crawl step's own time is
only what is left of it."""

import pytest

from tests.workshop.bench.whole_run import _span


def verdict(started: str | None, finished: str | None) -> dict:
    return {"started_at": started, "finished_at": finished}


@pytest.mark.parametrize("verdicts, seconds", [
    ([verdict("2026-12-06T10:00:00+00:00", "2026-12-06T10:00:04+00:00"),
      verdict("2026-12-06T10:00:01+00:00", "2026-12-06T10:00:07+00:00")], 7.0),
    # a skipped source has no times: the others still count
    ([verdict(None, None), verdict("2026-12-06T10:00:01+00:00", "2026-12-06T10:00:03+00:00")],
     2.0),
    ([], None),
    ([verdict(None, None)], None),
    ([verdict("not a time", "2026-12-06T10:00:03+00:00")], None),
])
def test_the_crawl_span_runs_from_the_first_start_to_the_last_finish(verdicts, seconds):
    assert _span(verdicts) == seconds
