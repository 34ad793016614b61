"""Vendor card names -> canonical model, variant, slice fraction and offered VRAM."""

from __future__ import annotations

from decimal import Decimal as D

import pytest

from spiders.parsing.gpu_models import (
    CANONICAL_MODELS, CARD_VRAM_GB, GpuParseError, GpuSpec, gpu_family, parse_gpu)

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
    ("1/2 A100", 80, GpuSpec("A100-80GB", None, D("0.5"), D(40))),
    ("A100 1/4", 20, GpuSpec("A100-80GB", None, D("0.25"), D(20))),    # hint = the slice's VRAM
    ("A100 20G切分", None, GpuSpec("A100-80GB", None, D("0.25"), D(20))),
    ("A100 40G切分", None, GpuSpec("A100-80GB", None, D("0.5"), D(40))),
    ("A100 80GB 20G切分", None, GpuSpec("A100-80GB", None, D("0.25"), D(20))),
    ("A100 40GB vGPU 10GB", None, GpuSpec("A100-40GB", None, D("0.25"), D(10))),
    ("A100 80G 1/4 20G", None, GpuSpec("A100-80GB", None, D("0.25"), D(20))),
    ("A100 半卡", 80, GpuSpec("A100-80GB", None, D("0.5"), D(40))),
    ("A100 四分之一", 80, GpuSpec("A100-80GB", None, D("0.25"), D(20))),
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


REJECTED = [
    ("V100", "V100"), ("Tesla V100-SXM2-32GB", "V100"), ("A10", "A10"), ("A10G", "A10G"),
    ("L40S", "L40S"), ("NVIDIA L40S 48GB", "L40S"), ("T4", "T4"), ("A800", "A800"),
    ("A800 80GB PCIe", "A800"), ("H200", "H200"), ("H20", "H20"), ("RTX 3090", "3090"),
    ("RTX 5090", "5090"), ("", "unknown"), ("GPU", "unknown"), ("Ascend 910B", "910B"),
    ("A100 or H100", "several GPU models"), ("A100 80GB", "hint"),   # hint 40 contradicts 80
    ("A100 20G", "not a A100 memory size"), ("4090D 48G", "not a RTX4090D memory size"),
    ("A100 MIG 1g.10gb", "several A100 sizes"), ("A100 80GB 3g.20gb", "does not fit"),
    ("RTX 4090 MIG 1g.10gb", "without MIG"), ("A100 1/3", "unsupported slice fraction"), ("A100 80GB 1/20", "unsupported slice fraction"),
    ("A100 80G 1/4 40G切分", "is not 1/4"), ("A100 40GB 40G切分", "not smaller"),
    ("A100 40GB 80GB", "several card memory sizes"), ("H100 SXM PCIe", "several variants"),
]


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


def test_untracked_card_error_names_text():
    with pytest.raises(GpuParseError, match=r"untracked GPU model A800 in 'NVIDIA A800'"):
        parse_gpu("NVIDIA A800")


@pytest.mark.parametrize(("model", "family"), [
    ("A100-40GB", "A100"), ("A100-80GB", "A100"), ("H100-80GB", "H100"), ("H100-94GB", "H100"),
    ("H800-80GB", "H800"), ("RTX4090-24GB", "RTX4090"), ("RTX4090-48GB", "RTX4090"),
    ("RTX4090D-24GB", "RTX4090D")])
def test_gpu_family(model, family):
    assert gpu_family(model) == family


@pytest.mark.parametrize("model", ["A800-80GB", "A100", "rtx4090-24gb", ""])
def test_gpu_family_rejects_non_canonical(model):
    with pytest.raises(GpuParseError):
        gpu_family(model)


def test_card_vram_matches_model_names():
    assert CARD_VRAM_GB == {
        "A100-40GB": 40, "A100-80GB": 80, "H100-80GB": 80, "H100-94GB": 94, "H800-80GB": 80,
        "RTX4090-24GB": 24, "RTX4090-48GB": 48, "RTX4090D-24GB": 24}
    assert set(CARD_VRAM_GB) == set(CANONICAL_MODELS)


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
