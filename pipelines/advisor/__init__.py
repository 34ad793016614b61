"""The advisor: from a workload (model size, task, precision, usage pattern) to the cheapest
configuration of today's offers that fits it.

Pure logic: a memory estimate, the configurations each offer allows (a slice, a whole card,
n cards, a server), their cost for the usage pattern under the offer's billing, their expected
wall time, and a ranking. The one piece of I/O is `offers_from_db`, which reads
`marts.latest_prices` from a DuckDB connection. Every number below is a documented rule of thumb
(docs/advisor.md), shown to the user next to the answer it produced.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from spiders.parsing.prices import HOURS_PER_PERIOD

# ---------------------------------------------------------------------------------------------
# The workload
# ---------------------------------------------------------------------------------------------

TASKS = ("full-finetune", "lora", "qlora", "inference", "pretrain")
PRECISIONS = ("fp32", "bf16", "int8", "int4")
TRAINING_TASKS = frozenset({"full-finetune", "lora", "qlora", "pretrain"})

# Other spellings users type (Chinese included), folded to the canonical value.
TASK_ALIASES = {
    "full-finetune": ("full", "finetune", "fine-tune", "full-fine-tune", "sft", "全量微调", "全参微调"),
    "lora": ("lora微调",),
    "qlora": ("qlora微调",),
    "inference": ("infer", "serving", "serve", "推理"),
    "pretrain": ("pre-train", "pretraining", "预训练"),
}
PRECISION_ALIASES = {
    "fp32": ("float32", "tf32"),
    "bf16": ("fp16", "float16", "bfloat16", "half"),
    "int8": ("8bit", "8-bit", "fp8"),
    "int4": ("4bit", "4-bit", "nf4", "gptq", "awq"),
}

GB = 1e9  # bytes; estimates are compared with the vendors' nominal "80 GB", a slight safety margin


class AdvisorError(ValueError):
    """A workload the advisor cannot size (an unknown task, a bad parameter count ...)."""


def _fold(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).casefold().split()).replace("_", "-")


def _canonical(text: str, aliases: Mapping[str, Sequence[str]], what: str) -> str:
    key = _fold(text)
    for value, spellings in aliases.items():
        if key == value or key in (_fold(s) for s in spellings):
            return value
    raise AdvisorError(f"unknown {what} {text!r}; known: {', '.join(aliases)}")


def parse_task(text: str) -> str:
    return _canonical(text, TASK_ALIASES, "task")


def parse_precision(text: str) -> str:
    return _canonical(text, PRECISION_ALIASES, "precision")


_PARAMS_RE = re.compile(r"^([0-9]+(?:\.[0-9]*)?(?:e[+-]?[0-9]+)?)\s*([kmbgt]|亿|万|千亿)?$")
_PARAMS_UNITS = {None: 1, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12,
                 "万": 1e4, "亿": 1e8, "千亿": 1e11}


def parse_params(text: str | float | int) -> float:
    """A parameter count: "13B" / "13b" -> 1.3e10, "7e9", "70B", "350M", "1.5T", "130亿"."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        match = _PARAMS_RE.match(_fold(str(text)))
        if not match:
            raise AdvisorError(f"not a parameter count: {text!r} (write 13B, 7e9, 350M, 130亿)")
        value = float(match.group(1)) * _PARAMS_UNITS[match.group(2)]
    if not 1e6 <= value <= 1e14:
        raise AdvisorError(f"a parameter count of {value:.3g} is out of range (1M to 100T)")
    return value


@dataclass(frozen=True)
class Workload:
    """What the user wants to run and how: `hours_per_day` × `days` is the usage pattern;
    `gpu_hours` (optional) is the work, in hours on one A100-80GB."""

    params: float
    task: str
    precision: str = "bf16"
    hours_per_day: float = 8.0
    days: int = 1
    gpu_hours: float | None = None
    interruptible: bool = False
    region: str | None = None
    batch_size: int | None = None
    seq_len: int | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise AdvisorError(f"unknown task {self.task!r}; known: {', '.join(TASKS)}")
        if self.precision not in PRECISIONS:
            raise AdvisorError(f"unknown precision {self.precision!r}; "
                               f"known: {', '.join(PRECISIONS)}")
        if not 0 < self.hours_per_day <= 24:
            raise AdvisorError(f"hours per day must be in (0, 24], not {self.hours_per_day}")
        if self.days < 1:
            raise AdvisorError(f"days must be at least 1, not {self.days}")
        if self.gpu_hours is not None and self.gpu_hours <= 0:
            raise AdvisorError(f"GPU-hours must be positive, not {self.gpu_hours}")
        for hint, value in (("batch size", self.batch_size), ("sequence length", self.seq_len)):
            if value is not None and value < 1:
                raise AdvisorError(f"{hint} must be at least 1, not {value}")

    @property
    def training(self) -> bool:
        return self.task in TRAINING_TASKS

    @classmethod
    def from_mapping(cls, spec: Mapping) -> Workload:
        """A saved profile (workloads.yaml) or CLI values: params/task/precision as users write
        them (`13B`, `LoRA`, `fp16`), the usage pattern, and the optional hints."""
        known = {"name", "params", "task", "precision", "hours_per_day", "days", "gpu_hours",
                 "interruptible", "region", "batch_size", "seq_len"}
        unknown = sorted(set(spec) - known)
        if unknown:
            raise AdvisorError(f"unknown workload field(s) {', '.join(unknown)}; known: "
                               f"{', '.join(sorted(known))}")
        for required in ("params", "task", "hours_per_day", "days"):
            if spec.get(required) is None:
                raise AdvisorError(f"a workload needs {required!r}")

        def number(key: str, kind: type) -> float | int | None:
            value = spec.get(key)
            if value is None:
                return None
            try:
                number = kind(value)
            except (TypeError, ValueError):
                raise AdvisorError(f"{key} must be a number, not {value!r}") from None
            if kind is int and number != float(value):
                raise AdvisorError(f"{key} must be a whole number, not {value!r}")
            return number

        interruptible = spec.get("interruptible", False)
        if not isinstance(interruptible, bool):
            raise AdvisorError(f"interruptible is true or false, not {interruptible!r}")
        return cls(params=parse_params(spec["params"]), task=parse_task(str(spec["task"])),
                   precision=parse_precision(str(spec.get("precision") or "bf16")),
                   hours_per_day=number("hours_per_day", float), days=number("days", int),
                   gpu_hours=number("gpu_hours", float),
                   interruptible=interruptible,
                   region=str(spec["region"]) if spec.get("region") else None,
                   batch_size=number("batch_size", int), seq_len=number("seq_len", int),
                   name=str(spec["name"]) if spec.get("name") else None)

    def describe(self) -> str:
        size = f"{self.params / 1e9:g}B" if self.params >= 1e9 else f"{self.params / 1e6:g}M"
        work = f", {self.gpu_hours:g} A100-80GB GPU-hours of work" if self.gpu_hours else ""
        return (f"{size} {self.task} in {self.precision}, {self.hours_per_day:g} h/day for "
                f"{self.days} day{'s' if self.days != 1 else ''}{work}"
                f"{', interruptible' if self.interruptible else ''}")


# ---------------------------------------------------------------------------------------------
# 1. Memory estimate
# ---------------------------------------------------------------------------------------------

# Bytes per parameter for the weights as stored, by precision.
WEIGHT_BYTES = {"fp32": 4.0, "bf16": 2.0, "int8": 1.0, "int4": 0.5}
# Mixed-precision Adam: bf16 weights 2 + bf16 gradients 2 + fp32 master weights 4 + Adam's two
# fp32 moments 8 = 16 bytes per parameter; pure fp32 Adam is 4 + 4 + 8 = 16 as well.
ADAM_TRAINING_BYTES = 16.0
# LoRA/QLoRA train adapters of about 1 % of the parameters (rank 16-64 on the attention and MLP
# projections), each with the same 16 bytes of weights, gradients and Adam state.
ADAPTER_SHARE = 0.01
# QLoRA's base weights: 4-bit NF4 (0.5 B) plus quantization constants and the layers kept in
# bf16 (embeddings, norms, output head): about 0.55 B per parameter.
QLORA_BASE_BYTES = 0.55
# Activations (training, with gradient checkpointing) and the KV cache (inference) on top of the
# weights: +20 % up to 4,096 tokens per step (batch × sequence); +10 points per doubling beyond,
# at most +100 %.
BASE_MARGIN = 0.20
MARGIN_REFERENCE_TOKENS = 4096
MARGIN_PER_DOUBLING = 0.10
MAX_MARGIN = 1.00
DEFAULT_BATCH, DEFAULT_SEQ_LEN = 1, 2048


@dataclass(frozen=True)
class Estimate:
    """GPU memory the workload needs, with the assumptions that produced it (shown to users)."""

    bytes_per_param: float
    weights_gb: float       # everything that scales with the parameter count
    margin: float           # the activation / KV-cache margin, as a share of weights_gb
    total_gb: float
    assumptions: tuple[str, ...]


def estimate_memory(workload: Workload) -> Estimate:
    """The sizing rules buyers use, plus a documented margin for activations and the KV cache."""
    task, precision, params = workload.task, workload.precision, workload.params
    notes: list[str] = []
    adapters = ADAPTER_SHARE * ADAM_TRAINING_BYTES
    if task in ("full-finetune", "pretrain"):
        if precision in ("int8", "int4"):
            raise AdvisorError(f"{task} trains every weight, which needs fp32 or bf16 precision; "
                               "for a quantized base model use --task qlora")
        bpp = ADAM_TRAINING_BYTES
        notes.append(f"{task} with Adam in {precision}: 16 B/param (weights, gradients, fp32 "
                     "master weights and two Adam moments)")
    elif task == "lora":
        if precision == "int4":
            raise AdvisorError("LoRA on a 4-bit base model is QLoRA: use --task qlora")
        bpp = WEIGHT_BYTES[precision] + adapters
        notes.append(f"LoRA: frozen base weights in {precision} ({WEIGHT_BYTES[precision]:g} "
                     f"B/param) + adapters of {ADAPTER_SHARE:.0%} of the parameters trained with "
                     f"Adam (16 B each = {adapters:.2f} B/param)")
    elif task == "qlora":
        bpp = QLORA_BASE_BYTES + adapters
        notes.append(f"QLoRA: 4-bit NF4 base weights with quantization constants "
                     f"({QLORA_BASE_BYTES} B/param) + adapters of {ADAPTER_SHARE:.0%} of the "
                     f"parameters trained with Adam ({adapters:.2f} B/param)")
        if precision != "int4":
            notes.append(f"QLoRA stores the base in 4 bits whatever the precision; {precision} "
                         "is the adapters' compute type")
    else:  # inference
        bpp = WEIGHT_BYTES[precision]
        notes.append(f"inference in {precision}: {bpp:g} B/param for the weights")
    weights_gb = params * bpp / GB
    batch = workload.batch_size or DEFAULT_BATCH
    seq = workload.seq_len or DEFAULT_SEQ_LEN
    tokens = batch * seq
    margin = BASE_MARGIN
    if tokens > MARGIN_REFERENCE_TOKENS:
        margin = min(MAX_MARGIN, BASE_MARGIN + MARGIN_PER_DOUBLING
                     * math.log2(tokens / MARGIN_REFERENCE_TOKENS))
    what = "activations (gradient checkpointing)" if workload.training else "the KV cache"
    hinted = "" if workload.batch_size or workload.seq_len else " (default hints)"
    notes.append(f"+{margin:.0%} for {what}: batch {batch} × sequence {seq} = {tokens:,} tokens"
                 f"{hinted}; +20 % up to 4,096 tokens, +10 points per doubling beyond")
    total = weights_gb * (1 + margin)
    notes.insert(0, f"{params / 1e9:g}B params × {bpp:.2f} B = {weights_gb:,.1f} GB, "
                    f"+{margin:.0%} = {total:,.1f} GB (GB = 10^9 bytes)")
    return Estimate(bpp, weights_gb, margin, total, tuple(notes))


# ---------------------------------------------------------------------------------------------
# The offers
# ---------------------------------------------------------------------------------------------

OFFER_COLUMNS = ("offer_id", "source", "vendor", "gpu_model", "gpu_variant", "gpu_count",
                 "gpu_fraction", "vram_gb", "offer_kind", "billing_period", "price_amount",
                 "currency", "price_per_gpu_hour_cny", "price_per_gpu_hour_usd", "region_code",
                 "country", "province_or_state", "city", "sku", "available", "last_seen_at", "url")


@dataclass(frozen=True)
class Offer:
    """One current offer (a row of marts.latest_prices)."""

    source: str
    vendor: str
    gpu_model: str
    gpu_count: int
    gpu_fraction: float
    offer_kind: str
    billing_period: str
    price_amount: float
    currency: str
    price_per_gpu_hour_cny: float
    region_code: str
    country: str
    price_per_gpu_hour_usd: float | None = None
    vram_gb: float | None = None
    gpu_variant: str | None = None
    province_or_state: str | None = None
    city: str | None = None
    sku: str | None = None
    available: bool | None = None
    last_seen_at: datetime | None = None
    url: str | None = None
    offer_id: str | None = None

    @classmethod
    def from_row(cls, row: Mapping) -> Offer:
        def num(value):
            return None if value is None else float(value)

        return cls(
            source=row["source"], vendor=row["vendor"], gpu_model=row["gpu_model"],
            gpu_count=int(row.get("gpu_count") or 1),
            gpu_fraction=float(row.get("gpu_fraction") or 1),
            offer_kind=row.get("offer_kind") or "on_demand", billing_period=row["billing_period"],
            price_amount=float(row["price_amount"]), currency=row.get("currency") or "CNY",
            price_per_gpu_hour_cny=float(row["price_per_gpu_hour_cny"]),
            price_per_gpu_hour_usd=num(row.get("price_per_gpu_hour_usd")),
            region_code=row.get("region_code") or "", country=row.get("country") or "",
            vram_gb=num(row.get("vram_gb")), gpu_variant=row.get("gpu_variant"),
            province_or_state=row.get("province_or_state"), city=row.get("city"),
            sku=row.get("sku"), available=row.get("available"),
            last_seen_at=row.get("last_seen_at"), url=row.get("url"), offer_id=row.get("offer_id"))

    @property
    def region_group(self) -> str:
        """The province in China, the country elsewhere (as the signal marts group regions)."""
        if self.country == "CN":
            return self.province_or_state or "CN"
        return self.country

    @property
    def is_slice(self) -> bool:
        return self.gpu_fraction < 1

    @property
    def card_vram_gb(self) -> float:
        """VRAM of one card of the offer (of the slice, for a slice)."""
        if self.vram_gb:
            return self.vram_gb
        match = re.search(r"-(\d+)GB$", self.gpu_model)
        return float(match.group(1)) * self.gpu_fraction if match else 0.0

    @property
    def instance_price_cny(self) -> float:
        """What one rental of the offer costs per billing period, in CNY: the inverse of the
        normalization of price_per_gpu_hour_cny (so foreign currencies use the row's FX rate)."""
        return (self.price_per_gpu_hour_cny * HOURS_PER_PERIOD[self.billing_period]
                * self.gpu_count * self.gpu_fraction)

    @property
    def usd_per_cny(self) -> float | None:
        if not self.price_per_gpu_hour_usd or not self.price_per_gpu_hour_cny:
            return None
        return self.price_per_gpu_hour_usd / self.price_per_gpu_hour_cny

    @property
    def product_key(self) -> tuple:
        """Rows that are the same rental under different billing periods."""
        return (self.source, self.vendor, self.region_code, self.sku, self.gpu_model,
                self.gpu_variant, self.gpu_count, self.gpu_fraction, self.offer_kind == "spot")


def offers_from_db(con) -> list[Offer]:
    """Every current offer of marts.latest_prices (the advisor's only I/O)."""
    cursor = con.execute(f"select {', '.join(OFFER_COLUMNS)} from marts.latest_prices")
    names = [d[0] for d in cursor.description]
    return [Offer.from_row(dict(zip(names, row))) for row in cursor.fetchall()]


# ---------------------------------------------------------------------------------------------
# Region filter: Chinese and English names
# ---------------------------------------------------------------------------------------------

def region_predicate(text: str,
                     offers: Iterable[Offer] = ()) -> tuple[Callable[[Offer], bool], str]:
    """--region as a test on an offer, and how it was read: a province (江苏 or Jiangsu, 内蒙古 or
    Inner Mongolia), a city, a country code (CN, US) or a vendor region code (eastus). Unknown
    text raises AdvisorError listing the provinces."""
    from spiders.parsing.regions import RegionParseError, province_aliases, resolve_region

    key = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    offers = list(offers)

    def fold(value: str | None) -> str:
        return " ".join(unicodedata.normalize("NFKC", value or "").casefold().split())

    provinces = {fold(alias): name for alias, name in province_aliases().items()}
    provinces.update({fold(o.province_or_state): o.province_or_state for o in offers
                      if o.province_or_state})
    if key in provinces:
        name = provinces[key]
        return (lambda o: o.province_or_state == name), f"province/state {name}"
    cities = {fold(o.city): o.city for o in offers if o.city}
    if key in cities:
        name = cities[key]
        return (lambda o: o.city == name), f"city {name}"
    countries = {fold(o.country): o.country for o in offers}
    if key in countries:
        name = countries[key]
        return (lambda o: o.country == name), f"country {name}"
    codes = {fold(o.region_code) for o in offers}
    if key in codes:
        return (lambda o: fold(o.region_code) == key), f"region code {text}"
    try:  # other spellings of a place: 江苏省, 华北2（北京）, "Texas, US"
        region = resolve_region(text)
    except RegionParseError:
        region = None
    if region and region.city:
        return (lambda o: o.city == region.city), f"city {region.city}"
    if region and region.province_or_state:
        name = region.province_or_state
        return (lambda o: o.province_or_state == name), f"province/state {name}"
    if region:
        return (lambda o: o.country == region.country), f"country {region.country}"
    known = sorted({n for n in provinces.values() if n})
    raise AdvisorError(f"unknown region {text!r}; known provinces/states: {', '.join(known)}; "
                       "or a city, a country code (CN, US) or a vendor region code")


# ---------------------------------------------------------------------------------------------
# 2. Throughput and efficiency (documented in docs/advisor.md)
# ---------------------------------------------------------------------------------------------

# Relative throughput of one whole card, A100-80GB SXM = 1.0: (training, inference).
# Training follows dense bf16 tensor throughput as achieved in practice (not the 3.2x peak ratio
# of H100 to A100); inference is mostly memory-bandwidth bound, hence the 4090's better showing.
THROUGHPUT = {
    "A100-80GB": (1.0, 1.0),
    "A100-40GB": (0.95, 0.8),      # the same chip with 1.6 instead of 2.0 TB/s
    "H100-80GB": (2.5, 2.0),
    "H100-94GB": (2.3, 2.4),       # H100 NVL: PCIe-class clocks, 3.9 TB/s memory
    "H800-80GB": (2.5, 2.0),       # H100 compute; only its NVLink is cut (see scaling)
    "RTX4090-24GB": (0.55, 0.8),
    "RTX4090-48GB": (0.55, 0.8),   # the same chip with modded memory
    "RTX4090D-24GB": (0.5, 0.7),   # 114 of the 4090's 128 SMs
}
# PCIe boards of the datacentre cards run at lower power than SXM (A100 300 W vs 400 W; H100
# PCIe 756 vs 989 TFLOPS, 2.0 vs 3.35 TB/s): applied when gpu_variant says PCIe.
PCIE_FACTOR = {"A100": 0.9, "H100": 0.75, "H800": 0.75}
# A MIG/vGPU slice gets its share of the card, less a penalty for the memory bandwidth and
# caches it shares with the other tenants.
SLICE_EFFICIENCY = 0.75
# Data parallel (the model fits one card; more cards only go faster): each added card adds 0.95
# of a card (gradient all-reduce overhead): 8 cards = 1 + 7 × 0.95 = 7.65 cards of work.
DATA_PARALLEL_ADDED_CARD = 0.95
# Model parallel (the model does not fit one card; tensor/pipeline/FSDP sharding): each card
# works at this share of its single-card throughput. Base values for an unknown interconnect;
# NVLink (SXM/NVL boards) +0.05, PCIe (and consumer cards, which have no NVLink) -0.05. Beyond 8
# cards the job spans servers and the network dominates: no interconnect adjustment.
MODEL_PARALLEL_EFFICIENCY = {2: 0.75, 4: 0.70, 8: 0.65, 16: 0.55, 32: 0.50, 64: 0.45}
NVLINK_BONUS, PCIE_PENALTY = 0.05, 0.05
# H800 is the H100 with NVLink cut from 900 to 400 GB/s: no NVLink bonus.
REDUCED_NVLINK_MODELS = frozenset({"H800-80GB"})
CONSUMER_MODELS = frozenset({"RTX4090-24GB", "RTX4090-48GB", "RTX4090D-24GB"})
MAX_CARDS = 64
# A spot instance can be reclaimed: checkpointing and restarting costs about 10 % more time.
SPOT_TIME_OVERHEAD = 1.10
# Billing terms: a daily rental is paid per day used, a weekly/monthly/yearly one per started
# term of 7/30/365 days (the monthly price per GPU-hour uses 730 h; the rental term is 30 days).
TERM_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}

KINDS = ("whole card", "slice", "multi-GPU", "spot")


def card_throughput(offer: Offer, training: bool) -> float | None:
    """One whole card of the offer in A100-80GB equivalents (None: a card without a figure)."""
    figures = THROUGHPUT.get(offer.gpu_model)
    if figures is None:
        return None
    value = figures[0] if training else figures[1]
    family = offer.gpu_model.split("-")[0]
    if (offer.gpu_variant or "").upper() == "PCIE" and family in PCIE_FACTOR:
        value *= PCIE_FACTOR[family]
    return value


def interconnect(offer: Offer) -> str:
    """"NVLink", "PCIe" or "unknown", from the card and what gpu_variant says."""
    variant = (offer.gpu_variant or "").upper()
    if offer.gpu_model in CONSUMER_MODELS or variant == "PCIE":
        return "PCIe"
    if variant in ("SXM", "NVL") and offer.gpu_model not in REDUCED_NVLINK_MODELS:
        return "NVLink"
    if offer.gpu_model in REDUCED_NVLINK_MODELS and variant == "SXM":
        return "NVLink (cut to 400 GB/s)"
    return "unknown"


def model_parallel_efficiency(cards: int, link: str) -> float:
    """Per-card efficiency of model parallelism over `cards` cards (the table's entry for the
    next size up when `cards` is not in it)."""
    size = next((n for n in sorted(MODEL_PARALLEL_EFFICIENCY) if n >= cards), MAX_CARDS)
    base = MODEL_PARALLEL_EFFICIENCY[size]
    if size <= 8:
        if link == "NVLink":
            base += NVLINK_BONUS
        elif link == "PCIe":
            base -= PCIE_PENALTY
    return base


def data_parallel_cards(cards: int) -> float:
    """Card-equivalents of work `cards` cards deliver when each holds the whole model."""
    return 1 + DATA_PARALLEL_ADDED_CARD * (cards - 1)


# ---------------------------------------------------------------------------------------------
# Billing
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Bill:
    units: float          # hours, days, weeks, months or years paid
    cost_cny: float       # for one rental of the offer
    text: str             # "56 h × 15.00 CNY"


def bill(offer: Offer, hours: float, days: int) -> Bill | None:
    """One rental of `offer` used `hours` hours spread over `days` days. Hourly: the hours used;
    daily: each day used; weekly/monthly/yearly: each started 7/30/365-day term. None: a billing
    period the advisor does not know."""
    price = offer.instance_price_cny
    period = offer.billing_period
    if period == "hour":
        units = hours
        return Bill(units, units * price, f"{units:,.4g} h × {price:,.2f} CNY/h")
    if period in TERM_DAYS:
        units = math.ceil(days / TERM_DAYS[period] - 1e-9)
        return Bill(units, units * price, f"{units} {period}{'s' if units != 1 else ''} × "
                                          f"{price:,.2f} CNY/{period}")
    return None


# ---------------------------------------------------------------------------------------------
# 3. Configurations, cost, ranking
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Option:
    """One configuration of one offer, costed for the workload."""

    kind: str                  # "whole card" | "slice" | "multi-GPU" | "spot"
    offer: Offer
    rentals: int               # how many of the offer are rented (n single cards, k servers)
    cards: int                 # cards in the configuration (1 for a slice)
    parallelism: str           # "single" | "data-parallel" | "model-parallel"
    need_gb_per_card: float
    vram_gb_per_card: float
    throughput: float          # A100-80GB equivalents, all efficiencies applied
    wall_hours: float          # hours the configuration runs (and, if hourly, is paid)
    days_used: int
    work_gpu_hours: float      # A100-80GB GPU-hours of work done in wall_hours
    billing: Bill
    cost_cny: float
    cost_usd: float | None
    why: tuple[str, ...]
    alternatives: tuple[str, ...] = ()   # the same rental under its other billing periods

    @property
    def config(self) -> str:
        variant = f" {self.offer.gpu_variant}" if self.offer.gpu_variant else ""
        model = self.offer.gpu_model + variant
        if self.offer.is_slice:
            return f"{_share(self.offer.gpu_fraction)} {model} ({self.vram_gb_per_card:g} GB)"
        return f"{self.cards} × {model}" if self.cards > 1 else f"1 × {model}"

    @property
    def cny_per_work_hour(self) -> float:
        """What one A100-80GB-hour of work costs on this configuration."""
        return self.cost_cny / self.work_gpu_hours if self.work_gpu_hours else math.inf


@dataclass
class Advice:
    workload: Workload
    estimate: Estimate
    options: list[Option]                        # ranked, cheapest first
    best_per_kind: dict[str, Option]
    excluded: Counter = field(default_factory=Counter)   # reason -> offers
    region_note: str | None = None


def _share(fraction: float) -> str:
    for denominator in (2, 3, 4, 5, 7, 8, 10, 16, 20):
        numerator = round(fraction * denominator)
        if abs(numerator / denominator - fraction) < 1e-6:
            return f"{numerator}/{denominator}"
    return f"{fraction:g}"


def _powers_of_two(start: int, stop: int) -> list[int]:
    out, n = [], 1
    while n <= stop:
        if n >= start:
            out.append(n)
        n *= 2
    return out


def configurations(offer: Offer, workload: Workload, estimate: Estimate,
                   excluded: Counter) -> list[Option]:
    """Every way `offer` can run the workload: a slice or a card that fits; n × the offer (model
    parallel when one card is too small; data parallel when the work is given, to finish sooner);
    a multi-card server as a whole. An offer with no way is counted in `excluded` by reason."""
    options, reasons = _configurations(offer, workload, estimate)
    if not options:
        excluded[reasons[0] if reasons else "no configuration"] += 1
    return options


def _configurations(offer: Offer, workload: Workload,
                    estimate: Estimate) -> tuple[list[Option], list[str]]:
    if offer.available is False:
        return [], ["sold out"]
    if offer.offer_kind == "spot" and not workload.interruptible:
        return [], ["spot, and the workload cannot be interrupted"]
    per_card = card_throughput(offer, workload.training)
    if per_card is None:
        return [], [f"no throughput figure for {offer.gpu_model}"]
    if offer.billing_period not in ("hour", *TERM_DAYS):
        return [], [f"billing period {offer.billing_period}"]
    vram = offer.card_vram_gb
    need = estimate.total_gb
    fits_one = vram > 0 and need <= vram
    size = offer.gpu_count
    link = interconnect(offer)
    shapes: list[tuple[int, str]] = []   # (cards, parallelism)
    if offer.is_slice:
        if not fits_one:
            return [], ["does not fit the slice"]
        shapes.append((1, "slice"))
    elif fits_one:
        if size == 1:
            shapes.append((1, "single"))
        if workload.gpu_hours:   # more cards only help when there is a given amount of work
            shapes += [(size * k, "data-parallel") for k in _powers_of_two(1, 8)
                       if 1 < size * k <= max(8, size)]
        elif size > 1:
            return [], ["more cards than the workload needs (give --gpu-hours to weigh speed)"]
    else:
        minimum = max(2, math.ceil(need / vram - 1e-9)) if vram else MAX_CARDS + 1
        # tensor parallelism splits evenly: powers of two of single cards, or of whole servers
        counts = [size * k for k in _powers_of_two(1, MAX_CARDS)
                  if minimum <= size * k <= MAX_CARDS]
        if not counts:
            return [], [f"needs more than {MAX_CARDS} cards"]
        if not workload.gpu_hours:   # no work given: the fewest cards that hold the model
            counts = counts[:1]
        shapes += [(n, "model-parallel") for n in counts]
    options: list[Option] = []
    reasons: list[str] = []
    for cards, parallelism in shapes:
        if parallelism == "slice":
            throughput = per_card * offer.gpu_fraction * SLICE_EFFICIENCY
            notes = [f"slice {_share(offer.gpu_fraction)} × {SLICE_EFFICIENCY} shared-bandwidth "
                     "penalty"]
            parallelism = "single"
        elif parallelism == "single":
            throughput, notes = per_card, []
        elif parallelism == "data-parallel":
            equivalents = data_parallel_cards(cards)
            throughput = per_card * equivalents
            notes = [f"data parallel on {cards} cards: 1 + {cards - 1} × "
                     f"{DATA_PARALLEL_ADDED_CARD} = {equivalents:g} cards of work"]
        else:
            efficiency = model_parallel_efficiency(cards, link)
            throughput = per_card * cards * efficiency
            where = "across servers" if cards > 8 else f"{link} interconnect"
            notes = [f"model parallel on {cards} cards at {efficiency:.0%} each ({where})"]
        if per_card != 1:
            variant = f" {offer.gpu_variant}" if offer.gpu_variant else ""
            use = "training" if workload.training else "inference"
            notes.insert(0, f"{offer.gpu_model}{variant} = {per_card:g} × A100-80GB ({use})")
        need_per_card = need / cards if parallelism == "model-parallel" else need
        costed = _costed(offer, workload, cards // size if not offer.is_slice else 1, cards,
                         parallelism, need_per_card, throughput, notes)
        if isinstance(costed, str):
            reasons.append(costed)
        else:
            options.append(costed)
    return options, reasons


def _costed(offer: Offer, workload: Workload, rentals: int, cards: int, parallelism: str,
            need_per_card: float, throughput: float, notes: list[str]) -> Option | str:
    """The option costed for the usage pattern, or why it cannot serve it."""
    notes = list(notes)
    spot = offer.offer_kind == "spot"
    effective = throughput / SPOT_TIME_OVERHEAD if spot else throughput
    if spot:
        notes.append(f"spot: +{SPOT_TIME_OVERHEAD - 1:.0%} time for checkpoints and restarts")
    if workload.gpu_hours:
        hours = workload.gpu_hours / effective
        days = math.ceil(hours / workload.hours_per_day - 1e-9)
        if days > workload.days:
            return f"does not finish in {workload.days} days at {workload.hours_per_day:g} h/day"
    else:
        hours, days = workload.hours_per_day * workload.days, workload.days
    one = bill(offer, hours, days)
    if one is None:
        return f"billing period {offer.billing_period}"
    cost = one.cost_cny * rentals
    rate = offer.usd_per_cny
    kind = ("spot" if spot else "slice" if offer.is_slice
            else "multi-GPU" if cards > 1 else "whole card")
    vram = offer.card_vram_gb
    scope = " per card" if parallelism == "model-parallel" else ""
    why = [f"fits: {need_per_card:,.1f} GB of {vram:g} GB{scope}",
           f"billing: {offer.billing_period} ({one.text}"
           + (f" × {rentals} rentals" if rentals > 1 else "") + f" = {cost:,.0f} CNY)",
           *notes,
           f"throughput {effective:.3g} × A100-80GB → {hours:,.1f} h over {days} day"
           f"{'s' if days != 1 else ''}, {hours * effective:,.1f} A100-80GB-hours of work"]
    if rentals > 1 and offer.gpu_count == 1:
        why.append(f"{rentals} × the single-card offer (assumes {offer.vendor} has {rentals} "
                   "cards free in the region)")
    return Option(kind=kind, offer=offer, rentals=rentals, cards=cards, parallelism=parallelism,
                  need_gb_per_card=need_per_card, vram_gb_per_card=vram, throughput=effective,
                  wall_hours=hours, days_used=days, work_gpu_hours=hours * effective,
                  billing=one, cost_cny=cost, cost_usd=cost * rate if rate else None,
                  why=tuple(why))


def _rank_key(option: Option) -> tuple:
    seen = option.offer.last_seen_at
    return (round(option.cost_cny, 6), option.wall_hours,
            -(seen.timestamp() if isinstance(seen, datetime) else 0), option.offer.source,
            option.offer.sku or "", option.offer.region_code)


def advise(workload: Workload, offers: Iterable[Offer]) -> Advice:
    """Rank every feasible configuration of `offers` for `workload`, cheapest first; one option
    per rental and kind (its cheapest billing period and card count), and the best of each kind."""
    estimate = estimate_memory(workload)
    offers = list(offers)
    excluded: Counter = Counter()
    region_note = None
    if workload.region:
        matches, region_note = region_predicate(workload.region, offers)
        inside = [o for o in offers if matches(o)]
        excluded[f"outside {region_note}"] += len(offers) - len(inside)
        offers = inside
    best: dict[tuple, Option] = {}
    variants: dict[tuple, list[Option]] = {}
    for offer in offers:
        for option in configurations(offer, workload, estimate, excluded):
            key = (offer.product_key, option.kind)
            variants.setdefault(key, []).append(option)
            if key not in best or _rank_key(option) < _rank_key(best[key]):
                best[key] = option
    ranked = []
    for key, option in best.items():
        cheapest: dict[str, float] = {}   # the rental's other billing periods, at their best
        for other in variants[key]:
            period = other.offer.billing_period
            if period != option.offer.billing_period:
                cheapest[period] = min(cheapest.get(period, math.inf), other.cost_cny)
        others = tuple(f"{period}: {cost:,.0f} CNY" for period, cost in sorted(cheapest.items()))
        if others:
            option = replace(option, alternatives=others, why=(
                *option.why[:2], f"cheapest billing of this rental (also {', '.join(others)})",
                *option.why[2:]))
        ranked.append(option)
    ranked.sort(key=_rank_key)
    per_kind: dict[str, Option] = {}
    for option in ranked:
        per_kind.setdefault(option.kind, option)
    return Advice(workload, estimate, ranked, {k: per_kind[k] for k in KINDS if k in per_kind},
                  excluded, region_note)


# ---------------------------------------------------------------------------------------------
# Rows for the table advisor.workload_advice and for --format json
# ---------------------------------------------------------------------------------------------

# The columns of advisor.workload_advice (and of --format json's options), with their types.
ADVICE_COLUMNS = {
    "workload": "varchar",              # the profile's name (or its description)
    "workload_spec": "varchar",         # "13B lora in bf16, 4 h/day for 14 days"
    "params_b": "double", "task": "varchar", "precision": "varchar",
    "hours_per_day": "double", "days": "integer", "gpu_hours": "double",
    "interruptible": "boolean", "region_filter": "varchar",
    "estimate_gb": "double", "assumptions": "varchar",
    "rank": "integer",                  # 1 = cheapest
    "kind": "varchar",                  # whole card | slice | multi-GPU | spot
    "best_of_kind": "boolean",
    "configuration": "varchar",         # "2 × A100-80GB SXM", "1/2 A100-80GB (40 GB)"
    "gpu_model": "varchar", "gpu_variant": "varchar", "cards": "integer",
    "gpu_fraction": "double", "parallelism": "varchar", "offer_kind": "varchar",
    "billing_period": "varchar",        # the offer's period, the cheapest of the rental's
    "billing_units": "double",          # hours, days or terms paid per rental
    "rentals": "integer",               # how many of the offer are rented
    "total_cost_cny": "decimal(18,2)", "total_cost_usd": "decimal(18,2)",
    "wall_hours": "double", "days_used": "integer",
    "throughput_a100": "double",        # A100-80GB equivalents, every efficiency applied
    "work_gpu_hours": "double",         # A100-80GB GPU-hours of work done
    "cny_per_work_gpu_hour": "double",
    "need_gb_per_card": "double", "vram_gb_per_card": "double",
    "vendor": "varchar", "source": "varchar", "sku": "varchar", "region_code": "varchar",
    "region_group": "varchar", "country": "varchar", "province_or_state": "varchar",
    "city": "varchar", "price_amount": "decimal(18,6)", "currency": "varchar",
    "last_seen_at": "timestamptz", "url": "varchar", "offer_id": "varchar",
    "why": "varchar",
}


def option_record(advice: Advice, option: Option, rank: int) -> dict:
    """One ranked option as a flat record (the columns of advisor.workload_advice)."""
    w, o = advice.workload, option.offer
    return {
        "workload": w.name or w.describe(),
        "workload_spec": w.describe(),
        "params_b": w.params / 1e9, "task": w.task, "precision": w.precision,
        "hours_per_day": w.hours_per_day, "days": w.days, "gpu_hours": w.gpu_hours,
        "interruptible": w.interruptible, "region_filter": w.region,
        "estimate_gb": round(advice.estimate.total_gb, 2),
        "assumptions": "; ".join(advice.estimate.assumptions),
        "rank": rank,
        "kind": option.kind,
        "best_of_kind": advice.best_per_kind.get(option.kind) is option,
        "configuration": option.config,
        "gpu_model": o.gpu_model, "gpu_variant": o.gpu_variant, "cards": option.cards,
        "gpu_fraction": o.gpu_fraction, "parallelism": option.parallelism,
        "offer_kind": o.offer_kind, "billing_period": o.billing_period,
        "billing_units": round(option.billing.units, 4), "rentals": option.rentals,
        "total_cost_cny": round(option.cost_cny, 2),
        "total_cost_usd": None if option.cost_usd is None else round(option.cost_usd, 2),
        "wall_hours": round(option.wall_hours, 2), "days_used": option.days_used,
        "throughput_a100": round(option.throughput, 4),
        "work_gpu_hours": round(option.work_gpu_hours, 2),
        "cny_per_work_gpu_hour": round(option.cny_per_work_hour, 2),
        "need_gb_per_card": round(option.need_gb_per_card, 2),
        "vram_gb_per_card": option.vram_gb_per_card,
        "vendor": o.vendor, "source": o.source, "sku": o.sku, "region_code": o.region_code,
        "region_group": o.region_group, "country": o.country,
        "province_or_state": o.province_or_state, "city": o.city,
        "price_amount": o.price_amount, "currency": o.currency,
        "last_seen_at": o.last_seen_at, "url": o.url, "offer_id": o.offer_id,
        "why": "; ".join(option.why),
    }


def advice_records(advice: Advice, limit: int | None = None) -> list[dict]:
    """The top `limit` options (all when None), then the best of each kind not among them."""
    chosen = advice.options if limit is None else advice.options[:limit]
    shown = {id(o) for o in chosen}
    extra = [o for o in advice.best_per_kind.values() if id(o) not in shown]
    rank = {id(o): i for i, o in enumerate(advice.options, start=1)}
    return [option_record(advice, o, rank[id(o)]) for o in (*chosen, *extra)]


# ---------------------------------------------------------------------------------------------
# Saved workload profiles (workloads.yaml)
# ---------------------------------------------------------------------------------------------

def parse_profiles(text: str, origin: str = "workloads.yaml") -> tuple[list[Workload], list[str]]:
    """The saved profiles of a workloads.yaml text: (valid workloads, one error per bad profile).

    The file is `workloads:` followed by a list of mappings with the fields of `Workload`
    (`name`, `params`, `task`, `hours_per_day`, `days` required by sense; `name` unique). A file
    that is not YAML, or has no such list, raises AdvisorError naming the file."""
    import yaml

    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise AdvisorError(f"{origin}: not valid YAML: {exc}") from None
    entries = document.get("workloads") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise AdvisorError(f"{origin}: expected `workloads:` followed by a list of profiles")
    workloads: list[Workload] = []
    errors: list[str] = []
    names: set[str] = set()
    for number, entry in enumerate(entries, start=1):
        label = entry.get("name") if isinstance(entry, dict) and entry.get("name") else f"#{number}"
        try:
            if not isinstance(entry, dict):
                raise AdvisorError("a profile is a mapping of fields")
            if not entry.get("name"):
                raise AdvisorError("a saved profile needs a `name`")
            if str(entry["name"]) in names:
                raise AdvisorError("another profile has the same name")
            workload = Workload.from_mapping(entry)
            estimate_memory(workload)   # a task/precision pair that cannot be sized fails here
        except AdvisorError as exc:
            errors.append(f"{origin}: profile {label}: {exc}")
            continue
        names.add(str(entry["name"]))
        workloads.append(workload)
    return workloads, errors
