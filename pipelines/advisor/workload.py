"""The workload a user describes (model size, task, precision, usage pattern, hints), read from
the spellings people type (`13B`, `LoRA`, `fp16`, `全量微调`) and checked before it is sized."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

TASKS = ("full-finetune", "lora", "qlora", "inference", "pretrain")
PRECISIONS = ("fp32", "bf16", "int8", "int4")
TRAINING_TASKS = frozenset({"full-finetune", "lora", "qlora", "pretrain"})

# Other spellings users type (Chinese included), folded to the canonical value.
TASK_ALIASES = {
    "full-finetune": ("full", "finetune", "fine-tune", "full-fine-tune", "sft",
                      "全量微调", "全参微调"),
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

# The inputs the guides say to measure, with their types (Workload's fields of the same names).
MEASURED = {"deadline_days": float, "peak_memory_gb": float, "runs": int, "qps": float,
            "p99_ms": float, "utilisation": float, "project_months": float}


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
    # what the guides say to measure (None: not given, and the answer says so)
    deadline_days: float | None = None     # the work must finish within this many days
    peak_memory_gb: float | None = None    # a measured peak: overrides the estimate
    runs: int = 1                          # concurrent experiments (a parameter search)
    qps: float | None = None               # peak queries per second (inference)
    p99_ms: float | None = None            # the p99 latency bound at peak (inference)
    utilisation: float | None = None       # share of the project's hours the cards are busy
    project_months: float | None = None    # how long the project lasts

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
        for hint, value in (("batch size", self.batch_size), ("sequence length", self.seq_len),
                            ("runs", self.runs)):
            if value is not None and value < 1:
                raise AdvisorError(f"{hint} must be at least 1, not {value}")
        for what, value in (("deadline", self.deadline_days), ("peak memory", self.peak_memory_gb),
                            ("QPS", self.qps), ("p99", self.p99_ms),
                            ("project length", self.project_months)):
            if value is not None and value <= 0:
                raise AdvisorError(f"{what} must be positive, not {value}")
        if self.utilisation is not None and not 0 < self.utilisation <= 1:
            raise AdvisorError(f"utilisation is a share in (0, 1], not {self.utilisation}")

    @property
    def finish_within_days(self) -> float | None:
        """The days the work must finish in: --deadline, else --days when the work is given
        (--gpu-hours), else none (a slower option takes longer and costs what it costs)."""
        return self.deadline_days or (self.days if self.gpu_hours else None)

    @property
    def work_hours(self) -> float:
        """The work to finish, in hours of one reference card (A100-80GB): --gpu-hours, else the
        usage pattern on the reference card; times the concurrent runs."""
        one = self.gpu_hours or self.hours_per_day * self.days
        return one * self.runs

    @property
    def training(self) -> bool:
        return self.task in TRAINING_TASKS

    @classmethod
    def from_mapping(cls, spec: Mapping) -> Workload:
        """A saved profile (workloads.yaml) or CLI values: params/task/precision as users write
        them (`13B`, `LoRA`, `fp16`), the usage pattern, and the optional hints."""
        known = {"name", "params", "task", "precision", "hours_per_day", "days", "gpu_hours",
                 "interruptible", "region", "batch_size", "seq_len", *MEASURED}
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
                   name=str(spec["name"]) if spec.get("name") else None,
                   **{key: number(key, kind) for key, kind in MEASURED.items()
                      if spec.get(key) is not None})

    def describe(self) -> str:
        size = f"{self.params / 1e9:g}B" if self.params >= 1e9 else f"{self.params / 1e6:g}M"
        work = f", {self.gpu_hours:g} A100-80GB GPU-hours of work" if self.gpu_hours else ""
        work += f", {self.runs} concurrent runs" if self.runs > 1 else ""
        work += f", deadline {self.deadline_days:g} days" if self.deadline_days else ""
        return (f"{size} {self.task} in {self.precision}, {self.hours_per_day:g} h/day for "
                f"{self.days} day{'s' if self.days != 1 else ''}{work}"
                f"{', interruptible' if self.interruptible else ''}")
