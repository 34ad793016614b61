"""Hostile price values: NaN, Infinity, 0, negatives and absurd magnitudes are quarantined at stage
`price` with a reason naming the value, whichever way a source writes them (an API number, a
decimal string, a price text); none is dropped by a spider or falls to stage `error`.

Pure functions (normalization) plus JSON spiders fed a body with such prices in-process.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from scrapy.http import Request, TextResponse
from scrapy.utils.test import get_crawler

from pipelines.normalize import MAX_PRICE_AMOUNT, Quarantined, normalize_offer
from pipelines.normalize.batch import normalize_pending
from spiders.registry import spider_class
from tests.helpers.responses import file_response, snapshot_entries

API_OFFER = {"source": "azure", "vendor": "Microsoft Azure", "vendor_kind": "hyperscaler",
             "sku": "Standard_NC24ads_A100_v4", "gpu_text": "A100 80GB PCIe", "gpu_count": 1,
             "region_text": "eastus", "offer_kind": "on_demand", "currency": "USD",
             "billing_period": "hour", "url": "https://prices.example/api", "raw_ref": "0" * 64,
             "observed_at": "2026-11-30T09:00:00Z", "price_amount": "3.67"}
TEXT_OFFER = {**{k: v for k, v in API_OFFER.items() if k not in ("price_amount", "currency")},
              "source": "idc_x", "region_text": "北京", "price_text": "¥32.00/时"}

# (value as the API or page gives it, words the reason must carry)
HOSTILE_AMOUNTS = [
    (float("nan"), "not a finite number: nan"),
    ("NaN", "not a finite number: 'NaN'"),
    (float("inf"), "not a finite number: inf"),
    ("Infinity", "not a finite number: 'Infinity'"),
    ("-Infinity", "not a finite number: '-Infinity'"),
    ("sNaN", "not a finite number: 'sNaN'"),
    (0, "must be positive, got 0"),
    ("0.00", "must be positive, got '0.00'"),
    (-0.0, "must be positive, got -0.0"),
    (-3.67, "must be positive, got -3.67"),
    ("1e400", "'1e400' is beyond any listed price"),
    (1e30, "1e+30 is beyond any listed price"),
    ("1" + "0" * 40, "is beyond any listed price"),
    ("9" * 100_000, "(100002 characters) is beyond any listed price"),   # named, not repeated
    ("1e9999999999999999999", "is not a number"),        # beyond Decimal's own exponent range
    ("abc", "is not a number: 'abc'"),
]


def quarantine_of(item: dict) -> Quarantined:
    with pytest.raises(Quarantined) as caught:
        normalize_offer(item)
    return caught.value


@pytest.mark.parametrize("field", ["price_amount", "list_price_amount"])
@pytest.mark.parametrize("value, words", HOSTILE_AMOUNTS)
def test_a_hostile_amount_is_a_price_problem_naming_the_value(field, value, words):
    problem = quarantine_of({**API_OFFER, field: value})
    assert problem.stage == "price"
    assert field in problem.reason and words in problem.reason
    assert len(problem.reason) < 200


@pytest.mark.parametrize("field", ["price_amount", "list_price_amount"])
@pytest.mark.parametrize(("value", "words"), [(True, "holds true/false True"),
                                              ([1, 2], "holds an array [1, 2]"),
                                              ({"cny": 5}, "holds an object {'cny': 5}")])
def test_an_amount_of_the_wrong_json_type_is_an_item_problem(field, value, words):
    problem = quarantine_of({**API_OFFER, field: value})
    assert problem.stage == "item"
    assert problem.reason.startswith(f"{field} {words}, not a number or text"), problem.reason


@pytest.mark.parametrize("low, high, words", [
    ("nan", "3", "price_low is not a finite number"),
    ("1", "Infinity", "price_high is not a finite number"),
    ("0", "3", "price_low must be positive"),
    ("1e30", "1e31", "price_low '1e30' is beyond any listed price"),
])
def test_a_hostile_range_end_is_a_price_problem(low, high, words):
    item = {**API_OFFER, "price_low": low, "price_high": high, "range_end": "low"}
    del item["price_amount"]
    problem = quarantine_of(item)
    assert (problem.stage, words in problem.reason) == ("price", True), problem.reason


@pytest.mark.parametrize("price_text, words", [
    ("¥0/时", "zero amount"),
    ("¥0.00/时", "zero amount"),
    ("¥-5/时", "negative amount"),
    ("¥NaN/时", "not a price"),
    ("¥Infinity/时", "not a price"),
    ("¥1" + "0" * 40 + "/时", "is beyond any listed price"),
    ("¥" + "9" * 100_000 + "/时", "(100005 characters) is beyond any listed price"),
])
def test_a_hostile_price_text_is_a_price_problem(price_text, words):
    problem = quarantine_of({**TEXT_OFFER, "price_text": price_text})
    assert problem.stage == "price" and words in problem.reason, problem.reason
    assert len(problem.reason) < 500


def test_the_largest_plausible_amount_still_normalizes():
    # the cap sits far above any real listing: a year of an 8-GPU H100 server in IDR lands
    row = normalize_offer({**API_OFFER, "gpu_text": "H100 80GB SXM5", "gpu_count": 8,
                           "currency": "IDR", "billing_period": "year",
                           "price_amount": "2800000000"})
    assert row["price_amount"] == Decimal("2800000000") < MAX_PRICE_AMOUNT


def test_the_batch_quarantines_hostile_prices_at_stage_price_never_error():
    """Through normalize_pending, as the pipeline runs it: the item JSON as Scrapy writes it
    (NaN and Infinity as bare literals, which DuckDB and Python both read)."""
    pending = [("crawl", n, "azure", json.dumps({**API_OFFER, "sku": f"s{n}", "price_amount": v}))
               for n, (v, _) in enumerate(HOSTILE_AMOUNTS)]
    pending.append(("crawl", len(pending), "azure", json.dumps(API_OFFER)))
    batch, quarantined = normalize_pending(pending)
    assert len(batch) == 1
    assert sorted(q["item_no"] for q in quarantined) == list(range(len(HOSTILE_AMOUNTS)))
    assert {q["stage"] for q in quarantined} == {"price"}


# --- JSON spiders: every hostile price reaches normalization -----------------------------------

GPUGEEK_HOSTILE = {"price_hour": "NaN", "price_day": "Infinity", "price_month": "0"}
NUMBER_LITERALS = {"NaN": "NaN", "Infinity": "Infinity", "-Infinity": "-Infinity", "0": "0",
                   "-1": "-1.5", "1e400": "1e400", "1e30": "1e30"}


def hostile_body(source: str, file: str, edit) -> TextResponse:
    """The recorded JSON of `source` with `edit(body)` applied; values given as
    "@@literal@@" strings are written as bare JSON literals (NaN, Infinity, 1e400)."""
    recorded = file_response(source, file)
    body = json.loads(recorded.text)
    edit(body)
    text = json.dumps(body, ensure_ascii=False)
    for literal in NUMBER_LITERALS.values():
        text = text.replace(f'"@@{literal}@@"', literal)
    entry = next(e for e in snapshot_entries(source) if e["file"] == file)
    return TextResponse(url=entry["url"], body=text.encode(), encoding="utf-8",
                        request=Request(entry["url"]), headers=recorded.headers)


def offers_of(source: str, response: TextResponse, **context) -> list[dict]:
    cls = spider_class(source)
    spider = cls.from_crawler(get_crawler(cls), crawl_id="t")
    return [dict(o) for o in spider.parse(response, **context) if not isinstance(o, Request)]


def fate(offer: dict) -> str | None:
    """The quarantine stage of one offer as the pipeline reads it back (JSON), None if it lands."""
    try:
        normalize_offer(json.loads(json.dumps(offer, ensure_ascii=False)))
    except Quarantined as problem:
        return problem.stage
    return None


def assert_priced_offers_now_quarantined_as_price(clean: list[dict], hostile: list[dict],
                                                  touched) -> None:
    """Offer by offer (same order): a touched offer that landed when clean is quarantined at
    stage price; every other offer keeps its clean fate."""
    assert len(hostile) == len(clean)                 # nothing dropped, nothing added
    changed = 0
    for before, after in zip(clean, hostile, strict=True):
        if touched(after) and fate(before) is None:
            assert fate(after) == "price", after
            changed += 1
        else:
            assert fate(after) == fate(before)
    assert changed, "no priced offer was touched"


def test_scrapy_reads_nan_and_infinity_in_json():
    response = TextResponse(url="https://x.example/", body=b'{"a": NaN, "b": Infinity, "c": 1e400}')
    body = response.json()
    assert body["a"] != body["a"] and body["b"] == body["c"] == float("inf")


@pytest.mark.parametrize("literal", list(NUMBER_LITERALS.values()))
def test_gpugeek_passes_every_hostile_price_on_to_quarantine(literal):
    """GpuGeek once skipped a 0 price without a trace; null still means "not sold"."""
    clean = offers_of("gpugeek_cn", file_response("gpugeek_cn", "gpu_list_page1.json"))

    def edit(body):
        body["data"]["list"][0].update(price_hour=f"@@{literal}@@", price_day=f"@@{literal}@@",
                                       price_month=None)

    offers = offers_of("gpugeek_cn", hostile_body("gpugeek_cn", "gpu_list_page1.json", edit))
    first_sku = clean[0]["sku"]
    hostile = [o for o in offers if o["sku"] == first_sku]
    assert sorted(o["billing_period"] for o in hostile) == ["day", "hour"]   # month: null, unsold
    assert [fate(o) for o in hostile] == ["price", "price"]
    clean = [o for o in clean if not (o["sku"] == first_sku and o["billing_period"] == "month")]
    assert_priced_offers_now_quarantined_as_price(clean, offers,
                                                  lambda o: o["sku"] == first_sku)


def zero_every(items: list[dict], *fields: str) -> None:
    for item in items:
        item.update({f: 0 for f in fields if item.get(f) is not None})


@pytest.mark.parametrize("source, file, edit", [
    pytest.param("vultr", "plans.json",
                 lambda body: zero_every(body["plans"], "hourly_cost", "monthly_cost"),
                 id="vultr"),
    pytest.param("vastai", "bundles.json",
                 lambda body: zero_every(body["offers"], "dph_base", "min_bid"), id="vastai"),
    pytest.param("azure", "retail_prices_page1.json",
                 lambda body: zero_every(body["Items"], "retailPrice"), id="azure"),
])
def test_a_zero_price_from_an_api_reaches_quarantine(source, file, edit):
    clean = offers_of(source, file_response(source, file))
    offers = offers_of(source, hostile_body(source, file, edit))
    assert_priced_offers_now_quarantined_as_price(
        clean, offers, lambda o: Decimal(o["price_amount"]) == 0)


def test_runpod_passes_a_zero_price_on_to_quarantine():
    file, context = "prices_secure_US-GA-1.json", {"place": "US-GA-1", "secure": True}
    clean = offers_of("runpod", file_response("runpod", file), **context)

    def edit(body):   # an offered card whose savings-plan rates are all read
        gpu = next(g for g in body["data"]["gpuTypes"] if g["id"] == "NVIDIA H100 PCIe")
        gpu["securePrice"] = 0

    offers = offers_of("runpod", hostile_body("runpod", file, edit), **context)
    assert_priced_offers_now_quarantined_as_price(
        clean, offers, lambda o: Decimal(o["price_amount"]) == 0)
    assert [o["offer_kind"] for o in offers if Decimal(o["price_amount"]) == 0] == ["on_demand"]
