"""What each alert says: its key, title and plain-text body, from one row of a rule's query.

The key names what the alert is about (rule + offer or group + the observation), so the same
finding always makes the same key and the outbox sends it once. Scraped text (sku, vendor) is
cleaned and cut by `Alert` itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from pipelines.alerts.outbox import Alert
from pipelines.alerts.rules import DropRule, NewLowRule, WatchRule


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


def drop_alert(row: dict, rule: DropRule) -> Alert:
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


def new_low_alert(row: dict, rule: NewLowRule) -> Alert:
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


def month_end_dip_alert(row: dict) -> Alert:
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


def watch_alert(row: dict, watch: WatchRule) -> Alert:
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


def workload_cheaper_alert(row: dict) -> Alert:
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
