"""Configurations a vendor really sells: n single cards only within one server of a size the
vendor lists; more servers only where the vendor states a cluster interconnect (clusters.toml);
consumer cards never across servers unless a listing says so; the interconnect assumed is printed
with every multi-card option. The issue's example: a 70B full fine-tune, 24 h/day for 14 days,
3,000 A100-80GB GPU-hours."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.advisor import Offer, Workload, advise, server_sizes, stated_cluster
from pipelines.advisor import clusters as clusters_module
from pipelines.advisor.clusters import parse_clusters
from pipelines.advisor.configurations import CONSUMER_CLUSTER, NO_CLUSTER
from tests.helpers.advisor_offers import row

SEVENTY_B = {"params": "70B", "task": "full-finetune", "hours_per_day": 24, "days": 14,
             "gpu_hours": 3000}
AWS = {"source": "aws", "vendor": "Amazon Web Services", "region_code": "us-east-1",
       "country": "US", "province_or_state": "Virginia", "city": None}


def workload(**spec) -> Workload:
    return Workload.from_mapping({**SEVENTY_B, **spec})


def offers(*rows: dict) -> list[Offer]:
    return [Offer.from_row(r) for r in rows]


def consumer_rentals() -> list[dict]:
    """What the issue saw: 8-card RTX 4090 rentals and single 4090s at a Chinese marketplace."""
    return [row(279 * 8, "day", gpu_model="RTX4090-24GB", gpu_variant=None, gpu_count=8,
                vendor="GpuGeek", source="gpugeek_cn", sku="20430"),
            row(2.0, "hour", gpu_model="RTX4090-24GB", gpu_variant=None, vendor="GpuGeek",
                source="gpugeek_cn", sku="4090 single")]


def idc_servers() -> list[dict]:
    """8 × A100 and 8 × H800 servers at an IDC that states no cluster interconnect."""
    return [row(200, "hour", gpu_count=8, sku="A100 整机"),
            row(400, "hour", gpu_model="H800-80GB", gpu_count=8, sku="H800 整机")]


def aws_p5() -> dict:
    """AWS p5.48xlarge, 8 × H100 SXM, 55.04 USD/h at 7 CNY per USD; AWS states EFA for it."""
    return row(55.04 * 7, "hour", gpu_model="H100-80GB", gpu_count=8, sku="p5.48xlarge", **AWS)


def test_the_70b_example_recommends_only_what_listings_support():
    advice = advise(workload(), offers(*consumer_rentals(), *idc_servers(), aws_p5()))
    assert advice.options, advice.excluded
    for option in advice.options:
        assert option.offer.sku == "p5.48xlarge"             # the only offer stating a cluster
        assert option.across_servers and "EFA 3,200 Gbps" in option.interconnect
        assert "NVLink 900 GB/s within each" in option.interconnect
        assert any(option.interconnect in line for line in option.why)
    assert {o.cards for o in advice.options} == {32}          # 1,344 GB: 17 cards → 32 (4 servers)
    assert advice.excluded[NO_CLUSTER] == 4                   # the 4090s and the IDC's servers
    best = advice.options[0]
    assert best.cards == 32 and best.rentals == 4


def test_the_70b_example_says_none_fits_and_why_without_a_stated_interconnect():
    advice = advise(workload(), offers(*consumer_rentals(), *idc_servers()))
    assert advice.options == []
    assert advice.excluded == {NO_CLUSTER: 4}
    one_server = advise(workload(params="30B", gpu_hours=None),
                        offers(*idc_servers()))                        # 576 GB: 8 × 80 GB
    assert {(o.offer.sku, o.cards, o.across_servers) for o in one_server.options} == {
        ("A100 整机", 8, False), ("H800 整机", 8, False)}
    h800 = next(o for o in one_server.options if o.offer.sku == "H800 整机")
    assert h800.interconnect == ("NVLink 400 GB/s, below the 600 GB/s of a fast link within one "
                                 "server")


def test_consumer_cards_never_cross_servers_even_where_the_vendor_has_a_cluster(monkeypatch):
    statement = parse_clusters('[[cluster]]\nvendor = "GpuGeek"\nsku = "."\n'
                               'interconnect = "RoCE 200 Gb/s"\nsource = "a test"\n')
    monkeypatch.setattr(clusters_module, "cluster_statements", lambda: statement)
    advice = advise(workload(), offers(*consumer_rentals()))
    assert advice.options == [] and advice.excluded == {CONSUMER_CLUSTER: 2}
    # unless the listing itself sells consumer cards as a cluster
    consumer_ok = parse_clusters('[[cluster]]\nvendor = "GpuGeek"\nsku = "^20430$"\n'
                                 'interconnect = "RoCE 200 Gb/s"\nsource = "a test"\n'
                                 'consumer_cards = true\n')
    monkeypatch.setattr(clusters_module, "cluster_statements", lambda: consumer_ok)
    allowed = advise(workload(), offers(*consumer_rentals()))
    assert {o.offer.sku for o in allowed.options} == {"20430"}
    assert all(o.interconnect.startswith("RoCE 200 Gb/s across") for o in allowed.options)


def test_single_cards_combine_only_up_to_the_largest_server_the_vendor_lists():
    lora_70b = Workload.from_mapping({"params": "70B", "task": "lora", "hours_per_day": 4,
                                      "days": 14})                     # 181 GB: 3 → 4 cards
    four_card_server = row(160, "hour", gpu_count=4, sku="4-card")
    alone = advise(lora_70b, offers(row(45, "hour", sku="single")))
    assert alone.options == [] and alone.excluded == {NO_CLUSTER: 1}   # sold one at a time
    listed = advise(lora_70b, offers(row(45, "hour", sku="single"), four_card_server))
    single = next(o for o in listed.options if o.offer.sku == "single")
    assert (single.cards, single.across_servers) == (4, False)
    full = advise(workload(params="30B"), offers(row(45, "hour", sku="single"),
                                                 four_card_server))     # 576 GB: 8 cards
    assert full.options == []                                          # 8 > the 4-card server


def test_a_multi_card_option_always_names_its_interconnect_and_one_card_none():
    table = offers(row(45, "hour", sku="single"), row(300, "hour", gpu_count=8, sku="server"),
                   row(15, "hour", gpu_fraction=0.5, sku="half"), aws_p5())
    for spec in ({"params": "13B", "task": "lora", "gpu_hours": 200, "days": 30,
                  "hours_per_day": 8}, {"params": "30B"}, {}):
        for option in advise(workload(**spec), table).options:
            assert bool(option.interconnect) == (option.cards > 1), option.config


def test_server_sizes_are_per_vendor_card_and_board():
    sizes = server_sizes(offers(row(1), row(8, gpu_count=8), row(4, gpu_count=4,
                                                                 gpu_variant="PCIe"),
                                row(1, gpu_count=16, gpu_fraction=0.5)))   # a slice: not a server
    assert sizes == {("Test IDC", "A100-80GB", "SXM"): 8, ("Test IDC", "A100-80GB", "PCIE"): 4}


@pytest.mark.parametrize(("vendor", "sku", "stated"), [
    ("Amazon Web Services", "p4d.24xlarge", "EFA 400 Gbps"),
    ("Amazon Web Services", "p4de.24xlarge", "EFA 400 Gbps"),
    ("Amazon Web Services", "p5.48xlarge", "EFA 3,200 Gbps"),
    ("Amazon Web Services", "g5.48xlarge", None),
    ("Microsoft Azure", "Standard_ND96asr_v4", "InfiniBand HDR"),
    ("Microsoft Azure", "Standard_ND96amsr_A100_v4", "InfiniBand HDR"),
    ("Microsoft Azure", "Standard_ND96isr_H100_v5", "InfiniBand NDR"),
    ("Microsoft Azure", "Standard_NC96ads_A100_v4", None),      # NC: no InfiniBand stated
    ("Lambda", "8x NVIDIA H100 SXM", None),                     # on-demand, not 1-Click Clusters
    ("Test IDC", "p5.48xlarge", None),                          # the SKU at another vendor
    ("腾讯云 Tencent Cloud", "HCCPNV5v.96XLARGE1536", "RDMA (StarPulse"),   # HCC
    ("腾讯云 Tencent Cloud", "GT4.41XLARGE948", None),          # a GPU type, not HCC
    ("火山引擎 Volcano Engine", "ecs.hpcpni2.28xlarge", "RDMA"),   # 高性能计算GPU型
    ("火山引擎 Volcano Engine", "ecs.pni2.28xlarge", None),      # GPU计算型: no cluster stated
])
def test_the_bundled_cluster_statements(vendor, sku, stated):
    found = stated_cluster(Offer.from_row(row(1, vendor=vendor, sku=sku)))
    if stated is None:
        assert found is None
    else:
        assert found is not None and found.interconnect.startswith(stated)
    for statement in clusters_module.cluster_statements():
        assert statement.source and not statement.consumer_cards


@pytest.mark.parametrize("text", [
    '[[cluster]]\nvendor = "V"\nsku = "x"\ninterconnect = "IB"\n',              # no source
    '[[cluster]]\nsku = "x"\ninterconnect = "IB"\nsource = "s"\n',              # no vendor
    '[[cluster]]\nvendor = "V"\nsku = "("\ninterconnect = "IB"\nsource = "s"\n',  # bad pattern
])
def test_a_cluster_statement_without_its_facts_is_refused(text):
    with pytest.raises(ValueError):
        parse_clusters(text)


OFFER_SPACE = st.fixed_dictionaries({
    "vendor": st.sampled_from(["Amazon Web Services", "Test IDC", "GpuGeek"]),
    "sku": st.sampled_from(["p5.48xlarge", "p4d.24xlarge", "whole machine"]),
    "gpu_model": st.sampled_from(["A100-80GB", "H100-80GB", "RTX4090-24GB"]),
    "gpu_variant": st.sampled_from(["SXM", "PCIe", None]),
    "gpu_count": st.sampled_from([1, 2, 4, 8]),
    "price": st.floats(1, 500),
})
WORKLOAD_SPACE = st.fixed_dictionaries({
    "params": st.sampled_from(["7B", "13B", "30B", "70B"]),
    "task": st.sampled_from(["lora", "full-finetune", "inference"]),
    "gpu_hours": st.sampled_from([None, 100, 3000]),
})


@settings(max_examples=60, deadline=None)
@given(st.lists(OFFER_SPACE, min_size=1, max_size=6), WORKLOAD_SPACE)
def test_no_option_is_one_a_listing_does_not_support(table, spec):
    rows = [row(o["price"], "hour", vendor=o["vendor"], sku=o["sku"], gpu_model=o["gpu_model"],
                gpu_variant=o["gpu_variant"], gpu_count=o["gpu_count"], region_code=f"r{i}",
                offer_id=f"o{i}")
            for i, o in enumerate(table)]
    pool = offers(*rows)
    sizes = server_sizes(pool)
    advice = advise(workload(**spec), pool)
    for option in advice.options:
        offer = option.offer
        assert bool(option.interconnect) == (option.cards > 1)
        if option.across_servers:
            statement = stated_cluster(offer)
            assert statement is not None
            assert statement.consumer_cards or not offer.gpu_model.startswith("RTX")
            assert statement.interconnect in option.interconnect
        elif offer.gpu_count > 1:
            assert option.cards == offer.gpu_count          # one server, as listed
        else:
            assert option.cards <= sizes[(offer.vendor, offer.gpu_model,
                                          (offer.gpu_variant or "").upper())]


def test_a_marketplaces_single_card_listings_are_hosts_not_a_pool():
    """vast.ai and GpuGeek list hosts: two single-card listings are two machines, so only a
    listing's own cards run together, whatever larger hosts the marketplace also lists."""
    lora_70b = Workload.from_mapping({"params": "70B", "task": "lora", "hours_per_day": 4,
                                      "days": 14})                     # 181 GB: 4 × 80 GB
    vast = {"vendor": "vast.ai", "source": "vastai"}
    table = offers({**row(45, sku="1 card", **vast), "vendor_kind": "marketplace"},
                   {**row(400, gpu_count=8, sku="8 cards", **vast), "vendor_kind": "marketplace"})
    advice = advise(lora_70b, table)
    assert {(o.offer.sku, o.cards) for o in advice.options} == {("8 cards", 8)}
    assert advice.excluded == {NO_CLUSTER: 1}
    pooled = offers(*({**r, "vendor_kind": "gpu_cloud"} for r in (
        row(45, sku="1 card"), row(400, gpu_count=8, sku="8 cards"))))
    assert ("1 card", 4) in {(o.offer.sku, o.cards) for o in advise(lora_70b, pooled).options}
