"""Each offer says where its own price comes from: the replay server sends the basis and as-of
date of the manifest entry that answers (spiders/price_basis.py entry_price_basis), the spider
base copies them onto every offer, an answer without them is a live one (`live`, as of the day
it was read), and the raw archive keeps them for a re-run from raw."""

import json
import urllib.request

import pytest
from scrapy import Request
from scrapy.http import TextResponse

from spiders.middlewares.raw_archive import RawArchive
from spiders.price_basis import entry_price_basis, summary_price_basis
from spiders.registry import spider_class
from spiders.replay_server import (
    CAPTURED_AT_HEADER,
    PRICE_BASIS_HEADER,
    PRICES_AS_OF_HEADER,
    ReplayServer,
    load_raw_archive,
    replay_url,
)

PUBLISHED = {"price_basis": "published", "prices_as_of": "2024-10-09",
             "price_record": {"repo": "o/r", "path": "p.json", "commit": "abc",
                              "date": "2024-10-09"}}


def _manifest(tmp_path, basis: str, entries: list[dict]) -> None:
    source = tmp_path / "vendor"
    source.mkdir()
    for i, _ in enumerate(entries):
        (source / f"f{i}.json").write_text("{}")
    (source / "manifest.json").write_text(json.dumps({
        "source": "vendor", "captured_at": "2026-01-01T00:00:00Z", "price_basis": basis,
        "prices_as_of": None,
        "entries": [{"url": f"https://api.test/{i}", "file": f"f{i}.json",
                     "content_type": "application/json", **e} for i, e in enumerate(entries)]}))


def _said(server: ReplayServer, i: int) -> tuple[str | None, str | None]:
    with urllib.request.urlopen(replay_url(server.url, f"https://api.test/{i}"), timeout=5) as r:
        return r.headers.get(PRICE_BASIS_HEADER), r.headers.get(PRICES_AS_OF_HEADER)


def test_a_mixed_manifest_answers_each_entry_with_its_own_basis(tmp_path):
    # the third entry says nothing: in a mixed manifest it vouches for none of its prices
    _manifest(tmp_path, "mixed", [PUBLISHED, {"price_basis": "undated", "prices_as_of": None},
                                  {}])
    with ReplayServer(tmp_path) as server:
        assert [_said(server, i) for i in range(3)] == [
            ("published", "2024-10-09"), ("undated", None), ("illustrative", None)]


@pytest.mark.parametrize("meta, entry, expected", [
    ({"price_basis": "published", "prices_as_of": "2026-05-13"}, {}, ("published", "2026-05-13")),
    ({"price_basis": "illustrative"}, {}, ("illustrative", None)),
    ({"price_basis": "mixed", "prices_as_of": "2026-10-04"}, {}, ("illustrative", None)),
    ({"price_basis": "mixed"}, {"price_basis": "published", "prices_as_of": "2026-09-20T00:00Z"},
     ("published", "2026-09-20")),
    # an undated price keeps no date, whatever the entry writes: it must never pass as dated
    ({"price_basis": "mixed"}, {"price_basis": "undated", "prices_as_of": "2026-09-20"},
     ("undated", None)),
    ({"price_basis": "mixed"}, {"price_basis": "real, trust me"}, ("illustrative", None)),
])
def test_an_entrys_basis_is_its_own_else_its_uniform_manifests(meta, entry, expected):
    assert entry_price_basis(entry, meta) == expected


@pytest.mark.parametrize("bases, expected", [
    ([("published", "2024-10-09"), ("published", "2024-10-09")], ("published", "2024-10-09")),
    ([("published", "2026-09-25"), ("published", "2026-09-20")], ("published", "2026-09-20")),
    ([("published", "2024-10-09"), ("illustrative", None)], ("mixed", "2024-10-09")),
    ([("undated", None), ("illustrative", None)], ("mixed", None)),
    ([("undated", None)], ("undated", None)),
])
def test_a_manifests_summary_adds_up_its_entries(bases, expected):
    assert summary_price_basis(bases) == expected


def _offer(headers: dict[str, str]) -> dict:
    spider = spider_class("runpod")()
    response = TextResponse(url="https://api.runpod.io/graphql", body=b"{}",
                            request=Request("https://api.runpod.io/graphql"), headers=headers)
    return dict(spider.offer(response, sku="x", gpu_text="H100", region_text="US",
                             offer_kind="on_demand", price_amount="2.69"))


def test_a_replayed_offer_carries_its_entrys_basis():
    offer = _offer({CAPTURED_AT_HEADER: "2026-11-30T09:00:00Z", PRICE_BASIS_HEADER: "published",
                    PRICES_AS_OF_HEADER: "2026-09-25"})
    assert (offer["price_basis"], offer["prices_as_of"]) == ("published", "2026-09-25")
    undated = _offer({PRICE_BASIS_HEADER: "undated"})
    assert (undated["price_basis"], undated["prices_as_of"]) == ("undated", None)


def test_a_live_offer_is_live_as_of_the_day_it_was_read():
    offer = _offer({})
    assert offer["price_basis"] == "live"
    assert offer["prices_as_of"] == offer["observed_at"][:10]


def test_a_rerun_from_raw_answers_with_the_fetching_crawls_basis(tmp_path):
    archive = RawArchive(tmp_path, "vendor", "20261130T090000")
    archive.store(url="https://api.test/0", method="GET", status=200, body=b"{}",
                  headers={"Content-Type": "application/json",
                           "X-Gpuprices-Price-Basis": "published",
                           "X-Gpuprices-Prices-As-Of": "2024-10-09"})
    archive.store(url="https://api.test/1", method="GET", status=200, body=b"[]",
                  headers={"Content-Type": "application/json"})    # fetched live
    with ReplayServer(index=load_raw_archive(tmp_path)) as server:
        assert [_said(server, i) for i in range(2)] == [("published", "2024-10-09"),
                                                        (None, None)]
