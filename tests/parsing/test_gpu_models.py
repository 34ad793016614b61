"""Vendor card names -> canonical model, variant, slice fraction and offered VRAM."""

from __future__ import annotations

from decimal import Decimal as D
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spiders.parsing import card_catalog
from spiders.parsing.card_catalog import CARDS, CARDS_BY_FAMILY, MISSION_FAMILIES
from spiders.parsing.gpu_models import (
    CANONICAL_MODELS,
    CARD_VRAM_GB,
    GpuParseError,
    GpuSpec,
    gpu_family,
    parse_gpu,
)

WHOLE = D(1)

# text, vram_gb_hint -> GpuSpec(model, variant, fraction, vram_gb)
SPECS = [
    ("A100-SXM4-80GB", None, GpuSpec("A100-80GB", "SXM", WHOLE, D(80))),
    ("NVIDIA A100 80G", None, GpuSpec("A100-80GB", None, WHOLE, D(80))),
    ("A100 PCIe 40GB", None, GpuSpec("A100-40GB", "PCIe", WHOLE, D(40))),
    ("Tesla A100", None, GpuSpec("A100-40GB", None, WHOLE, D(40))),   # no memory: the 40 GB card
    ("Tesla A100", 80, GpuSpec("A100-80GB", None, WHOLE, D(80))),
    ("Tesla A100", 79.2, GpuSpec("A100-80GB", None, WHOLE, D(80))),   # 81 120 MiB -> 80 GB
    ("A100 80GB PCIe", None, GpuSpec("A100-80GB", "PCIe", WHOLE, D(80))),
    ("A100 SXM4", 80, GpuSpec("A100-80GB", "SXM", WHOLE, D(80))),
    ("NVIDIA_A100", 80, GpuSpec("A100-80GB", None, WHOLE, D(80))),
    ("NVIDIA_A100", D("40"), GpuSpec("A100-40GB", None, WHOLE, D(40))),
    ("a100-pcie-40gb", None, GpuSpec("A100-40GB", "PCIe", WHOLE, D(40))),
    ("8x A100-SXM4-80GB", None, GpuSpec("A100-80GB", "SXM", WHOLE, D(80))),   # count ignored
    ("Standard_ND96amsr_A100_v4", 80, GpuSpec("A100-80GB", None, WHOLE, D(80))),
    ("H100 SXM5", None, GpuSpec("H100-80GB", "SXM", WHOLE, D(80))),
    ("H100 80GB HBM3", None, GpuSpec("H100-80GB", None, WHOLE, D(80))),
    ("H100 PCIe", None, GpuSpec("H100-80GB", "PCIe", WHOLE, D(80))),
    ("H100 NVL", None, GpuSpec("H100-94GB", "NVL", WHOLE, D(94))),
    ("NVIDIA H100 NVL 94GB", None, GpuSpec("H100-94GB", "NVL", WHOLE, D(94))),
    ("H100 96GB", None, GpuSpec("H100-94GB", None, WHOLE, D(94))),
    ("H800", None, GpuSpec("H800-80GB", None, WHOLE, D(80))),
    ("NVIDIA H800 80GB", None, GpuSpec("H800-80GB", None, WHOLE, D(80))),
    ("H800 SXM5", None, GpuSpec("H800-80GB", "SXM", WHOLE, D(80))),
    ("RTX 4090", None, GpuSpec("RTX4090-24GB", None, WHOLE, D(24))),
    ("GeForce RTX 4090 24G", None, GpuSpec("RTX4090-24GB", None, WHOLE, D(24))),
    ("NVIDIA GeForce RTX 4090", None, GpuSpec("RTX4090-24GB", None, WHOLE, D(24))),
    ("4090", None, GpuSpec("RTX4090-24GB", None, WHOLE, D(24))),
    ("RTX4090", 24, GpuSpec("RTX4090-24GB", None, WHOLE, D(24))),
    ("RTX 4090 48G", None, GpuSpec("RTX4090-48GB", None, WHOLE, D(48))),
    ("4090", 48, GpuSpec("RTX4090-48GB", None, WHOLE, D(48))),
    ("4090", 47.5, GpuSpec("RTX4090-48GB", None, WHOLE, D(48))),
    ("RTX 4090D", None, GpuSpec("RTX4090D-24GB", None, WHOLE, D(24))),
    ("4090D", None, GpuSpec("RTX4090D-24GB", None, WHOLE, D(24))),
    ("RTX 4090 D", None, GpuSpec("RTX4090D-24GB", None, WHOLE, D(24))),
    ("rtx_4090_d 24gb", None, GpuSpec("RTX4090D-24GB", None, WHOLE, D(24))),
    # MIG profiles on an A100 80 GB: fraction by memory, in eighths
    ("A100 80GB MIG 1g.10gb", None, GpuSpec("A100-80GB", None, D("0.125"), D(10))),
    ("A100 80GB MIG 2g.20gb", None, GpuSpec("A100-80GB", None, D("0.25"), D(20))),
    ("A100 80GB MIG 3g.40gb", None, GpuSpec("A100-80GB", None, D("0.5"), D(40))),
    ("A100 80GB MIG 4g.40gb", None, GpuSpec("A100-80GB", None, D("0.5"), D(40))),
    ("A100 80GB MIG 7g.80gb", None, GpuSpec("A100-80GB", None, WHOLE, D(80))),
    ("A100-SXM4-80GB MIG 1g.20gb", None, GpuSpec("A100-80GB", "SXM", D("0.25"), D(20))),
    # ... and on an A100 40 GB
    ("A100 40GB MIG 1g.5gb", None, GpuSpec("A100-40GB", None, D("0.125"), D(5))),
    ("A100 40GB MIG 3g.20gb", None, GpuSpec("A100-40GB", None, D("0.5"), D(20))),
    ("A100 40GB MIG 7g.40gb", None, GpuSpec("A100-40GB", None, WHOLE, D(40))),
    ("A100 MIG 3g.40gb", None, GpuSpec("A100-80GB", None, D("0.5"), D(40))),   # only fits 80
    ("A100 MIG 1g.5gb", None, GpuSpec("A100-40GB", None, D("0.125"), D(5))),    # only fits 40
    ("A100 MIG 1g.10gb", 80, GpuSpec("A100-80GB", None, D("0.125"), D(10))),
    ("H100 80GB MIG 3g.40gb", None, GpuSpec("H100-80GB", None, D("0.5"), D(40))),
    ("H100 NVL MIG 1g.12gb", None, GpuSpec("H100-94GB", "NVL", D("0.125"), D(12))),
    # vGPU slices
    ("A100 80G 1/4", None, GpuSpec("A100-80GB", None, D("0.25"), D(20))),
    ("1/2 A100", None, GpuSpec("A100-40GB", None, D("0.5"), D(20))),   # no memory: 40 GB card
    # a hint on a slice row is the slice's memory (80 there is refused: tests/parsing/
    # test_slice_memory.py)
    ("1/2 A100", 40, GpuSpec("A100-80GB", None, D("0.5"), D(40))),
    ("A100 1/4", 20, GpuSpec("A100-80GB", None, D("0.25"), D(20))),    # hint = the slice's VRAM
    ("A100 20G切分", None, GpuSpec("A100-80GB", None, D("0.25"), D(20))),
    ("A100 40G切分", None, GpuSpec("A100-80GB", None, D("0.5"), D(40))),
    ("A100 80GB 20G切分", None, GpuSpec("A100-80GB", None, D("0.25"), D(20))),
    ("A100 40GB vGPU 10GB", None, GpuSpec("A100-40GB", None, D("0.25"), D(10))),
    ("A100 80G 1/4 20G", None, GpuSpec("A100-80GB", None, D("0.25"), D(20))),
    ("A100 半卡", 40, GpuSpec("A100-80GB", None, D("0.5"), D(40))),
    ("A100 四分之一", 20, GpuSpec("A100-80GB", None, D("0.25"), D(20))),
    ("A100 80G 半卡", 80, GpuSpec("A100-80GB", None, D("0.5"), D(40))),   # restates the card
    ("RTX 4090 12G切分", None, GpuSpec("RTX4090-24GB", None, D("0.5"), D(12))),
    # hints as spiders carry them: strings, with units
    ("Tesla A100", "80", GpuSpec("A100-80GB", None, WHOLE, D(80))),
    ("Tesla A100", "80GB", GpuSpec("A100-80GB", None, WHOLE, D(80))),
    ("Tesla A100", "81920 MiB", GpuSpec("A100-80GB", None, WHOLE, D(80))),
    ("RTX 4090", " 48 G ", GpuSpec("RTX4090-48GB", None, WHOLE, D(48))),
    ("Tesla A100", "", GpuSpec("A100-40GB", None, WHOLE, D(40))),
]


@pytest.mark.parametrize(("text", "hint", "expected"), SPECS)
def test_parse_gpu(text, hint, expected):
    assert parse_gpu(text, hint) == expected


# Every card of the catalog, as the sources spell it (A800 and H20 are the China-market siblings
# of A100 and H100; 4090D is a different card from 4090)
CATALOG_SPECS = [
    ("NVIDIA A800-SXM4-80GB", "80GB", GpuSpec("A800-80GB", "SXM", WHOLE, D(80))),
    ("A800", "80 GB", GpuSpec("A800-80GB", None, WHOLE, D(80))),
    ("A800 40GB PCIe", None, GpuSpec("A800-40GB", "PCIe", WHOLE, D(40))),
    ("NVIDIA A800 80GB", None, GpuSpec("A800-80GB", None, WHOLE, D(80))),
    ("H20", None, GpuSpec("H20-96GB", None, WHOLE, D(96))),
    ("NVIDIA H20 96GB", None, GpuSpec("H20-96GB", None, WHOLE, D(96))),
    ("H20 141G", None, GpuSpec("H20-141GB", None, WHOLE, D(141))),
    ("H200", None, GpuSpec("H200-141GB", None, WHOLE, D(141))),
    ("H200 NVL", None, GpuSpec("H200-141GB", "NVL", WHOLE, D(141))),
    ("H200 SXM 141GB", None, GpuSpec("H200-141GB", "SXM", WHOLE, D(141))),
    ("H200", "143771 MiB", GpuSpec("H200-141GB", None, WHOLE, D(141))),
    ("GH200 (96 GB)", None, GpuSpec("GH200-96GB", None, WHOLE, D(96))),
    ("B200 (180 GB SXM6)", None, GpuSpec("B200-180GB", "SXM", WHOLE, D(180))),
    ("B200 192GB", None, GpuSpec("B200-192GB", None, WHOLE, D(192))),
    ("L20", None, GpuSpec("L20-48GB", None, WHOLE, D(48))),
    ("NVIDIA L40", None, GpuSpec("L40-48GB", None, WHOLE, D(48))),
    ("NVIDIA L40S", "48GB", GpuSpec("L40S-48GB", None, WHOLE, D(48))),
    ("NVIDIA_L40S", None, GpuSpec("L40S-48GB", None, WHOLE, D(48))),
    ("L4", None, GpuSpec("L4-24GB", None, WHOLE, D(24))),
    ("NVIDIA A10 24GB", None, GpuSpec("A10-24GB", None, WHOLE, D(24))),
    ("1x A10 (24 GB PCIe)", None, GpuSpec("A10-24GB", "PCIe", WHOLE, D(24))),
    ("A10G", None, GpuSpec("A10G-24GB", None, WHOLE, D(24))),
    ("A30", None, GpuSpec("A30-24GB", None, WHOLE, D(24))),
    ("NVIDIA_A40", None, GpuSpec("A40-48GB", None, WHOLE, D(48))),
    ("NVIDIA V100 32GB", None, GpuSpec("V100-32GB", None, WHOLE, D(32))),
    ("Tesla V100-SXM2-32GB", None, GpuSpec("V100-32GB", "SXM", WHOLE, D(32))),
    ("Tesla V100", None, GpuSpec("V100-16GB", None, WHOLE, D(16))),
    ("NVIDIA T4", None, GpuSpec("T4-16GB", None, WHOLE, D(16))),
    ("RTX 3090", "24 GB", GpuSpec("RTX3090-24GB", None, WHOLE, D(24))),
    ("NVIDIA RTX 3090", None, GpuSpec("RTX3090-24GB", None, WHOLE, D(24))),
    ("NVIDIA GeForce RTX 4090 D", "24GB", GpuSpec("RTX4090D-24GB", None, WHOLE, D(24))),
    ("RTX 5090", None, GpuSpec("RTX5090-32GB", None, WHOLE, D(32))),
    ("RTX_5090", "32607 MiB", GpuSpec("RTX5090-32GB", None, WHOLE, D(32))),
    ("RTX A6000", None, GpuSpec("RTXA6000-48GB", None, WHOLE, D(48))),
    ("RTX 6000 Ada", None, GpuSpec("RTX6000ADA-48GB", None, WHOLE, D(48))),
    ("AMD Instinct MI300X", None, GpuSpec("MI300X-192GB", None, WHOLE, D(192))),
    ("MI308X 192GB", None, GpuSpec("MI308X-192GB", None, WHOLE, D(192))),
    ("MI325X", None, GpuSpec("MI325X-256GB", None, WHOLE, D(256))),
    ("A30 MIG 1g.6gb", None, GpuSpec("A30-24GB", None, D("0.25"), D(6))),   # 4 compute slices
    ("A30 24GB MIG 2g.12gb", None, GpuSpec("A30-24GB", None, D("0.5"), D(12))),
    ("H200 MIG 1g.18gb", None, GpuSpec("H200-141GB", None, D("0.125"), D(18))),
    ("A800 80GB MIG 3g.40gb", None, GpuSpec("A800-80GB", None, D("0.5"), D(40))),
]

# Interconnect and form factor are not variants: NVLink/NVSwitch are kept apart, HGX/DGX is SXM
INTERCONNECT_SPECS = [
    ("8卡 H800 NVLink", None, GpuSpec("H800-80GB", None, WHOLE, D(80), "NVLink")),
    ("H100 NVLink", None, GpuSpec("H100-80GB", None, WHOLE, D(80), "NVLink")),   # not H100 NVL
    ("H100 PCIe NVLink", None, GpuSpec("H100-80GB", "PCIe", WHOLE, D(80), "NVLink")),
    ("H100 NVL NVLink", None, GpuSpec("H100-94GB", "NVL", WHOLE, D(94), "NVLink")),
    ("H800 80G SXM5 NVSwitch", None, GpuSpec("H800-80GB", "SXM", WHOLE, D(80), "NVSwitch")),
    ("A100 80G NVSwitch NVLink", None, GpuSpec("A100-80GB", None, WHOLE, D(80), "NVSwitch")),
    ("HGX H800 8-GPU", None, GpuSpec("H800-80GB", "SXM", WHOLE, D(80))),
    ("HGX H100 SXM5 8x80GB", None, GpuSpec("H100-80GB", "SXM", WHOLE, D(80))),
    ("DGX A100 80GB", None, GpuSpec("A100-80GB", "SXM", WHOLE, D(80))),
    ("8*H800 80G NVLink 600GB/s 内存 2048G", None,   # bandwidth and host memory are not VRAM
     GpuSpec("H800-80GB", None, WHOLE, D(80), "NVLink")),
    ("A100 80G ×8", None, GpuSpec("A100-80GB", None, WHOLE, D(80))),   # the count is 12A's
]

# Slices by memory share are resolved against the card's full memory: half an A100-80GB
SHARE_SPECS = [
    ("A100 80G 切分 40G", None, GpuSpec("A100-80GB", None, D("0.5"), D(40))),
    ("A100 80G 切分 20G", None, GpuSpec("A100-80GB", None, D("0.25"), D(20))),
    ("40GB of an 80GB A100", None, GpuSpec("A100-80GB", None, D("0.5"), D(40))),
    ("A100 40GB of an 80GB card", None, GpuSpec("A100-80GB", None, D("0.5"), D(40))),
    ("A100 20 GB of 80 GB", None, GpuSpec("A100-80GB", None, D("0.25"), D(20))),
    ("A100 80G卡的40G", None, GpuSpec("A100-80GB", None, D("0.5"), D(40))),
    ("A100 80G中的20G", None, GpuSpec("A100-80GB", None, D("0.25"), D(20))),
    ("A100 vGPU-20G", None, GpuSpec("A100-80GB", None, D("0.25"), D(20))),
    ("A100 80G 0.5 卡", None, GpuSpec("A100-80GB", None, D("0.5"), D(40))),
    ("RTX 4090 0.5卡", None, GpuSpec("RTX4090-24GB", None, D("0.5"), D(12))),
    ("H800 0.25卡", None, GpuSpec("H800-80GB", None, D("0.25"), D(20))),
    ("A100 40G 半卡", None, GpuSpec("A100-40GB", None, D("0.5"), D(20))),
    ("L40S 1/2", None, GpuSpec("L40S-48GB", None, D("0.5"), D(24))),
]


@pytest.mark.parametrize(("text", "hint", "expected"),
                         CATALOG_SPECS + INTERCONNECT_SPECS + SHARE_SPECS)
def test_parse_every_catalogued_card(text, hint, expected):
    assert parse_gpu(text, hint) == expected


REJECTED = [
    ("", "unknown"), ("GPU", "unknown"), ("Ascend 910B", "unknown"), ("RTX 4000", "unknown"),
    ("RTX 5000", "unknown"), ("RTX 4000 Ada 20GB", "unknown"), ("ML100", "unknown"),
    ("A100 or H100", "several GPU models"),
    ("A800 / H20", "several GPU models"), ("A100 80GB", "hint"),   # hint 40 contradicts 80
    ("A100 20G", "not a A100 memory size"), ("4090D 48G", "not a RTX4090D memory size"),
    ("H20 80GB", "not a H20 memory size"), ("B200 150GB", "not a B200 memory size"),
    ("A100 MIG 1g.10gb", "several A100 sizes"), ("A100 80GB 3g.20gb", "does not fit"),
    ("RTX 4090 MIG 1g.10gb", "without MIG"), ("L40S MIG 1g.12gb", "without MIG"),
    ("A30 MIG 3g.12gb", "fits no A30"), ("A100 1/3", "unsupported slice fraction"),
    ("A100 80GB 1/20", "unsupported slice fraction"), ("A100 0.3卡", "unsupported slice fraction"),
    ("A100 80G 1/4 40G切分", "is not 1/4"), ("A100 40GB 40G切分", "not smaller"),
    ("A100 80G 切分 80G", "not smaller"), ("20GB of a 70GB A100", "70 GB is not a A100"),
    ("A100 40GB 80GB", "several card memory sizes"), ("H100 SXM PCIe", "several variants"),
    ("HGX A100 PCIe", "several variants"),   # an HGX board carries SXM modules
]


# The public price archives' spellings (cloud-gpus.github.io, the-full-stack-website) of cards
# that are not sold in China any more but fill years of history. A bare "RTX 4000" / "RTX 5000"
# is the Turing Quadro or the Ada card: read only with "Quadro" or the Quadro's memory (above).
ARCHIVE_SPELLINGS = [
    ("RTX A5000", "RTXA5000-24GB"), ("A5000 (24 GB)", "RTXA5000-24GB"),
    ("A4000 (16 GB)", "RTXA4000-16GB"), ("K80", "K80-12GB"), ("K80 (12 GB)", "K80-12GB"),
    ("Tesla K80", "K80-12GB"), ("P100", "P100-16GB"), ("P100 (16 GB)", "P100-16GB"),
    ("Tesla P100 PCIe 12GB", "P100-12GB"), ("P4 (8 GB)", "P4-8GB"), ("Tesla P4", "P4-8GB"),
    ("P40", "P40-24GB"), ("M60", "M60-8GB"), ("GTX 1080", "GTX1080-8GB"),
    ("GTX 1080 Ti", "GTX1080TI-11GB"), ("Quadro RTX 6000", "QRTX6000-24GB"),
    ("Quadro RTX 6000 (24 GB)", "QRTX6000-24GB"), ("1x NVIDIA Quadro RTX 6000", "QRTX6000-24GB"),
    ("Q RTX 8000", "QRTX8000-48GB"), ("Quadro RTX 5000", "QRTX5000-16GB"),
    ("RTX5000 (16GB)", "QRTX5000-16GB"), ("RTX5000 (16 GB)", "QRTX5000-16GB"),
    ("RTX4000 (8 GB)", "QRTX4000-8GB"), ("Quadro P4000", "P4000-8GB"),
    ("Quadro P5000", "P5000-16GB"), ("Quadro P6000", "P6000-24GB"), ("MI250X", "MI250X-128GB"),
]


@pytest.mark.parametrize(("text", "model"), ARCHIVE_SPELLINGS)
def test_an_archive_spelling_reads_as_its_card(text, model):
    assert parse_gpu(text).gpu_model == model


def test_a_p4_is_never_read_in_a_p40_or_a_p4000():
    assert {parse_gpu(t).gpu_model for t in ("P4", "P40", "P4000")} == {
        "P4-8GB", "P40-24GB", "P4000-8GB"}


@pytest.mark.parametrize(("text", "reason"), REJECTED)
def test_rejected_with_reason(text, reason):
    hint = 40 if reason == "hint" else None
    with pytest.raises(GpuParseError) as err:
        parse_gpu(text, hint)
    assert reason in str(err.value)
    if text and reason not in ("hint",):
        assert repr(text) in str(err.value)   # the reason names the text


@pytest.mark.parametrize("hint", ["abc", "80 TB", float("nan"), True, "-80"])
def test_bad_hint_raises_gpu_parse_error(hint):
    with pytest.raises(GpuParseError, match="VRAM hint"):
        parse_gpu("Tesla A100", hint)


def test_unknown_card_error_names_text():
    with pytest.raises(GpuParseError,
                       match=r"unknown GPU model \(not in card_catalog.csv\) in 'Ascend 910B'"):
        parse_gpu("Ascend 910B")


@pytest.mark.parametrize(("model", "family"), [
    ("A100-40GB", "A100"), ("A100-80GB", "A100"), ("H100-80GB", "H100"), ("H100-94GB", "H100"),
    ("H800-80GB", "H800"), ("RTX4090-24GB", "RTX4090"), ("RTX4090-48GB", "RTX4090"),
    ("RTX4090D-24GB", "RTX4090D"), ("A800-80GB", "A800"), ("H20-96GB", "H20"),
    ("MI300X-192GB", "MI300X"), ("RTX6000ADA-48GB", "RTX6000ADA")])
def test_gpu_family(model, family):
    assert gpu_family(model) == family


@pytest.mark.parametrize("model", ["A800-40G", "A100", "rtx4090-24gb", "", "H20-80GB"])
def test_gpu_family_rejects_non_canonical(model):
    with pytest.raises(GpuParseError):
        gpu_family(model)


def test_card_vram_matches_model_names():
    mission = {"A100-40GB": 40, "A100-80GB": 80, "H100-80GB": 80, "H100-94GB": 94,
               "H800-80GB": 80, "RTX4090-24GB": 24, "RTX4090-48GB": 48, "RTX4090D-24GB": 24}
    assert {m: CARD_VRAM_GB[m] for m in mission} == mission
    assert set(CARD_VRAM_GB) == set(CANONICAL_MODELS)
    assert all(m.endswith(f"-{CARD_VRAM_GB[m]}GB") for m in CANONICAL_MODELS)
    assert len(set(CANONICAL_MODELS)) == len(CANONICAL_MODELS)


def test_catalog_has_every_card_the_sources_sell():
    needed = {"A100", "H100", "H800", "RTX4090", "A800", "H20", "H200", "B200", "L20", "L40",
              "L40S", "L4", "A10", "A30", "A40", "V100", "T4", "RTX3090", "RTX4090D", "RTX5090",
              "MI300X"}
    assert needed <= set(CARDS_BY_FAMILY)
    assert set(MISSION_FAMILIES) <= set(CARDS_BY_FAMILY)


@pytest.mark.parametrize("card", CARDS, ids=lambda c: c.family)
def test_every_family_name_reads_as_itself(card):
    spec = parse_gpu(card.family)
    assert spec.gpu_model == f"{card.family}-{card.default_gb}GB"
    for size in card.memory_gb:
        assert parse_gpu(f"NVIDIA {card.family} {size}GB").gpu_model == f"{card.family}-{size}GB"


@pytest.mark.parametrize("card", CARDS, ids=lambda c: c.family)
def test_price_bounds_catch_an_eightfold_misread(card):
    # A GPU count read as 1 on an 8-GPU server multiplies the per-GPU price by 8: the high bound
    # sits below 8x the card's typical price, yet leaves room for a slice's premium (2x).
    assert 2 * card.typical_cny <= card.high_cny < 8 * card.typical_cny
    # spot and marketplace prices reach a third of the typical price; lower is a unit slip
    assert card.low_cny <= card.typical_cny / 3
    assert card.price_evidence


def test_catalog_rejects_an_inconsistent_row(tmp_path):
    path = tmp_path / "cards.csv"
    header = Path(card_catalog.__file__).with_name("card_catalog.csv").read_text().splitlines()[0]
    path.write_text(header + "\nX1,NVIDIA,datacenter,X1,40|80,48,80,,,5,1,20,none\n")
    with pytest.raises(ValueError, match="inconsistent row for X1"):
        card_catalog.load_cards(path)


def test_4090d_never_merges_with_4090():
    assert parse_gpu("RTX 4090D").gpu_model != parse_gpu("RTX 4090").gpu_model
    assert gpu_family(parse_gpu("4090 D").gpu_model) == "RTX4090D"


@pytest.mark.parametrize("text", [spec[0] for spec in SPECS])
def test_slice_vram_is_fraction_of_card(text):
    hint = next(h for t, h, _ in SPECS if t == text)
    spec = parse_gpu(text, hint)
    assert spec.gpu_model in CANONICAL_MODELS
    assert 0 < spec.gpu_fraction <= 1
    # the offered VRAM is the card's memory times the fraction (MIG: within one memory slice)
    assert abs(spec.vram_gb - CARD_VRAM_GB[spec.gpu_model] * spec.gpu_fraction) <= D(2)


# --- properties over the whole catalog ---------------------------------------------------------

_CARD_SIZES = st.sampled_from([(card, size) for card in CARDS for size in card.memory_gb])
_FRACTIONS = st.sampled_from([(1, 2), (1, 4), (1, 8)])


def _gb(value: D) -> str:
    return f"{value.normalize():f}"


@given(_CARD_SIZES, st.sampled_from(["{f} {m}GB", "NVIDIA {f}-{m}G", "{f}_{m}GB", "{f} ({m} GB)"]),
       st.sampled_from(["", " SXM", " PCIe", " HGX"]),
       st.sampled_from(["", " NVLink", " NVSwitch"]))
def test_any_spelling_of_a_whole_card(card_size, template, form, link):
    card, size = card_size
    spec = parse_gpu(template.format(f=card.family, m=size) + form + link)
    assert (spec.gpu_model, spec.gpu_fraction, spec.vram_gb) == (
        f"{card.family}-{size}GB", 1, size)
    assert spec.gpu_variant == {"": None, " SXM": "SXM", " PCIe": "PCIe", " HGX": "SXM"}[form]
    assert spec.interconnect == (link.strip() or None)   # never read as a variant


@given(_CARD_SIZES, _FRACTIONS, st.sampled_from([
    "{f} {m}G 切分 {s}G", "{s}GB of an {m}GB {f}", "{f} {m}G卡的{s}G", "{f} {m}GB {n}/{d}",
    "{f} {m}GB vGPU {s}GB"]))
def test_a_slice_by_memory_share_is_a_fraction_of_the_full_card(card_size, fraction, template):
    card, size = card_size
    n, d = fraction
    slice_gb = D(size) * n / d
    text = template.format(f=card.family, m=size, s=_gb(slice_gb), n=n, d=d)
    spec = parse_gpu(text)
    assert spec.gpu_model == f"{card.family}-{size}GB"   # the card it is cut from, never smaller
    assert spec.gpu_fraction == D(n) / d
    assert spec.vram_gb == slice_gb


@given(st.text(max_size=40))
def test_any_text_either_parses_or_says_why(text):
    try:
        spec = parse_gpu(text)
    except GpuParseError as exc:
        assert str(exc)
    else:
        assert spec.gpu_model in CANONICAL_MODELS and 0 < spec.gpu_fraction <= 1
