"""The close-spider monitor's rules, over synthetic crawl stats (no crawl needed)."""

from collections import Counter

import pytest

from spiders.extensions.monitors import evaluate

FINISHED = {"finish_reason": "finished"}


def test_a_healthy_crawl_passes():
    assert evaluate(FINISHED, offers=30, min_offers=20, missing=Counter(), errors=[]) == []


@pytest.mark.parametrize("stats, offers, missing, errors, expected", [
    (FINISHED, 3, Counter(), [], "only 3 offers collected (expected at least 20)"),
    ({"finish_reason": "closespider_timeout"}, 30, Counter(), [],
     "crawl ended with 'closespider_timeout', not 'finished'"),
    (FINISHED, 30, Counter({"region_text": 2}), [],
     "2 of 30 offers miss required field 'region_text'"),
    ({**FINISHED, "downloader/exception_type_count/twisted.internet.error.TimeoutError": 3}, 30,
     Counter(), [], "3 download attempts failed (TimeoutError x3)"),
    ({**FINISHED, "httperror/response_ignored_status_count/503": 2}, 30, Counter(), [],
     "2 responses had an error status (HTTP 503 x2)"),
    (FINISHED, 30, Counter(), ["parse error on https://x.test/: boom"],
     "parse error on https://x.test/: boom"),
])
def test_each_rule_fails_with_its_reason(stats, offers, missing, errors, expected):
    failures = evaluate(stats, offers=offers, min_offers=20, missing=missing, errors=errors)
    assert expected in failures
