"""The alert rules: the TOML rules file read into frozen dataclasses, every key checked.

`load_rules()` reads GPUPRICES_ALERTS_CONFIG, else `alerts.toml` beside this module (documented
inline); a wrong value or an unknown key raises AlertConfigError naming the file and the key.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from pipelines.alerts.channels import TAG_PATTERN
from pipelines.alerts.registry import registered_rules
from pipelines.lookup import match_place
from pipelines.normalize import OFFER_KINDS
from spiders.parsing.gpu_models import CANONICAL_MODELS
from spiders.parsing.prices import HOURS_PER_PERIOD
from spiders.parsing.regions import RegionParseError

CONFIG_ENV = "GPUPRICES_ALERTS_CONFIG"
DEFAULT_CONFIG = Path(__file__).resolve().parent / "alerts.toml"
# Every rule that writes to alerts.outbox: the registry's (pipelines/alerts/registry/), then
# run_failure, which comes from notices.py, not from the file. (The pipeline writes `held_crawl`
# alerts too, not a rule of the file either: a crawl held back by a blocking rule past its hours,
# pipelines/defs/crawl_holds.py.)
RULES = (*(r.name for r in registered_rules()), "run_failure")


class AlertConfigError(ValueError):
    """The rules file is wrong; the message names the file and the key."""


@dataclass(frozen=True)
class OfferFilter:
    """Which offers a rule looks at; an empty tuple means every value."""
    gpu_models: tuple[str, ...] = ()
    offer_kinds: tuple[str, ...] = ()
    billing_periods: tuple[str, ...] = ()


@dataclass(frozen=True)
class DropRule:
    enabled: bool = True
    min_drop_pct: float | None = 10.0          # vs the offer's previous observation
    min_below_median_pct: float | None = None  # vs the trailing median of daily closes
    median_days: int = 7
    median_min_days: int = 3                   # fewer trailing days: no median test
    require: str = "any"                       # "any" | "all" of the configured tests
    offers: OfferFilter = OfferFilter()
    channels: tuple[str, ...] = ()             # Apprise tags; empty: the default channels


@dataclass(frozen=True)
class NewLowRule:
    enabled: bool = True
    # USD-priced offers move in CNY with the exchange rate every day; a new low must beat the
    # earlier low by this much so that currency noise does not alert.
    min_improvement_pct: float = 1.0
    offers: OfferFilter = OfferFilter()
    channels: tuple[str, ...] = ()


@dataclass(frozen=True)
class MonthEndDipRule:
    enabled: bool = True
    channels: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunFailureRule:
    channels: tuple[str, ...] = ()   # where run-failure notices go


@dataclass(frozen=True)
class WorkloadCheaperRule:
    enabled: bool = True
    # The latest best option of a saved workload (advisor.workload_advice_history) at least this
    # much cheaper than its previous best.
    min_drop_pct: float = 10.0
    channels: tuple[str, ...] = ()


@dataclass(frozen=True)
class WatchRule:
    gpu_model: str
    region: str                       # as written in the file: "北京", "Beijing", "us-east-1"
    region_column: str                # the observations column it matches: province_or_state ...
    region_value: str                 # ... and the canonical value: "Beijing"
    max_price_cny_per_gpu_hour: float
    offer_kind: str | None = None
    billing_period: str | None = None
    name: str | None = None
    channels: tuple[str, ...] = ()

    @property
    def watch_id(self) -> str:
        """Stable id of what is watched: the same entry keeps its id when the file is edited
        around it; changing the ceiling makes a new watch (and may alert again)."""
        basis = "|".join(map(str, (self.gpu_model, self.region_column, self.region_value,
                                   self.offer_kind, self.billing_period,
                                   self.max_price_cny_per_gpu_hour)))
        return hashlib.sha256(basis.encode()).hexdigest()[:10]

    @property
    def label(self) -> str:
        return self.name or (f"{self.gpu_model} in {self.region} at or below "
                             f"{self.max_price_cny_per_gpu_hour:g} CNY/GPU-h")


@dataclass(frozen=True)
class RegisteredRuleSettings:
    """A registry rule's table of the rules file: its settings bound as $name in its query."""
    enabled: bool = True
    settings: tuple[tuple[str, float], ...] = ()
    channels: tuple[str, ...] = ()


@dataclass(frozen=True)
class DeliverySettings:
    attempts: int = 3
    backoff_seconds: float = 2.0      # waits backoff, 2 x backoff, ... between attempts
    # Where a rule without `channels` goes; empty: the URLs without a tag.
    default_channels: tuple[str, ...] = ()


@dataclass(frozen=True)
class AlertRules:
    drop: DropRule = DropRule()
    new_low: NewLowRule = NewLowRule()
    month_end_dip: MonthEndDipRule = MonthEndDipRule()
    watch: tuple[WatchRule, ...] = ()
    # Without a watermark (the first detection on a database), only observations this close to
    # the newest one are looked at: a year of history does not turn into a year of alerts.
    initial_lookback_hours: float = 24.0
    delivery: DeliverySettings = DeliverySettings()
    source: str = "<defaults>"
    workload_cheaper: WorkloadCheaperRule = WorkloadCheaperRule()
    run_failure: RunFailureRule = RunFailureRule()
    templates_dir: Path | None = None   # overrides of pipelines/alerts/templates/*.j2
    registered: tuple[tuple[str, RegisteredRuleSettings], ...] = ()   # by rule name


class _RulesTable:
    """Reads one table of the TOML file, naming `file: key` in every error."""

    def __init__(self, data: Any, where: str, path: str):
        self.where, self.path = where, path
        if not isinstance(data, dict):
            self.fail(where, f"must be a table, got {type(data).__name__}")
        self.data = dict(data)

    def fail(self, key: str, problem: str):
        raise AlertConfigError(f"{self.path}: {key}: {problem}")

    def key(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where else name

    def pop(self, name: str, kind: type, default: Any = None, required: bool = False):
        if name not in self.data:
            if required:
                self.fail(self.key(name), "missing (required)")
            return default
        value = self.data.pop(name)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)     # TOML's 10 for 10.0
        # TOML booleans are ints to Python: a number is not accepted as true/false, nor back.
        ok = isinstance(value, bool) if kind is bool else (
            isinstance(value, kind) and not isinstance(value, bool))
        if not ok:
            what = {bool: "true or false", str: "a string", list: "an array", dict: "a table",
                    int: "a whole number", float: "a number"}[kind]
            self.fail(self.key(name), f"must be {what}, got {value!r}")
        return value

    def number(self, name: str, default: float | None, low: float, high: float | None = None,
               required: bool = False, low_inclusive: bool = False,
               integer: bool = False) -> float | None:
        """A number with low < value (<= with low_inclusive) and value < high."""
        value = self.pop(name, int if integer else float, default, required)
        if value is None:
            return None
        if (not math.isfinite(value) or value < low or (value == low and not low_inclusive)
                or (high is not None and value >= high)):
            bound = f"{'>=' if low_inclusive else '>'} {low:g}"
            self.fail(self.key(name), f"must be a {'whole ' if integer else ''}number {bound}"
                      f"{f' and < {high:g}' if high is not None else ''}, got {value:g}")
        return value

    def choice(self, name: str, allowed: tuple[str, ...], default: str | None = None) -> str | None:
        value = self.pop(name, str, default)
        if value is not None and value not in allowed:
            self.fail(self.key(name), f"{value!r} is not one of {', '.join(allowed)}")
        return value

    def choices(self, name: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
        values = self.pop(name, list, [])
        for i, value in enumerate(values):
            if not isinstance(value, str) or value not in allowed:
                self.fail(f"{self.key(name)}[{i}]", f"{value!r} is not one of {', '.join(allowed)}")
        return tuple(values)

    def channels(self, name: str = "channels") -> tuple[str, ...]:
        """Apprise tags: ["ops", "buyers"]."""
        values = self.pop(name, list, [])
        for i, value in enumerate(values):
            if not isinstance(value, str) or not re.fullmatch(TAG_PATTERN, value):
                self.fail(f"{self.key(name)}[{i}]", f"{value!r} is not a tag (letters, digits, "
                                                     "_ and -)")
        return tuple(dict.fromkeys(v.lower() for v in values))

    def offer_filter(self) -> OfferFilter:
        return OfferFilter(self.choices("gpu_models", CANONICAL_MODELS),
                           self.choices("offer_kinds", OFFER_KINDS),
                           self.choices("billing_periods", tuple(HOURS_PER_PERIOD)))

    def done(self) -> None:
        for name in self.data:
            self.fail(self.key(name), "unknown key (a typo?)")


def watch_region_filter(text: str) -> tuple[str, str]:
    """A watch's region text as the observations column it matches and the canonical value,
    read by pipelines.lookup as the CLI and the advisor read it.

    "北京" / "Beijing" / "beijing" -> ("province_or_state", "Beijing"); a city inside a province
    ("Nanjing", "乌兰察布") -> ("city", ...); a country or a vendor's region code -> its country
    or province. Raises RegionParseError for text that names no known place."""
    place = match_place(text)
    if place is None:
        raise RegionParseError(f"unknown region {text!r}")
    return place.column, place.values[0]


def parse_rules(data: Mapping[str, Any], source: str = "<dict>") -> AlertRules:
    """Validated rules from the parsed TOML; AlertConfigError names the first wrong key."""
    top = _RulesTable(data, "", source)

    has_drop = "drop" in top.data
    drop_s = _RulesTable(top.pop("drop", dict, {}), "drop", source)
    drop = DropRule(
        enabled=drop_s.pop("enabled", bool, True),
        min_drop_pct=drop_s.number("min_drop_pct", None, 0, 100),
        min_below_median_pct=drop_s.number("min_below_median_pct", None, 0, 100),
        median_days=drop_s.number("median_days", 7, 1, 366, low_inclusive=True, integer=True),
        median_min_days=drop_s.number("median_min_days", 3, 1, 366, low_inclusive=True,
                                      integer=True),
        require=drop_s.choice("require", ("any", "all"), "any"),
        offers=drop_s.offer_filter(), channels=drop_s.channels())
    if not has_drop:
        drop = DropRule()   # no [drop] table at all: the default rule (a 10 % drop)
    drop_s.done()
    if drop.enabled and drop.min_drop_pct is None and drop.min_below_median_pct is None:
        drop_s.fail("drop", "set min_drop_pct and/or min_below_median_pct, or enabled = false")

    low_s = _RulesTable(top.pop("new_low", dict, {}), "new_low", source)
    new_low = NewLowRule(enabled=low_s.pop("enabled", bool, True),
                         min_improvement_pct=low_s.number("min_improvement_pct", 1.0, 0, 100,
                                                          low_inclusive=True),
                         offers=low_s.offer_filter(), channels=low_s.channels())
    low_s.done()

    dip_s = _RulesTable(top.pop("month_end_dip", dict, {}), "month_end_dip", source)
    month_end_dip = MonthEndDipRule(enabled=dip_s.pop("enabled", bool, True),
                                    channels=dip_s.channels())
    dip_s.done()

    cheaper_s = _RulesTable(top.pop("workload_cheaper", dict, {}), "workload_cheaper", source)
    workload_cheaper = WorkloadCheaperRule(
        enabled=cheaper_s.pop("enabled", bool, True),
        min_drop_pct=cheaper_s.number("min_drop_pct", 10.0, 0, 100),
        channels=cheaper_s.channels())
    cheaper_s.done()

    failure_s = _RulesTable(top.pop("run_failure", dict, {}), "run_failure", source)
    run_failure = RunFailureRule(channels=failure_s.channels())
    failure_s.done()

    templates_s = _RulesTable(top.pop("templates", dict, {}), "templates", source)
    templates_dir = templates_s.pop("dir", str)
    templates_s.done()

    detection_s = _RulesTable(top.pop("detection", dict, {}), "detection", source)
    lookback = detection_s.number("initial_lookback_hours", 24.0, 0)
    detection_s.done()

    delivery_s = _RulesTable(top.pop("delivery", dict, {}), "delivery", source)
    delivery = DeliverySettings(
        attempts=delivery_s.number("attempts", 3, 1, 11, low_inclusive=True, integer=True),
        backoff_seconds=delivery_s.number("backoff_seconds", 2.0, 0, 600, low_inclusive=True),
        default_channels=delivery_s.channels("default_channels"))
    delivery_s.done()

    registered = []
    typed = {f.name for f in fields(AlertRules)}   # the five older rules, read above
    for rule in (r for r in registered_rules() if r.name not in typed):
        table = _RulesTable(top.pop(rule.name, dict, {}), rule.name, source)
        registered.append((rule.name, RegisteredRuleSettings(
            enabled=table.pop("enabled", bool, True),
            settings=tuple((name, table.number(name, default, -math.inf, low_inclusive=True))
                           for name, default in rule.settings),
            channels=table.channels())))
        table.done()

    watches = []
    for i, entry in enumerate(top.pop("watch", list, [])):
        w = _RulesTable(entry, f"watch[{i}]", source)
        gpu_model = w.choice("gpu_model", CANONICAL_MODELS)
        if gpu_model is None:
            w.fail(w.key("gpu_model"), f"missing (required; one of {', '.join(CANONICAL_MODELS)})")
        region = w.pop("region", str, required=True)
        try:
            column, value = watch_region_filter(region)
        except RegionParseError:
            w.fail(w.key("region"), f"unknown region {region!r}: use a Chinese or English "
                                    "province or city name (北京 or Beijing), a country code or a "
                                    "vendor's region code")
        watches.append(WatchRule(
            gpu_model=gpu_model, region=region, region_column=column, region_value=value,
            max_price_cny_per_gpu_hour=w.number("max_price_cny_per_gpu_hour", None, 0,
                                                required=True),
            offer_kind=w.choice("offer_kind", OFFER_KINDS),
            billing_period=w.choice("billing_period", tuple(HOURS_PER_PERIOD)),
            name=w.pop("name", str), channels=w.channels()))
        w.done()
    top.done()
    return AlertRules(drop, new_low, month_end_dip, tuple(watches), lookback, delivery, source,
                      workload_cheaper, run_failure, _templates_dir(templates_dir, source),
                      tuple(registered))


def _templates_dir(text: str | None, source: str) -> Path | None:
    """[templates] dir, relative to the rules file; every template in it (and every default)
    must compile and name only known variables: a bad one fails here, not at delivery."""
    from pipelines.alerts.templating import TemplateProblem, alert_texts

    folder = None
    if text is not None:
        folder = Path(text)
        if not folder.is_absolute() and Path(source).is_file():
            folder = Path(source).resolve().parent / folder
        if not folder.is_dir():
            raise AlertConfigError(f"{source}: templates.dir: {folder}: no such folder")
    try:
        alert_texts(folder)
    except TemplateProblem as exc:
        raise AlertConfigError(f"{source}: templates.dir: {exc}") from exc
    return folder


def config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get(CONFIG_ENV) or DEFAULT_CONFIG)


def load_rules(path: Path | str | None = None, env: Mapping[str, str] | None = None) -> AlertRules:
    """The rules file (GPUPRICES_ALERTS_CONFIG, else alerts.toml beside this module),
    validated."""
    env = os.environ if env is None else env
    path = Path(path) if path is not None else config_path(env)
    if not path.is_file():
        why = f" ({CONFIG_ENV} points here)" if env.get(CONFIG_ENV) == str(path) else ""
        raise AlertConfigError(f"{path}: no such alert rules file{why}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise AlertConfigError(f"{path}: not valid TOML: {exc}") from exc
    return parse_rules(data, str(path))
