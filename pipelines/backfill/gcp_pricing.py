"""Cyclenerd/google-cloud-pricing-cost-calculator's `pricing.yml`: Google Cloud's prices as its
weekly job computes them from the Cloud Billing Catalog API. Under `compute: instance:` each
machine type lists its cpu, ram, the GPUs it comes with (`a100: 1`, `h100-80gb: 8`, ...) and
`cost: {<region>: {hour, hour_spot, month, month_1y, month_3y, month_spot}}` in USD, the hour
the whole VM's (vCPUs, memory, GPUs and the local SSD it comes with, summed by the repository's
build/pricing.pl). Early versions have no `hour_spot` and no `about:` header. Pure.

* A machine type that names no GPU is a CPU instance: never read (its block is skipped by text,
  so a 4 MB version costs a few small YAML loads, not one big one).
* `hour` is the on-demand offer and `hour_spot` the spot offer of the type in the region. The
  monthly figures are not list prices: pricing.pl computes them from the hour (x 730 hours, and
  its sustained-use discount where one applies), so they are left out.
* A GPU key the parser does not know is counted, not guessed (GPU_KEYS below). A count below
  one is a slice of the card (G4's `rtx6000: 0.25`), read as the fraction.
"""

from __future__ import annotations

import re
from fractions import Fraction

import yaml

from pipelines.backfill.offers import ArchiveOffer, Parsed, count_left_out, positive

CLOUD = "gcp"
# The file's GPU keys (pricing.pl's `$gcp->{compute}{instance}{$machine}{...}`) -> the card as
# our card parser reads it. rtx6000 is the G4's RTX PRO 6000 (pricing.pl: "NVIDIA RTX PRO 6000
# GPUs"), not the Quadro RTX 6000.
GPU_KEYS = {
    "a100": "A100 40GB", "a100-80gb": "A100 80GB", "h100-80gb": "H100 80GB",
    "h100-80gb-mega": "H100 80GB", "l4": "L4", "rtx6000": "RTX PRO 6000",
}
# Every other attribute a machine type has had (cost, size, disk, network tier)
MACHINE_KEYS = frozenset({"cost", "cpu", "ram", "type", "local-ssd", "local", "bandwidth",
                          "tier1"})
KINDS = (("on_demand", "hour"), ("spot", "hour_spot"))
MACHINE_RE = re.compile(r"^    ([^\s:#][^:]*):\s*$", re.M)
ATTRIBUTE_RE = re.compile(r"^      ([^\s:#][^:]*):", re.M)
REGION_RE = re.compile(r"^        ([^\s:#][^:]*):\s*$", re.M)
SECTION_END_RE = re.compile(r"^ {0,3}\S", re.M)
GENERATED_RE = re.compile(r"^  generated:\s*(.+?)\s*$", re.M)


def instance_section(text: str) -> tuple[int, int]:
    """Where `compute: instance:` starts and ends in the text; ValueError when it has none."""
    compute = re.search(r"^compute:[ \t]*$", text, re.M)
    instance = re.compile(r"^  instance:[ \t]*\n", re.M).search(text, compute.end()) \
        if compute else None
    if not instance or re.search(r"^\S", text[compute.end():instance.start()], re.M):
        raise ValueError("pricing.yml: no compute: instance: section")
    end = SECTION_END_RE.search(text, instance.end())
    return instance.end(), end.start() if end else len(text)


def _load(block: str) -> dict:
    try:
        body = yaml.load(block, Loader=yaml.CSafeLoader)
    except yaml.YAMLError as exc:
        raise ValueError(f"pricing.yml: a machine type is not YAML: {exc}") from exc
    return body if isinstance(body, dict) else {}


def _card(key: str, count: object) -> tuple[str, str] | None:
    """(gpu_text, gpu_count) of a GPU key and its count: whole cards ('a100', 8), or one slice
    of a card (G4's rtx6000 0.25 -> 'RTX PRO 6000 1/4' x 1); None for anything else."""
    if isinstance(count, bool) or not isinstance(count, int | float) or count <= 0:
        return None
    if count == int(count):
        return GPU_KEYS[key], str(int(count))
    share = Fraction(count).limit_denominator(64)
    if count < 1 and share == Fraction(count):
        return f"{GPU_KEYS[key]} {share.numerator}/{share.denominator}", "1"
    return None


def _machine_offers(name: str, spec: dict, line: int, block: str, generated: str | None,
                    left_out: dict[str, int]) -> list[ArchiveOffer]:
    gpus = [(k, v) for k, v in spec.items() if k in GPU_KEYS]
    card = _card(*gpus[0]) if len(gpus) == 1 else None
    if card is None:
        count_left_out(left_out, "a machine type whose GPUs are not one key with a count")
        return []
    key, (gpu_text, count) = gpus[0][0], card
    region_lines = {m[1]: line + block.count("\n", 0, m.start())
                    for m in REGION_RE.finditer(block)}
    offers = []
    costs = spec.get("cost")
    for region, prices in costs.items() if isinstance(costs, dict) else ():
        if not isinstance(prices, dict):
            continue
        extra = {"vcpus_text": str(spec["cpu"])} if spec.get("cpu") else {}
        if spec.get("ram"):
            extra["memory_text"] = f"{spec['ram']} GB"
        vendor_data = {"gpu_key": key, **({"generated": generated} if generated else {})}
        priced = False
        for kind, column in KINDS:
            if price := positive(str(prices.get(column, ""))):
                priced = True
                offers.append(ArchiveOffer(CLOUD, region_lines.get(region, line), {
                    "sku": name, "gpu_text": gpu_text, "gpu_count": count,
                    "region_text": region, "offer_kind": kind, "price_amount": price,
                    "currency": "USD", "billing_period": "hour", **extra,
                    "vendor_data": vendor_data}))
        if not priced:
            count_left_out(left_out, "no hourly price in the region")
    return offers


def parse_gcp_pricing(text: str) -> Parsed:
    """The GPU machine types' offers of one version of pricing.yml."""
    start, end = instance_section(text)
    generated = (m[1] if (m := GENERATED_RE.search(text, 0, start)) else None)
    heads = list(MACHINE_RE.finditer(text, start, end))
    first_line = text.count("\n", 0, start) + 1
    offers: list[ArchiveOffer] = []
    left_out: dict[str, int] = {}
    line, at = first_line, start
    for n, head in enumerate(heads):
        block_end = heads[n + 1].start() if n + 1 < len(heads) else end
        line += text.count("\n", at, head.start())
        at = head.start()
        block = text[head.start():block_end]
        keys = set(ATTRIBUTE_RE.findall(block))
        unknown = sorted(keys - GPU_KEYS.keys() - MACHINE_KEYS)
        if not keys & GPU_KEYS.keys():     # a GPU the parser does not know is said, not guessed
            count_left_out(left_out, f"a machine attribute the parser does not know "
                                     f"({', '.join(unknown)})" if unknown
                           else "no GPU (a CPU machine type)")
            continue
        spec = _load(block).get(head[1])
        if isinstance(spec, dict):
            offers += _machine_offers(head[1], spec, line, block, generated, left_out)
    return Parsed(offers, left_out)
