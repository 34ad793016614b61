"""Price alerts: rules from a TOML file, detection in SQL, an outbox in DuckDB, Apprise delivery.

The flow is outbox-first so that nothing is lost and nothing is sent twice:
1. `detect_alerts` runs each rule's SQL against the working database and inserts what it finds
   into `alerts.outbox` with a stable `alert_key` (`on conflict do nothing`): a re-run, or a price
   that has not changed, finds the same key and adds nothing.
2. `deliver_pending` sends every pending or failed alert through Apprise to the URLs configured in
   the environment, a few attempts with backoff, and records the outcome on the alert's row; a
   failed alert is tried again on the next run.

Notification URLs carry tokens and passwords, so they come from the environment only, are never
written to the database and never logged: a channel is shown as its scheme (and host, for
schemes whose host is a real host name) and stored as a hash.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import time
import tomllib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from ipaddress import ip_address
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import duckdb

from pipelines.display import clean_text
from spiders.layout import REPO_ROOT
from spiders.parsing.gpu_models import CANONICAL_MODELS
from spiders.parsing.prices import HOURS_PER_PERIOD
from spiders.parsing.regions import RegionParseError, province_aliases, resolve_region

CONFIG_ENV = "GPUPRICES_ALERTS_CONFIG"
NOTIFY_URLS_ENV = "GPUPRICES_NOTIFY_URLS"
MAX_TITLE_CHARS, MAX_LINE_CHARS = 200, 400   # per alert title and per line of its body
NOTIFY_CONFIG_ENV = "GPUPRICES_NOTIFY_CONFIG"
DEFAULT_CONFIG = REPO_ROOT / "pipelines" / "alerts.toml"
OFFER_KINDS = ("on_demand", "spot", "reserved")
RULES = ("drop", "new_low", "month_end_dip", "watch", "workload_cheaper", "run_failure")
# Written by the advisor asset (pipelines/defs/advisor.py); absent until it has run once.
WORKLOAD_HISTORY_TABLE = "advisor.workload_advice_history"

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------------------------

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


@dataclass(frozen=True)
class NewLowRule:
    enabled: bool = True
    # USD-priced offers move in CNY with the exchange rate every day; a new low must beat the
    # earlier low by this much so that currency noise does not alert.
    min_improvement_pct: float = 1.0
    offers: OfferFilter = OfferFilter()


@dataclass(frozen=True)
class MonthEndDipRule:
    enabled: bool = True


@dataclass(frozen=True)
class WorkloadCheaperRule:
    enabled: bool = True
    # The latest best option of a saved workload (advisor.workload_advice_history) at least this
    # much cheaper than its previous best.
    min_drop_pct: float = 10.0


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
class DeliverySettings:
    attempts: int = 3
    backoff_seconds: float = 2.0      # waits backoff, 2 x backoff, ... between attempts


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


class _Section:
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

    def offer_filter(self) -> OfferFilter:
        return OfferFilter(self.choices("gpu_models", CANONICAL_MODELS),
                           self.choices("offer_kinds", OFFER_KINDS),
                           self.choices("billing_periods", tuple(HOURS_PER_PERIOD)))

    def done(self) -> None:
        for name in self.data:
            self.fail(self.key(name), "unknown key (a typo?)")


def _watch_region(text: str) -> tuple[str, str]:
    """"北京" / "Beijing" / "beijing" -> ("province_or_state", "Beijing"); a city inside a province
    ("Nanjing", "乌兰察布") -> ("city", ...); a country or a vendor's region code -> its country
    or province. Raises RegionParseError for text that names no known place."""
    aliases = province_aliases()
    folded = {alias.casefold(): province for alias, province in aliases.items()}
    stripped = text.strip()
    if stripped in aliases or stripped.casefold() in folded:
        return "province_or_state", aliases.get(stripped) or folded[stripped.casefold()]
    region = resolve_region(stripped)
    if region.city and region.city != region.province_or_state:
        return "city", region.city
    if region.province_or_state:
        return "province_or_state", region.province_or_state
    return "country", region.country


def parse_rules(data: Mapping[str, Any], source: str = "<dict>") -> AlertRules:
    """Validated rules from the parsed TOML; AlertConfigError names the first wrong key."""
    top = _Section(data, "", source)

    has_drop = "drop" in top.data
    drop_s = _Section(top.pop("drop", dict, {}), "drop", source)
    drop = DropRule(
        enabled=drop_s.pop("enabled", bool, True),
        min_drop_pct=drop_s.number("min_drop_pct", None, 0, 100),
        min_below_median_pct=drop_s.number("min_below_median_pct", None, 0, 100),
        median_days=drop_s.number("median_days", 7, 1, 366, low_inclusive=True, integer=True),
        median_min_days=drop_s.number("median_min_days", 3, 1, 366, low_inclusive=True,
                                      integer=True),
        require=drop_s.choice("require", ("any", "all"), "any"),
        offers=drop_s.offer_filter())
    if not has_drop:
        drop = DropRule()   # no [drop] table at all: the default rule (a 10 % drop)
    drop_s.done()
    if drop.enabled and drop.min_drop_pct is None and drop.min_below_median_pct is None:
        drop_s.fail("drop", "set min_drop_pct and/or min_below_median_pct, or enabled = false")

    low_s = _Section(top.pop("new_low", dict, {}), "new_low", source)
    new_low = NewLowRule(enabled=low_s.pop("enabled", bool, True),
                         min_improvement_pct=low_s.number("min_improvement_pct", 1.0, 0, 100,
                                                          low_inclusive=True),
                         offers=low_s.offer_filter())
    low_s.done()

    dip_s = _Section(top.pop("month_end_dip", dict, {}), "month_end_dip", source)
    month_end_dip = MonthEndDipRule(enabled=dip_s.pop("enabled", bool, True))
    dip_s.done()

    cheaper_s = _Section(top.pop("workload_cheaper", dict, {}), "workload_cheaper", source)
    workload_cheaper = WorkloadCheaperRule(
        enabled=cheaper_s.pop("enabled", bool, True),
        min_drop_pct=cheaper_s.number("min_drop_pct", 10.0, 0, 100))
    cheaper_s.done()

    detection_s = _Section(top.pop("detection", dict, {}), "detection", source)
    lookback = detection_s.number("initial_lookback_hours", 24.0, 0)
    detection_s.done()

    delivery_s = _Section(top.pop("delivery", dict, {}), "delivery", source)
    delivery = DeliverySettings(
        attempts=delivery_s.number("attempts", 3, 1, 11, low_inclusive=True, integer=True),
        backoff_seconds=delivery_s.number("backoff_seconds", 2.0, 0, 600, low_inclusive=True))
    delivery_s.done()

    watches = []
    for i, entry in enumerate(top.pop("watch", list, [])):
        w = _Section(entry, f"watch[{i}]", source)
        gpu_model = w.choice("gpu_model", CANONICAL_MODELS)
        if gpu_model is None:
            w.fail(w.key("gpu_model"), f"missing (required; one of {', '.join(CANONICAL_MODELS)})")
        region = w.pop("region", str, required=True)
        try:
            column, value = _watch_region(region)
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
            name=w.pop("name", str)))
        w.done()
    top.done()
    return AlertRules(drop, new_low, month_end_dip, tuple(watches), lookback, delivery, source,
                      workload_cheaper)


def config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get(CONFIG_ENV) or DEFAULT_CONFIG)


def load_rules(path: Path | str | None = None, env: Mapping[str, str] | None = None) -> AlertRules:
    """The rules file (GPUPRICES_ALERTS_CONFIG, else pipelines/alerts.toml), validated."""
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


# --------------------------------------------------------------------------------------------
# Outbox
# --------------------------------------------------------------------------------------------

OUTBOX_SQL = """
create schema if not exists alerts;
create table if not exists alerts.outbox (
    alert_key varchar primary key,     -- rule + offer/group + the observation it is about
    rule varchar not null,             -- drop | new_low | month_end_dip | watch |
                                       -- workload_cheaper | run_failure
    title varchar not null,
    body varchar not null,             -- plain text: card, vendor, region, CNY and USD, link
    payload json not null,             -- the same facts as data
    created_at timestamptz not null,
    status varchar not null,           -- pending | sent | failed
    attempts integer not null default 0,   -- delivery attempts over all runs
    last_error varchar,                -- why the last attempt failed (no URL credentials)
    sent_at timestamptz,
    delivered_to varchar[] not null default []  -- ids (URL hashes) of channels that have it
);
create table if not exists alerts.state (
    name varchar primary key,
    value timestamptz,
    updated_at timestamptz not null
);
"""


def ensure_outbox(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(OUTBOX_SQL)


@dataclass(frozen=True)
class Alert:
    alert_key: str
    rule: str
    title: str
    body: str
    payload: dict

    def __post_init__(self) -> None:
        # Scraped text reaches people's phones: cut each line, make invisible characters visible.
        object.__setattr__(self, "title", clean_text(self.title, MAX_TITLE_CHARS))
        object.__setattr__(self, "body", "\n".join(clean_text(line, MAX_LINE_CHARS)
                                                   for line in self.body.split("\n")))


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat() if value.tzinfo else value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def insert_alerts(con: duckdb.DuckDBPyConnection, alerts: list[Alert]) -> list[str]:
    """Insert into the outbox; returns the keys that were new (an existing key is left alone)."""
    new = []
    for alert in alerts:
        inserted = con.execute(
            "insert into alerts.outbox (alert_key, rule, title, body, payload, created_at, status) "
            "values (?, ?, ?, ?, ?, now(), 'pending') on conflict (alert_key) do nothing "
            "returning alert_key",
            [alert.alert_key, alert.rule, alert.title, alert.body,
             json.dumps(alert.payload, default=_json_default, ensure_ascii=False)]).fetchall()
        new.extend(row[0] for row in inserted)
    return new


# --------------------------------------------------------------------------------------------
# Detection
# --------------------------------------------------------------------------------------------

# Offer columns every rule's query returns, from staging.stg_observations (alias o).
OFFER_COLUMNS = """
    o.offer_id, o.source, o.vendor, o.gpu_model, o.gpu_variant, o.gpu_count, o.gpu_fraction,
    o.offer_kind, o.billing_period, o.region_code, o.region_group, o.country,
    o.province_or_state, o.city, o.sku, o.price_amount, o.currency, o.price_per_gpu_hour_cny,
    o.price_per_gpu_hour_usd, o.observed_at, o.url
"""

# Which observations the incremental rules look at: those loaded since the previous detection.
# observed_at alone is not enough (a replayed or re-run crawl can land older observations after
# newer ones), so an observation is new when it is newer than the newest one seen last time, or
# when its crawl was normalized after the last detection started.
NEW_OBSERVATIONS_SQL = """
create or replace temp table alert_new_observations as
select offer_id, observed_at
from observations
where case
    when $max_observed_at is null then
        observed_at >= (select max(observed_at) from observations)
                       - to_microseconds(($lookback_hours * 3600e6)::bigint)
    else observed_at > $max_observed_at
         or crawl_id in (select crawl_id from raw.crawls where normalized_at >= $detected_at)
end
"""

FILTER_SQL = """
    (len($gpu_models::varchar[]) = 0 or list_contains($gpu_models::varchar[], o.gpu_model))
    and (len($offer_kinds::varchar[]) = 0
         or list_contains($offer_kinds::varchar[], o.offer_kind))
    and (len($billing_periods::varchar[]) = 0
         or list_contains($billing_periods::varchar[], o.billing_period))
"""

# A drop is measured in the listed currency (an exchange-rate move alone is not a drop); the CNY
# figures ride along for reading.
DROP_SQL = f"""
with changes as (
    select c.offer_id, c.observed_at, c.observed_date, c.previous_price_amount,
           c.previous_price_cny_per_gpu_hour, c.previous_observed_at,
           c.price_change_pct::double as price_change_pct,
           c.price_change_pct_cny::double as price_change_pct_cny
    from intermediate.int_price_changes as c
    semi join alert_new_observations as n
        on n.offer_id = c.offer_id and n.observed_at = c.observed_at
    where c.price_amount < c.previous_price_amount
),
trailing_days as (   -- the offer's daily closes on the days before the change
    select ch.offer_id, ch.observed_at,
           median(d.close_price_amount)::double as median_price_amount,
           median(d.close_price_cny_per_gpu_hour)::double as median_price_cny_per_gpu_hour,
           count(*) as median_days
    from changes as ch
    join intermediate.int_offer_daily as d
        on d.offer_id = ch.offer_id
       and d.observed_date >= ch.observed_date - $median_days::integer
       and d.observed_date < ch.observed_date
    group by ch.offer_id, ch.observed_at
),
scored as (
    select {OFFER_COLUMNS},
           ch.previous_price_amount, ch.previous_price_cny_per_gpu_hour, ch.previous_observed_at,
           ch.price_change_pct, ch.price_change_pct_cny,
           t.median_price_amount, t.median_price_cny_per_gpu_hour,
           coalesce(t.median_days, 0) as median_days,
           100 * (t.median_price_amount - o.price_amount::double)
               / t.median_price_amount as below_median_pct,
           $min_drop_pct is not null and -ch.price_change_pct >= $min_drop_pct as drop_hit,
           coalesce($min_below_median_pct is not null and t.median_days >= $median_min_days
                    and 100 * (t.median_price_amount - o.price_amount::double)
                        / t.median_price_amount >= $min_below_median_pct,
                    false) as median_hit
    from changes as ch
    join staging.stg_observations as o using (offer_id, observed_at)
    left join trailing_days as t using (offer_id, observed_at)
    where {FILTER_SQL}
)
select * from scored
where case when $require = 'all'
           then ($min_drop_pct is null or drop_hit)
                and ($min_below_median_pct is null or median_hit)
           else drop_hit or median_hit end
order by observed_at, offer_id
"""

NEW_LOW_SQL = f"""
with instants as (   -- the group's lowest price at each observation time
    select o.gpu_model, o.offer_kind, o.region_group, o.observed_at,
           min(o.price_per_gpu_hour_cny) as low_cny_per_gpu_hour,
           arg_min(o.offer_id, o.price_per_gpu_hour_cny) as offer_id
    from staging.stg_observations as o
    where {FILTER_SQL}
    group by o.gpu_model, o.offer_kind, o.region_group, o.observed_at
),
running as (
    select *,
           min(low_cny_per_gpu_hour) over (
               partition by gpu_model, offer_kind, region_group order by observed_at
               rows between unbounded preceding and 1 preceding) as earlier_low_cny_per_gpu_hour,
           count(*) over (
               partition by gpu_model, offer_kind, region_group order by observed_at
               rows between unbounded preceding and 1 preceding) as earlier_observations
    from instants
)
select {OFFER_COLUMNS}, r.earlier_low_cny_per_gpu_hour, r.earlier_observations,
       100 * (r.earlier_low_cny_per_gpu_hour - r.low_cny_per_gpu_hour)::double
           / r.earlier_low_cny_per_gpu_hour::double as improvement_pct
from running as r
join staging.stg_observations as o using (offer_id, observed_at)
where r.earlier_low_cny_per_gpu_hour is not null
  and r.low_cny_per_gpu_hour < r.earlier_low_cny_per_gpu_hour
  and 100 * (r.earlier_low_cny_per_gpu_hour - r.low_cny_per_gpu_hour)::double
      / r.earlier_low_cny_per_gpu_hour::double >= $min_improvement_pct
  and exists (select 1 from alert_new_observations as n
              where n.offer_id = r.offer_id and n.observed_at = r.observed_at)
  -- the offer's listed price is its lowest yet (or it is new): a low in CNY that only an
  -- exchange-rate move made is not a new low
  and not exists (select 1 from staging.stg_observations as e
                  where e.offer_id = r.offer_id and e.observed_at < r.observed_at
                    and e.price_amount <= o.price_amount)
order by r.observed_at, r.gpu_model
"""

# A signalling group alerts for its latest complete local month when that month dipped (a month
# is complete once the next month's first days are in).
MONTH_END_DIP_SQL = """
with latest as (
    select *,
           max(month) filter (where offers_compared > 0) over (
               partition by source, vendor, gpu_model, gpu_variant, region_code, offer_kind)
               as latest_month
    from marts.month_end_dip
),
offers as (   -- a link and the exchange rate, from the group's current offers
    select source, gpu_model, region_code, offer_kind, min(url) as url,
           avg(price_per_gpu_hour_usd::double / price_per_gpu_hour_cny::double) as usd_per_cny,
           any_value(country) as country, any_value(province_or_state) as province_or_state,
           any_value(city) as city
    from marts.latest_prices
    where billing_period = 'hour'
    group by source, gpu_model, region_code, offer_kind
)
select l.month, l.local_time_zone, l.source, l.vendor, l.gpu_model, l.gpu_variant,
       l.region_code, l.region_group, l.offer_kind, l.currency, l.offers_compared,
       l.baseline_price_cny_per_gpu_hour, l.month_end_price_cny_per_gpu_hour,
       l.next_start_price_cny_per_gpu_hour, l.dip_pct, l.drop_pct, l.recovery_pct,
       l.months_observed, l.months_dipped, l.offers_followed, l.offer_months,
       l.positive_offer_months, l.p_value, l.strength_pct, l.depth_ci_low_pct,
       l.depth_ci_high_pct, l.ci_coverage,
       f.url, f.usd_per_cny, f.country, f.province_or_state, f.city
from latest as l
left join offers as f using (source, gpu_model, region_code, offer_kind)
where l.month = l.latest_month and l.dipped and l.dip_signal
order by l.source, l.gpu_model, l.region_code, l.offer_kind
"""

# A current offer is one seen in its source's latest crawl (within an hour of the source's newest
# observation); `since` is when its price last went to or below the ceiling, so a price that
# rises above it and comes back is a new alert, and one that stays there is not.
WATCH_SQL = """
with current_offers as (
    select l.*
    from marts.latest_prices as l
    where l.gpu_model = $gpu_model
      and {region_column} = $region_value
      and ($offer_kind is null or l.offer_kind = $offer_kind)
      and ($billing_period is null or l.billing_period = $billing_period)
      and l.price_per_gpu_hour_cny <= $ceiling
      and coalesce(l.available, true)
      and l.last_seen_at >= (select max(s.last_seen_at) from marts.latest_prices as s
                             where s.source = l.source) - interval 1 hour
),
last_above as (
    select h.offer_id, max(h.observed_at) as last_above_at
    from observations as h
    semi join current_offers as c on c.offer_id = h.offer_id
    where h.price_per_gpu_hour_cny > $ceiling
    group by h.offer_id
),
streak as (
    select h.offer_id, min(h.observed_at) as since
    from observations as h
    semi join current_offers as c on c.offer_id = h.offer_id
    left join last_above as a on a.offer_id = h.offer_id
    where h.price_per_gpu_hour_cny <= $ceiling
      and (a.last_above_at is null or h.observed_at > a.last_above_at)
    group by h.offer_id
)
select c.offer_id, c.source, c.vendor, c.gpu_model, c.gpu_variant, c.gpu_count, c.gpu_fraction,
       c.offer_kind, c.billing_period, c.region_code, c.country, c.province_or_state, c.city,
       c.sku, c.price_amount, c.currency, c.price_per_gpu_hour_cny, c.price_per_gpu_hour_usd,
       c.last_seen_at as observed_at, c.url, s.since
from current_offers as c
join streak as s using (offer_id)
order by c.price_per_gpu_hour_cny, c.offer_id
"""


# Each saved workload's latest best option against its previous one (the advisor appends one row
# per workload and run). Only the latest row can alert, and its key names it, so a re-run of
# detection, or a cost that stays low, never alerts twice.
WORKLOAD_CHEAPER_SQL = f"""
with ranked as (
    select *, row_number() over (partition by workload order by computed_at desc) as recency
    from {WORKLOAD_HISTORY_TABLE}
)
select latest.*, previous.total_cost_cny as previous_cost_cny,
       previous.computed_at as previous_computed_at,
       previous.configuration as previous_configuration, previous.vendor as previous_vendor,
       100 * (previous.total_cost_cny - latest.total_cost_cny)::double
           / previous.total_cost_cny::double as drop_pct
from ranked as latest
join ranked as previous on previous.workload = latest.workload and previous.recency = 2
where latest.recency = 1
  and previous.total_cost_cny > 0
  and 100 * (previous.total_cost_cny - latest.total_cost_cny)::double
      / previous.total_cost_cny::double >= $min_drop_pct
order by latest.workload
"""


def _table_exists(con: duckdb.DuckDBPyConnection, qualified: str) -> bool:
    schema, name = qualified.split(".")
    found = con.execute("select count(*) from information_schema.tables "
                        "where table_schema = ? and table_name = ?", [schema, name]).fetchone()[0]
    return found > 0


def _records(cursor: duckdb.DuckDBPyConnection) -> list[dict]:
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _f(value: Any) -> float | None:
    return None if value is None else float(value)


def _ts(value: datetime | None) -> str:
    """A timestamp as people read it in an alert: 2026-11-30 09:00 UTC."""
    if value is None:
        return "?"
    if value.tzinfo is not None:
        value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%d %H:%M UTC")


def _key_ts(value: datetime) -> str:
    """UTC ISO 8601: DuckDB hands out timestamptz in the session's time zone, and a key must
    not change with the machine's."""
    return value.astimezone(UTC).isoformat()


def _region_text(row: Mapping[str, Any]) -> str:
    """"北京 (Beijing, CN)", "eastus (Virginia, US)": the vendor's code, then where it is."""
    place = [p for p in (row.get("city"), row.get("province_or_state")) if p]
    place = list(dict.fromkeys(place))   # Beijing, Beijing -> Beijing
    inside = ", ".join([*place, row.get("country") or ""]).strip(", ")
    return f"{row['region_code']} ({inside})" if inside else str(row["region_code"])


def _card_text(row: Mapping[str, Any]) -> str:
    card = f"{row['gpu_model']}{' ' + row['gpu_variant'] if row.get('gpu_variant') else ''}"
    fraction = float(row.get("gpu_fraction") or 1)
    count = int(row.get("gpu_count") or 1)
    if fraction < 1:
        return f"{card}, a {fraction:g} slice"
    return f"{card}, {count} card{'s' if count > 1 else ''}"


def _price_line(row: Mapping[str, Any]) -> str:
    return (f"Price: {float(row['price_per_gpu_hour_cny']):.2f} CNY / "
            f"{float(row['price_per_gpu_hour_usd']):.2f} USD per GPU-hour "
            f"(listed {float(row['price_amount']):,.2f} {row['currency']} per "
            f"{row['billing_period']})")


def _offer_lines(row: Mapping[str, Any]) -> list[str]:
    return [f"{row['vendor']} ({row['source']}): {_card_text(row)}, {row['offer_kind']}, "
            f"billed per {row['billing_period']}, sku {row['sku']}",
            f"Region: {_region_text(row)}",
            _price_line(row)]


def _payload(row: Mapping[str, Any], **extra: Any) -> dict:
    return {**row, **extra}


def _drop_alert(row: dict, rule: DropRule) -> Alert:
    price = float(row["price_per_gpu_hour_cny"])
    previous = float(row["previous_price_cny_per_gpu_hour"])
    tests = [name for name, hit in (("previous", row["drop_hit"]),
                                    ("median", row["median_hit"])) if hit]
    title = (f"Price drop {row['price_change_pct']:+.1f} %: {row['gpu_model']} at {row['vendor']}"
             f" ({_region_text(row)}) now {price:.2f} CNY/GPU-h")
    listed = f"{row['currency']} per {row['billing_period']} as listed"
    lines = _offer_lines(row)
    lines.append(f"Was: {float(row['previous_price_amount']):,.2f} {listed} "
                 f"({previous:.2f} CNY per GPU-hour) at {_ts(row['previous_observed_at'])} "
                 f"({row['price_change_pct']:+.1f} % as listed, "
                 f"{row['price_change_pct_cny']:+.1f} % in CNY)")
    if row["median_price_amount"] is not None:
        lines.append(f"Trailing {rule.median_days}-day median of daily closes: "
                     f"{row['median_price_amount']:,.2f} {listed} "
                     f"({row['median_price_cny_per_gpu_hour']:.2f} CNY per GPU-hour; "
                     f"{row['below_median_pct']:.1f} % below it as listed, "
                     f"{row['median_days']} days)")
    lines += [f"Seen: {_ts(row['observed_at'])}", f"Link: {row['url']}"]
    return Alert(f"drop:{row['offer_id']}:{_key_ts(row['observed_at'])}", "drop", title,
                 "\n".join(lines), _payload(row, tests_met=tests))


def _new_low_alert(row: dict, rule: NewLowRule) -> Alert:
    price = float(row["price_per_gpu_hour_cny"])
    group = f"{row['gpu_model']} {row['offer_kind']} in {row['region_group']}"
    title = f"New low for {group}: {price:.2f} CNY/GPU-h at {row['vendor']}"
    periods = ("billed per " + " or ".join(rule.offers.billing_periods)
               if rule.offers.billing_periods else "every billing period")
    lines = [f"Lowest price ever seen for {group} (every vendor, {periods}), and the offer's "
             "lowest listed price yet (an exchange-rate move alone makes no new low).",
             *_offer_lines(row),
             f"Earlier low: {float(row['earlier_low_cny_per_gpu_hour']):.2f} CNY per GPU-hour "
             f"({row['improvement_pct']:.1f} % lower now, over {row['earlier_observations']} "
             "earlier observation times)",
             f"Seen: {_ts(row['observed_at'])}", f"Link: {row['url']}"]
    key = (f"new_low:{row['gpu_model']}:{row['offer_kind']}:{row['region_group']}:"
           f"{Decimal(row['price_per_gpu_hour_cny']):.6f}")
    return Alert(key, "new_low", title, "\n".join(lines), _payload(row))


def _month_end_dip_alert(row: dict) -> Alert:
    month = row["month"].strftime("%Y-%m")
    baseline, month_end = _f(row["baseline_price_cny_per_gpu_hour"]), _f(
        row["month_end_price_cny_per_gpu_hour"])
    usd = row["usd_per_cny"]

    def money(cny: float | None) -> str:
        if cny is None:
            return "no price"
        return f"{cny:.2f} CNY" + (f" / {cny * usd:.2f} USD" if usd else "")

    next_start = _f(row["next_start_price_cny_per_gpu_hour"])
    card = f"{row['gpu_model']}{' ' + row['gpu_variant'] if row.get('gpu_variant') else ''}"
    title = (f"Month-end dip {month}: {card} {row['offer_kind']} at {row['vendor']} "
             f"({row['region_code']})")
    lines = [f"{row['vendor']} ({row['source']}): {card}, {row['offer_kind']}, hourly billing, "
             f"listed in {row['currency']}; months on {row['local_time_zone']} days",
             f"Region: {_region_text(row)}",
             f"The same {row['offers_compared']} offers, median of each offer's daily closes: "
             f"{money(baseline)} per GPU-hour on days 8-22, {money(month_end)} in the last 5 "
             f"days, {money(next_start)} on days 1-7 of the next month",
             f"Dip: {row['dip_pct']:.1f} % below the line from mid-month to the next month's "
             f"start (as listed; {row['drop_pct']:.1f} % below mid-month, "
             f"{row['recovery_pct']:.1f} % back up after)",
             f"Signal: {row['positive_offer_months']} of {row['offer_months']} offer-months "
             f"below the line ({row['offers_followed']} offers, {row['months_observed']} months; "
             f"sign test p = {row['p_value']:.3g}), median depth {row['strength_pct']:.1f} % "
             f"({100 * row['ci_coverage']:.0f} % interval {row['depth_ci_low_pct']:.1f} to "
             f"{row['depth_ci_high_pct']:.1f} %)",
             f"Link: {row['url'] or 'no current offer'}"]
    key = (f"month_end_dip:{row['source']}:{row['gpu_model']}:{row['gpu_variant'] or '-'}:"
           f"{row['region_code']}:{row['offer_kind']}:{month}")
    return Alert(key, "month_end_dip", title, "\n".join(lines), _payload(row, month=month))


def _watch_alert(row: dict, watch: WatchRule) -> Alert:
    price = float(row["price_per_gpu_hour_cny"])
    title = (f"Watch '{watch.label}': {row['gpu_model']} at {price:.2f} CNY/GPU-h "
             f"(ceiling {watch.max_price_cny_per_gpu_hour:g}) at {row['vendor']}, "
             f"{_region_text(row)}")
    lines = [f"Watch: {watch.label} ({watch.gpu_model}, region {watch.region}, "
             f"{watch.offer_kind or 'any kind'}, {watch.billing_period or 'any billing period'}, "
             f"at most {watch.max_price_cny_per_gpu_hour:g} CNY per GPU-hour)",
             *_offer_lines(row),
             f"At or below the ceiling since {_ts(row['since'])}; last seen "
             f"{_ts(row['observed_at'])}",
             f"Link: {row['url']}"]
    key = f"watch:{watch.watch_id}:{row['offer_id']}:{_key_ts(row['since'])}"
    return Alert(key, "watch", title, "\n".join(lines),
                 _payload(row, watch=watch.label, watch_id=watch.watch_id,
                          max_price_cny_per_gpu_hour=watch.max_price_cny_per_gpu_hour))


def _workload_cheaper_alert(row: dict) -> Alert:
    cost, previous = float(row["total_cost_cny"]), float(row["previous_cost_cny"])
    usd = f" / {float(row['total_cost_usd']):,.2f} USD" if row.get("total_cost_usd") else ""
    title = (f"Saved workload '{row['workload']}' is {row['drop_pct']:.1f} % cheaper: "
             f"{cost:,.2f} CNY (was {previous:,.2f} CNY)")
    lines = [f"Best option now: {row['configuration']} ({row['kind']}), {row['vendor']} "
             f"({row['source']}), {row['gpu_model']} {row['offer_kind']} billed per "
             f"{row['billing_period']}, sku {row['sku']}, offer {row['offer_id']}",
             f"Region: {row['region_code']} ({row['region_group']})",
             f"Total cost: {cost:,.2f} CNY{usd}",
             f"Previous best: {previous:,.2f} CNY, {row['previous_configuration']} at "
             f"{row['previous_vendor']} (advised {_ts(row['previous_computed_at'])})",
             f"Advised: {_ts(row['computed_at'])}", f"Link: {row['url']}"]
    key = f"workload_cheaper:{row['workload']}:{_key_ts(row['computed_at'])}"
    return Alert(key, "workload_cheaper", title, "\n".join(lines), _payload(row))


def _filter_params(offers: OfferFilter) -> dict:
    return {"gpu_models": list(offers.gpu_models), "offer_kinds": list(offers.offer_kinds),
            "billing_periods": list(offers.billing_periods)}


def _state(con: duckdb.DuckDBPyConnection, name: str) -> datetime | None:
    row = con.execute("select value from alerts.state where name = ?", [name]).fetchone()
    return row[0] if row else None


def _set_state(con: duckdb.DuckDBPyConnection, name: str, value: datetime | None) -> None:
    con.execute("insert or replace into alerts.state values (?, ?, now())", [name, value])


@dataclass
class Detection:
    new_keys: dict[str, list[str]] = field(default_factory=lambda: {r: [] for r in RULES})
    found: dict[str, int] = field(default_factory=lambda: {r: 0 for r in RULES})
    new_observations: int = 0

    @property
    def detected(self) -> int:
        return sum(len(keys) for keys in self.new_keys.values())


def find_alerts(con: duckdb.DuckDBPyConnection, rules: AlertRules) -> tuple[list[Alert], int]:
    """Every alert the rules see in the observations loaded since the previous detection (and
    the current watch and month-end state); (alerts, new observations looked at)."""
    con.execute(NEW_OBSERVATIONS_SQL, {
        "max_observed_at": _state(con, "max_observed_at"),
        "detected_at": _state(con, "detected_at"),
        "lookback_hours": rules.initial_lookback_hours})
    new_observations = con.execute("select count(*) from alert_new_observations").fetchone()[0]
    alerts: list[Alert] = []
    if rules.drop.enabled and new_observations:
        d = rules.drop
        rows = _records(con.execute(DROP_SQL, {
            "median_days": d.median_days, "median_min_days": d.median_min_days,
            "min_drop_pct": d.min_drop_pct, "min_below_median_pct": d.min_below_median_pct,
            "require": d.require, **_filter_params(d.offers)}))
        alerts += [_drop_alert(row, d) for row in rows]
    if rules.new_low.enabled and new_observations:
        rows = _records(con.execute(NEW_LOW_SQL, {
            "min_improvement_pct": rules.new_low.min_improvement_pct,
            **_filter_params(rules.new_low.offers)}))
        alerts += [_new_low_alert(row, rules.new_low) for row in rows]
    if rules.month_end_dip.enabled:
        alerts += [_month_end_dip_alert(row) for row in _records(con.execute(MONTH_END_DIP_SQL))]
    for watch in rules.watch:
        # The column name comes from a fixed set (_watch_region), never from the file's text.
        assert watch.region_column in ("province_or_state", "city", "country")
        rows = _records(con.execute(
            WATCH_SQL.format(region_column=f"l.{watch.region_column}"),
            {"gpu_model": watch.gpu_model, "region_value": watch.region_value,
             "offer_kind": watch.offer_kind, "billing_period": watch.billing_period,
             "ceiling": watch.max_price_cny_per_gpu_hour}))
        alerts += [_watch_alert(row, watch) for row in rows]
    # The advisor writes the history; before its first run (or without it) there is none.
    if rules.workload_cheaper.enabled and _table_exists(con, WORKLOAD_HISTORY_TABLE):
        rows = _records(con.execute(WORKLOAD_CHEAPER_SQL,
                                    {"min_drop_pct": rules.workload_cheaper.min_drop_pct}))
        alerts += [_workload_cheaper_alert(row) for row in rows]
    con.execute("drop table if exists alert_new_observations")
    return alerts, new_observations


def detect_alerts(con: duckdb.DuckDBPyConnection, rules: AlertRules) -> Detection:
    """Find alerts and add the new ones to the outbox, moving the watermark, in one transaction."""
    ensure_outbox(con)
    con.execute("begin transaction")
    try:
        started = con.execute("select now()").fetchone()[0]
        alerts, new_observations = find_alerts(con, rules)
        new = set(insert_alerts(con, alerts))
        _set_state(con, "max_observed_at",
                   con.execute("select max(observed_at) from observations").fetchone()[0])
        _set_state(con, "detected_at", started)
    except BaseException:
        con.execute("rollback")
        raise
    con.execute("commit")
    result = Detection(new_observations=new_observations)
    for alert in alerts:
        result.found[alert.rule] += 1
        if alert.alert_key in new:
            result.new_keys[alert.rule].append(alert.alert_key)
    return result


# --------------------------------------------------------------------------------------------
# Delivery
# --------------------------------------------------------------------------------------------

class NotifyConfigError(ValueError):
    """A notification URL or Apprise config file is unusable; the message holds no secrets."""


# Schemes whose host part is a real server name (safe to show); elsewhere (dingtalk://TOKEN,
# slack://TOKEN/..., lark://TOKEN) the "host" is a secret and only the scheme is shown.
HOST_SCHEMES = {"json", "jsons", "xml", "xmls", "form", "forms", "mailto", "mailtos",
                "ntfy", "ntfys", "gotify", "gotifys", "apprise", "apprises", "mmost", "mmosts",
                "rocket", "rockets", "matrix", "matrixs", "nctalk", "nctalks", "ncloud", "nclouds"}


# Apprise's own query options (not secrets): their values would otherwise be redacted from
# every message ("overflow=upstream" would turn each "upstream" into ***).
APPRISE_KNOBS = {"overflow", "retry", "wait", "optional", "method", "format", "mode", "cto",
                 "rto", "verify", "image", "footer", "timestamp", "blocks", "emojis", "store",
                 "tz", "lang", "pgp", "reply"}


@dataclass(frozen=True)
class Channel:
    id: str                      # sha256 of the URL, 12 hex digits: stored, never reversible
    label: str                   # "json://127.0.0.1:8080", "dingtalk://…": safe to log
    secrets: tuple[str, ...] = field(repr=False)   # URL parts never to appear in a message
    plugin: Any = field(repr=False, compare=False)

    def redact(self, text: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            text = text.replace(secret, "***")
        return text


def _url_parts(url: str) -> tuple[str, str, tuple[str, ...]]:
    """(scheme, safe label, secrets) of an Apprise URL."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        host, port = parts.hostname or "", parts.port
    except ValueError:
        host, port = "", None
    secrets = {url, parts.netloc, parts.path, parts.query}
    secrets |= {unquote(s) for s in (parts.username, parts.password) if s}
    secrets |= {s for s in parts.path.split("/") if s}
    secrets |= {v for k, v in parse_qsl(parts.query) if v and k.lower() not in APPRISE_KNOBS}
    shown = scheme in HOST_SCHEMES and host and (_is_ip(host) or host == "localhost"
                                                 or "." in host)
    if shown:
        label = f"{scheme}://{host}{f':{port}' if port else ''}"
        secrets -= {host, f"{host}:{port}" if port else host}
    else:
        label = f"{scheme}://…"
        secrets.add(host)
    # Short fragments ("1", "to") would redact ordinary words; tokens are longer.
    return scheme, label, tuple(s for s in secrets if len(s) >= 4)


def _is_ip(host: str) -> bool:
    try:
        ip_address(host)
        return True
    except ValueError:
        return False


def _channel(url: str, plugin: Any) -> Channel:
    _, label, secrets = _url_parts(url)
    full = plugin.url()   # Apprise's own normalized form, for its error messages
    more = _url_parts(full)[2] if full else ()
    return Channel(hashlib.sha256(url.encode()).hexdigest()[:12], label,
                   tuple(sorted(set(secrets) | set(more) - {label})), plugin)


class _CaptureApprise(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextmanager
def _apprise_messages() -> Iterator[list[str]]:
    """Apprise's warnings and errors for one send, kept from the root logger (they can name the
    endpoint; we log them ourselves, redacted)."""
    logger = logging.getLogger("apprise")
    handler = _CaptureApprise()
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield handler.messages
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def split_urls(text: str) -> list[str]:
    """URLs from GPUPRICES_NOTIFY_URLS: separated by whitespace or by commas before a new
    scheme:// (commas inside one URL, as in mailto's ?to=a@x,b@y, stay)."""
    from apprise.utils.parse import parse_urls

    urls = []
    for word in text.split():
        urls += [u.strip(",") for u in parse_urls(word) if u.strip(",")]
    return urls


def load_channels(env: Mapping[str, str] | None = None) -> list[Channel]:
    """The notification channels configured in the environment (none: an empty list)."""
    import apprise

    env = os.environ if env is None else env
    channels: list[Channel] = []
    for n, url in enumerate(split_urls(env.get(NOTIFY_URLS_ENV, "")), start=1):
        scheme = url.split("://", 1)[0] if "://" in url else None
        with _apprise_messages():   # Apprise's complaint would quote the URL
            plugin = (apprise.Apprise.instantiate(url, suppress_exceptions=True)
                      if scheme else None)
        if not plugin:
            what = f"scheme {scheme!r}" if scheme else "no scheme://"
            raise NotifyConfigError(f"{NOTIFY_URLS_ENV}: entry {n} ({what}) is not a valid "
                                    "Apprise URL (see docs/alerts.md)")
        channels.append(_channel(url, plugin))
    config_file = env.get(NOTIFY_CONFIG_ENV)
    if config_file:
        if not Path(config_file).is_file():
            raise NotifyConfigError(f"{NOTIFY_CONFIG_ENV}: {config_file}: no such file")
        config = apprise.AppriseConfig()
        with _apprise_messages():
            config.add(str(Path(config_file).resolve()))
            bundle = apprise.Apprise()
            bundle.add(config)
            servers = list(bundle)   # every service in the file (tags are not used)
        if not servers:
            raise NotifyConfigError(f"{NOTIFY_CONFIG_ENV}: {config_file}: no valid Apprise URL "
                                    "in it")
        channels += [_channel(plugin.url(), plugin) for plugin in servers]
    unique = {c.id: c for c in reversed(channels)}   # a URL listed twice is one channel
    return [c for c in channels if unique[c.id] is c]


def send(channel: Channel, title: str, body: str, failure: bool = False) -> str | None:
    """One attempt through one channel: None when sent, else why not (redacted)."""
    import apprise

    with _apprise_messages() as messages:
        try:
            ok = channel.plugin.notify(
                title=title, body=body, body_format=apprise.NotifyFormat.TEXT,
                notify_type=apprise.NotifyType.FAILURE if failure else apprise.NotifyType.INFO)
        except Exception as exc:   # a plugin bug must not stop the other alerts
            ok, messages = False, [*messages, f"{type(exc).__name__}: {exc}"]
    if ok:
        return None
    detail = " / ".join(dict.fromkeys(m.strip() for m in messages if m.strip()))
    return channel.redact(f"{channel.label}: {detail or 'Apprise reported a failure'}")


@dataclass
class Delivery:
    delivered: int = 0
    failed: int = 0
    pending: int = 0          # left unsent in the outbox after this run (pending + failed)
    channels: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def note(self) -> str:
        if not self.channels:
            return (f"no notification URLs configured ({NOTIFY_URLS_ENV} / {NOTIFY_CONFIG_ENV}):"
                    f" {self.pending} alerts wait in alerts.outbox")
        return (f"{self.delivered} delivered, {self.failed} failed, {self.pending} unsent, via "
                f"{', '.join(self.channels)}")


def _deliver_one(con: duckdb.DuckDBPyConnection, key: str, title: str, body: str,
                 delivered_to: list[str], channels: list[Channel], down: dict[str, str],
                 settings: DeliverySettings, sleep: Callable[[float], None],
                 failure: bool = False) -> tuple[str, str | None]:
    """Deliver one outbox row to every channel that does not have it yet; record the outcome.
    Returns (status, last error)."""
    remaining = [c for c in channels if c.id not in delivered_to and c.id not in down]
    skipped = [down[c.id] for c in channels if c.id not in delivered_to and c.id in down]
    done = list(delivered_to)
    errors: dict[str, str] = {}
    tries = 0
    for attempt in range(settings.attempts):
        if not remaining:
            break
        if attempt:
            sleep(settings.backoff_seconds * 2 ** (attempt - 1))
        tries += 1
        still = []
        for channel in remaining:
            error = send(channel, title, body, failure)
            if error is None:
                done.append(channel.id)
                errors.pop(channel.id, None)
            else:
                errors[channel.id] = error
                still.append(channel)
        remaining = still
    for channel in remaining:
        # Down for the rest of this run: the next alerts do not wait out its backoff again.
        down[channel.id] = (f"not tried: {channel.label} failed {settings.attempts} times earlier "
                            "in this run")
    all_done = all(c.id in done for c in channels)
    error = "; ".join([*errors.values(), *skipped]) or None
    if all_done:
        con.execute("update alerts.outbox set status = 'sent', attempts = attempts + ?, "
                    "last_error = null, sent_at = now(), delivered_to = ? where alert_key = ?",
                    [tries, done, key])
        return "sent", None
    con.execute("update alerts.outbox set status = case when ? > 0 then 'failed' else status end,"
                " attempts = attempts + ?, last_error = ?, delivered_to = ? where alert_key = ?",
                [tries, tries, error, done, key])
    return ("failed" if tries else "unsent"), error


def deliver_pending(con: duckdb.DuckDBPyConnection, channels: list[Channel],
                    settings: DeliverySettings = DeliverySettings(),
                    sleep: Callable[[float], None] = time.sleep,
                    logger: Any = None) -> Delivery:
    """Send every pending or failed alert, oldest first, each up to `settings.attempts` times."""
    ensure_outbox(con)
    logger = logger or log
    result = Delivery(channels=[c.label for c in channels])
    if channels:
        rows = con.execute("select alert_key, title, body, delivered_to, rule from alerts.outbox "
                           "where status in ('pending', 'failed') "
                           "order by created_at, alert_key").fetchall()
        down: dict[str, str] = {}
        not_tried = 0
        for key, title, body, delivered_to, rule in rows:
            status, error = _deliver_one(con, key, title, body, delivered_to or [], channels,
                                         down, settings, sleep, failure=rule == "run_failure")
            if status == "sent":
                result.delivered += 1
            elif status == "failed":
                result.failed += 1
                result.errors.append(f"{key}: {error}")
                logger.warning(f"alert {key} not delivered: {error}")
            else:
                not_tried += 1
        if not_tried:
            logger.warning(f"{not_tried} alerts not tried: every channel that lacks them failed "
                           "earlier in this run; they go out next run")
    result.pending = con.execute("select count(*) from alerts.outbox "
                                 "where status in ('pending', 'failed')").fetchone()[0]
    return result


# --------------------------------------------------------------------------------------------
# Run failures
# --------------------------------------------------------------------------------------------

@dataclass
class FailureNotice:
    alert_key: str
    status: str               # sent | failed | pending (no channel) | duplicate
    recorded: bool            # written to alerts.outbox
    error: str | None = None


def notify_run_failure(title: str, body: str, *, con: duckdb.DuckDBPyConnection | None = None,
                       channels: list[Channel] | None = None,
                       settings: DeliverySettings | None = None,
                       sleep: Callable[[float], None] = time.sleep) -> FailureNotice:
    """Tell people a run failed, now, through the alert channels, and record it in the outbox.

    For a run-failure sensor: `con` defaults to the working database; when that is locked (a
    new run already holds it) the notice is still sent, just not recorded. The same title and
    body are sent once: a sensor that reports the same failure again is a no-op.
    """
    channels = load_channels() if channels is None else channels
    settings = settings or DeliverySettings(attempts=3, backoff_seconds=2.0)
    key = "run_failure:" + hashlib.sha256(f"{title}\n{body}".encode()).hexdigest()[:16]
    own = None
    if con is None:
        try:
            from spiders.layout import work_db_path
            from pipelines.resources import DUCKDB_CONFIG

            work_db_path().parent.mkdir(parents=True, exist_ok=True)
            own = con = duckdb.connect(str(work_db_path()), config=DUCKDB_CONFIG)
        except duckdb.Error as exc:
            log.warning(f"run failure not recorded in alerts.outbox ({exc}); sending it anyway")
    try:
        if con is None:
            return _send_unrecorded(key, title, body, channels, settings, sleep)
        ensure_outbox(con)
        new = insert_alerts(con, [Alert(key, "run_failure", title, body,
                                        {"title": title, "body": body})])
        row = con.execute("select status, delivered_to from alerts.outbox where alert_key = ?",
                          [key]).fetchone()
        if not new and row[0] == "sent":
            return FailureNotice(key, "duplicate", True)
        if not channels:
            return FailureNotice(key, "pending", True, "no notification URLs configured")
        status, error = _deliver_one(con, key, title, body, row[1] or [], channels, {},
                                     settings, sleep, failure=True)
        return FailureNotice(key, status, True, error)
    finally:
        if own is not None:
            own.close()


def _send_unrecorded(key: str, title: str, body: str, channels: list[Channel],
                     settings: DeliverySettings, sleep: Callable[[float], None]) -> FailureNotice:
    if not channels:
        return FailureNotice(key, "pending", False, "no notification URLs configured")
    remaining, error = list(channels), None
    for attempt in range(settings.attempts):
        if attempt:
            sleep(settings.backoff_seconds * 2 ** (attempt - 1))
        errors = {c.id: send(c, title, body, failure=True) for c in remaining}
        remaining = [c for c in remaining if errors[c.id]]
        error = "; ".join(e for e in errors.values() if e) or None
        if not remaining:
            return FailureNotice(key, "sent", False)
    return FailureNotice(key, "failed", False, error)
