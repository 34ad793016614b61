"""How a crawl's verdict names a changed answer (issue 39 item 4), in process: a key the spider
reads that is gone, a body that is an HTML page where JSON was expected, rows the spider left out
on purpose when they are every row. The real crawls: tests/faults/test_source_faults.py."""

from collections import Counter

import pytest

from spiders.base.json_api import NotJson, checked_json
from spiders.extensions.monitors import SKIPPED_STAT, evaluate, parse_error_text
from tests.helpers.responses import json_response

FINISHED = {"finish_reason": "finished"}
URL = "https://api.vendor.test/prices"


@pytest.mark.parametrize(("error", "expected"), [
    (KeyError("gpu_name"), "field 'gpu_name' missing from the answer (KeyError: renamed or "
                           "dropped?)"),
    (ValueError("azure: no list at 'Items'"), "azure: no list at 'Items'"),
    (KeyError(), "KeyError"),          # no key named: the class, never an empty reason
    (TypeError(), "TypeError"),
])
def test_a_parse_error_is_named(error, expected):
    assert parse_error_text(error) == expected


@pytest.mark.parametrize(("body", "content_type", "status", "expected"), [
    (b"<!DOCTYPE html><html><head><title>Just a moment...</title></head></html>", "text/html",
     200, f"expected JSON from {URL}, got an HTML page (HTTP 200, Content-Type text/html, "
          "title 'Just a moment...')"),
    (b"  \n<html><body>Service Unavailable</body></html>", "application/json", 200,
     f"expected JSON from {URL}, got an HTML page (HTTP 200, Content-Type application/json)"),
    (b"<h1>Forbidden</h1>", "", 200, "got an HTML page (HTTP 200, Content-Type none)"),
    (b"not json at all", "application/json", 200,
     f"expected JSON from {URL}, got a body that is not JSON (Expecting value: line 1 "
     "column 1 (char 0))"),
    (b"", "application/json", 200, "got a body that is not JSON (Expecting value"),
])
def test_a_body_that_is_not_json_says_what_it_is(body, content_type, status, expected):
    response = json_response(URL, {}, status).replace(
        body=body, headers={"Content-Type": content_type} if content_type else {})
    with pytest.raises(NotJson) as raised:
        checked_json(response)
    assert expected in str(raised.value)


def test_json_is_still_read_whatever_its_label():
    response = json_response(URL, {"Items": [1]}).replace(headers={"Content-Type": "text/html"})
    assert checked_json(response) == {"Items": [1]}


@pytest.mark.parametrize(("offers", "skipped", "expected"), [
    # every row left out for one reason: a changed unit says so beside the count
    (0, {"unitOfMeasure '1 Minute', not '1 Hour'": 120},
     "rows left out: unitOfMeasure '1 Minute', not '1 Hour' x120"),
    (3, {"b reason": 2, "a reason": 5}, "rows left out: a reason x5, b reason x2"),
])
def test_rows_left_out_are_named_when_too_few_offers_remain(offers, skipped, expected):
    stats = {**FINISHED, **{SKIPPED_STAT + reason: n for reason, n in skipped.items()}}
    failures = evaluate(stats, offers=offers, min_offers=20, missing=Counter(), errors=[])
    # the cause first (what a short view shows), the count it left last
    assert failures == [expected, f"only {offers} offers collected (expected at least 20)"]


def test_the_cause_comes_before_the_count_it_left():
    stats = {**FINISHED, "httperror/response_ignored_status_count/403": 1}
    failures = evaluate(stats, offers=0, min_offers=20, missing=Counter(),
                        errors=["parse error on https://x.test/: field 'gpu_name' missing"])
    assert failures == ["1 responses had an error status (HTTP 403 x1)",
                        "parse error on https://x.test/: field 'gpu_name' missing",
                        "only 0 offers collected (expected at least 20)"]


def test_rows_left_out_of_a_passing_crawl_are_no_failure():
    stats = {**FINISHED, SKIPPED_STAT + "Windows meter": 8}
    assert evaluate(stats, offers=30, min_offers=20, missing=Counter(), errors=[]) == []


def test_huaweicloud_s_keyed_path_names_an_html_page_too():
    """huaweicloud_cn's BSS answer is read with Decimal floats by its own json.loads; the body is
    checked first (checked_json), so an HTML page there is named, not the decoder's error."""
    from spiders.vendors.huaweicloud_cn import BSS_ENDPOINT, HuaweiCloudCnSpider

    url = f"{BSS_ENDPOINT}/v2/bills/ratings/period-resources/subscribe-rate"
    response = json_response(url, {}).replace(
        body=b"<html><head><title>502 Bad Gateway</title></head></html>",
        headers={"Content-Type": "text/html"})
    with pytest.raises(NotJson) as raised:
        list(HuaweiCloudCnSpider().parse_bss(response, "cn-north-4", "month",
                                             "ListRateOnPeriodDetailResponse", [{}]))
    assert str(raised.value) == (f"expected JSON from {url}, got an HTML page (HTTP 200, "
                                 "Content-Type text/html, title '502 Bad Gateway')")
