"""The research computing centres of idc_tables.toml land what public evidence lets them: a
partition, queue or unit maps to its card where evidence names it (`cards`, each mapping with
its evidence), a row naming several cards at one price is one offer per card, and what no
evidence names is quarantined with that reason (test_idc_regional.py checks each row's fields)."""

from __future__ import annotations

import tomllib
from collections import Counter
from decimal import Decimal

import pytest
from scrapy.http import HtmlResponse, Request

from pipelines.normalize import Quarantined, normalize_offer
from spiders.parsing.gpu_models import parse_gpu
from spiders.registry import spider_class
from spiders.vendors.idc_tables import SOURCES_FILE, load_table_spiders
from tests.helpers.responses import file_response, snapshot_entries

NO_EVIDENCE = "names no card; no public evidence maps it to one"


def _outcomes(slug: str) -> Counter:
    """landed / the quarantine's stage, over the offers of the centre's snapshot."""
    spider = spider_class(slug)(crawl_id="test")
    found: Counter = Counter()
    for entry in snapshot_entries(slug):
        for offer in spider.parse(file_response(slug, entry["file"])):
            try:
                normalize_offer(dict(offer))
                found["landed"] += 1
            except Quarantined as exc:
                assert NO_EVIDENCE in exc.reason, exc.reason   # the only reason a centre has
                found["no card"] += 1
    return found


@pytest.mark.parametrize("slug, landed, no_card", [
    ("idc_cibr_bj", 1, 0),      # V100 from its unit RMB/V100·HOUR
    ("idc_cuhksz_sz", 4, 1),    # 2080Ti, V100, A100 and A800 (one rate, two offers); "others"
    ("idc_ustc_hf", 4, 0),      # A800, RTX4090, L40, A100 partitions, mapped by the node table
    ("idc_ikkem_xm", 1, 0),     # the gpu partition's A100
    ("idc_srils_sz", 1, 1),     # RTX 4090; "GPU (高性能)" named by no public text
    ("idc_pku_bj", 0, 11),      # GPU80G / GPU40G / GPU / LIFE named by no public text
    ("idc_hkustgz_gz", 0, 2),   # GPU(ACD) queue and server named by no public text
])
def test_each_centre_lands_what_evidence_names(slug, landed, no_card):
    assert _outcomes(slug) == Counter({"landed": landed, "no card": no_card}) - Counter()


def test_at_least_four_centres_land_offers():
    centres = [s for s, cls in load_table_spiders().items()
               if s.startswith("idc_") and not cls.is_template]
    assert sum(_outcomes(s)["landed"] > 0 for s in centres) >= 4


def _configured_cards() -> list[tuple[str, str, dict]]:
    config = tomllib.loads(SOURCES_FILE.read_text(encoding="utf-8"))["html_table"]
    return [(slug, text, mapping) for slug, entry in config.items()
            for text, mapping in entry.get("cards", {}).items()]


@pytest.mark.parametrize("slug, text, mapping", _configured_cards(),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_every_mapping_cites_its_evidence(slug, text, mapping):
    evidence = mapping["evidence"]
    if mapping.get("card"):
        parse_gpu(mapping["card"])   # the card is one the catalog reads
        # a repository at a commit (40 hex digits), or a page
        assert "http" in evidence or any(len(w) == 40 and all(c in "0123456789abcdef" for c in w)
                                         for w in evidence.replace(":", " ").split()), evidence
    else:
        assert evidence.startswith("Not found: "), evidence


def test_every_mapping_matches_a_row_of_its_page():
    read = {(slug, o["vendor_data"].get("partition") or o["gpu_text"])
            for slug in {s for s, _, _ in _configured_cards()}
            for e in snapshot_entries(slug)
            for o in spider_class(slug)(crawl_id="t").parse(file_response(slug, e["file"]))}
    assert {(slug, text) for slug, text, _ in _configured_cards()} <= read


@pytest.mark.parametrize("slug, partition, card, per_gpu_hour_cny, place", [
    # USTC: each partition is the card of its nodes (the page's node table)
    ("idc_ustc_hf", "A800", "A800-80GB", "2", ("Anhui", "Hefei")),
    ("idc_ustc_hf", "RTX4090", "RTX4090-24GB", "0.5", ("Anhui", "Hefei")),
    ("idc_ustc_hf", "L40", "L40-48GB", "1", ("Anhui", "Hefei")),
    ("idc_ustc_hf", "A100", "A100-80GB", "2", ("Anhui", "Hefei")),
    # IKKEM: the gpu partition's A100 80GB, the external account's rate
    ("idc_ikkem_xm", "gpu", "A100-80GB", "12", ("Fujian", "Xiamen")),
])
def test_mapped_partitions_land_as_their_cards(slug, partition, card, per_gpu_hour_cny, place):
    [offer] = [o for e in snapshot_entries(slug)
               for o in spider_class(slug)(crawl_id="t").parse(file_response(slug, e["file"]))
               if o["vendor_data"]["partition"] == partition]
    row = normalize_offer(dict(offer))
    assert (row["gpu_model"], row["billing_period"], row["gpu_count"]) == (card, "hour", 1)
    assert row["price_per_gpu_hour_cny"] == Decimal(per_gpu_hour_cny)
    assert (row["province_or_state"], row["city"]) == place


def test_mapped_offers_keep_the_partition_and_its_evidence():
    [ikkem] = spider_class("idc_ikkem_xm")(crawl_id="t").parse(
        file_response("idc_ikkem_xm", "partition.html"))
    assert ikkem["gpu_text"] == "A100 SXM4 80GB NVLink" and ikkem["sku"] == "gpu | 1 | 外部账户"
    assert ikkem["vendor_data"]["partition"] == "gpu"
    assert "70fafd39d37633b0cc97cd2853c70e6cd900d5c9" in ikkem["vendor_data"]["card_evidence"]
    assert ikkem["vendor_data"]["row"]["GPU (元/卡时)"] == "12.00"


def test_one_price_for_two_cards_is_an_offer_per_card():
    offers = [o for o in spider_class("idc_cuhksz_sz")(crawl_id="t").parse(
        file_response("idc_cuhksz_sz", "page_263.html")) if o["sku"].startswith("A100")]
    assert [(o["gpu_text"], o["sku"], o["price_text"]) for o in offers] == [
        ("A100", "A100、A800 | 1 | A100", "2.00 RMB (per Card per Hour)"),
        ("A800", "A100、A800 | 1 | A800", "2.00 RMB (per Card per Hour)")]


# ---- the configuration: a mapping without evidence is refused; a machine's count ------------

def _config(tmp_path, cards: str) -> dict:
    path = tmp_path / "t.toml"
    path.write_text('[html_table.c]\nvendor = "c"\nvendor_kind = "idc"\nrows = "table tbody tr"\n'
                    'columns = { gpu_text = "资源" }\nprices = { day = "整机日租" }\n'
                    'region = "北京"\n' + cards, encoding="utf-8")
    return load_table_spiders(path)


@pytest.mark.parametrize("cards, error", [
    ('[html_table.c.cards]\n"GPU(X)" = { card = "A800" }\n', "cites no evidence"),
    ('[html_table.c.cards]\n"GPU(X)" = { card = "A800", evidence = " " }\n', "cites no evidence"),
    ('[html_table.c.cards]\n"GPU(X)" = { card = "A800", evidence = "e", why = "w" }\n',
     "must be a table of"),
    ('[html_table.c.cards]\n"GPU(X)" = "A800"\n', "must be a table of"),
    ('[html_table.c.cards]\n"GPU(X)" = { card = "A800", evidence = "e", gpu_count = 0 }\n',
     "gpu_count must be a whole number"),
])
def test_a_mapping_without_evidence_is_refused(tmp_path, cards, error):
    with pytest.raises(ValueError, match=error):
        _config(tmp_path, cards)


PAGE = ("<table><thead><tr><th>资源</th><th>整机日租</th></tr></thead><tbody>"
        "<tr><td>GPU(X)</td><td>720.00 CNY/Machine/Day</td></tr></tbody></table>").encode()


def _machine_offer(tmp_path, cards: str) -> dict:
    response = HtmlResponse(url="https://c.test/p", body=PAGE, encoding="utf-8",
                            request=Request("https://c.test/p"))
    [offer] = _config(tmp_path, cards)["c"](crawl_id="t").parse(response)
    return dict(offer)


def test_a_machine_price_lands_with_the_count_its_evidence_states(tmp_path):
    offer = _machine_offer(tmp_path, '[html_table.c.cards]\n"GPU(X)" = { card = "A800 80GB", '
                                     'evidence = "https://c.test/spec: 8 x A800", '
                                     'gpu_count = 8 }\n')
    row = normalize_offer(offer)
    assert (row["gpu_model"], row["gpu_count"], row["price_per_gpu_hour_cny"]) == (
        "A800-80GB", 8, 720 / 24 / 8)


def test_a_machine_price_without_a_card_count_is_quarantined(tmp_path):
    offer = _machine_offer(tmp_path, '[html_table.c.cards]\n"GPU(X)" = { card = "A800 80GB", '
                                     'evidence = "https://c.test/spec: A800 nodes" }\n')
    with pytest.raises(Quarantined) as caught:
        normalize_offer(offer)
    assert caught.value.stage == "count"
    assert "states the machine's card count" in caught.value.reason
