"""What each alert says: its key, title and plain-text body, from one row of a rule's query.

The key names what the alert is about (rule + offer or group + the observation), so the same
finding always makes the same key and the outbox sends it once. The title and body come from the
rule's template (templating.py; `templates/<rule>.j2`), given the row and the text prepared
here for the five rules older than the registry (built_in.py). A title names what tells two
alerts apart: vendor, region, sku, kind and billing period of the offer. Scraped text (sku,
vendor) is cleaned and cut by `Alert` itself, and a formula-like value gets a leading `'` before
it reaches a template (escaping.inert_row; the key and the payload keep the row as it is).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from pipelines.alerts.escaping import inert_row
from pipelines.alerts.outbox import Alert
from pipelines.alerts.registry import RegisteredRule
from pipelines.alerts.rules import DropRule, NewLowRule, WatchRule
from pipelines.alerts.templating import AlertTexts, alert_texts
from pipelines.display import card_share_text, price_text

_DEFAULT_TEXTS: list[AlertTexts] = []


def default_texts() -> AlertTexts:
    """The default templates, built once."""
    if not _DEFAULT_TEXTS:
        _DEFAULT_TEXTS.append(alert_texts())
    return _DEFAULT_TEXTS[0]


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
    share = card_share_text(row.get("gpu_fraction"), row.get("vram_gb"), row.get("gpu_count"))
    return f"{card}, {share}"


def _price_line(row: Mapping[str, Any]) -> str:
    return (f"Price: {float(row['price_per_gpu_hour_cny']):.2f} CNY / "
            f"{float(row['price_per_gpu_hour_usd']):.2f} USD per GPU-hour "
            f"(listed {price_text(row['price_amount'], row['currency'], row['billing_period'])})")


def _offer_context(row: Mapping[str, Any]) -> dict[str, Any]:
    """What every offer alert's templates get: the row (its text made inert) and its facts as
    text."""
    row = inert_row(row)
    return {"row": row, "card": _card_text(row), "region": _region_text(row),
            "offer": (f"{row['vendor']} ({row['source']}): {_card_text(row)}, "
                      f"{row['offer_kind']}, billed per {row['billing_period']}, sku {row['sku']}"),
            "price": _price_line(row), "price_cny": f"{float(row['price_per_gpu_hour_cny']):.2f}",
            "seen": _ts(row.get("observed_at")), "link": row.get("url")}


def _payload(row: Mapping[str, Any], **extra: Any) -> dict:
    return {**row, **extra}


def _alert(key: str, rule: str, context: dict, payload: dict, texts: AlertTexts | None,
           route: tuple[str, ...] = ()) -> Alert:
    title, body = (texts or default_texts()).render(rule, context)
    return Alert(key, rule, title, body, payload, route)


def drop_alert(row: dict, rule: DropRule, texts: AlertTexts | None = None) -> Alert:
    previous = float(row["previous_price_cny_per_gpu_hour"])
    tests = [name for name, hit in (("previous", row["drop_hit"]),
                                    ("median", row["median_hit"])) if hit]
    listed = f"{row['currency']} per {row['billing_period']} as listed"
    median = None
    if row["median_price_amount"] is not None:
        median = (f"Trailing {rule.median_days}-day median of daily closes: "
                  f"{row['median_price_amount']:,.2f} {listed} "
                  f"({row['median_price_cny_per_gpu_hour']:.2f} CNY per GPU-hour; "
                  f"{row['below_median_pct']:.1f} % below it as listed, "
                  f"{row['median_days']} days)")
    context = {**_offer_context(row), "change_pct": f"{row['price_change_pct']:+.1f}",
               "was": (f"Was: {float(row['previous_price_amount']):,.2f} {listed} "
                       f"({previous:.2f} CNY per GPU-hour) at {_ts(row['previous_observed_at'])} "
                       f"({row['price_change_pct']:+.1f} % as listed, "
                       f"{row['price_change_pct_cny']:+.1f} % in CNY)"),
               "median": median}
    return _alert(f"drop:{row['offer_id']}:{_key_ts(row['observed_at'])}", "drop", context,
                  _payload(row, tests_met=tests), texts, rule.channels)


def new_low_alert(row: dict, rule: NewLowRule, texts: AlertTexts | None = None) -> Alert:
    periods = ("billed per " + " or ".join(rule.offers.billing_periods)
               if rule.offers.billing_periods else "every billing period")
    context = {**_offer_context(row),
               "group": f"{row['gpu_model']} {row['offer_kind']} in {row['region_group']}",
               "periods": periods,
               "earlier": (f"Earlier low: {float(row['earlier_low_cny_per_gpu_hour']):.2f} CNY "
                           f"per GPU-hour ({row['improvement_pct']:.1f} % lower now, over "
                           f"{row['earlier_observations']} earlier observation times)")}
    key = (f"new_low:{row['gpu_model']}:{row['offer_kind']}:{row['region_group']}:"
           f"{Decimal(row['price_per_gpu_hour_cny']):.6f}")
    return _alert(key, "new_low", context, _payload(row), texts, rule.channels)


def month_end_dip_alert(row: dict, texts: AlertTexts | None = None,
                        route: tuple[str, ...] = ()) -> Alert:
    raw, row = row, inert_row(row)   # the texts shown inert; the key and payload as they are
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
    context = {
        "row": row, "card": card, "region": _region_text(row), "month": month,
        "offer": (f"{row['vendor']} ({row['source']}): {card}, {row['offer_kind']}, hourly "
                  f"billing, listed in {row['currency']}; months on {row['local_time_zone']} "
                  "days"),
        "compared": (f"The same {row['offers_compared']} offers, median of each offer's daily "
                     f"closes: {money(baseline)} per GPU-hour on days 8-22, {money(month_end)} "
                     f"in the last 5 days, {money(next_start)} on days 1-7 of the next month"),
        "dip": (f"Dip: {row['dip_pct']:.1f} % below the line from mid-month to the next month's "
                f"start (as listed; {row['drop_pct']:.1f} % below mid-month, "
                f"{row['recovery_pct']:.1f} % back up after)"),
        "signal": (f"Signal: a recurring dip of {row['strength_pct']:.1f} % over "
                   f"{row['months_observed']} months (90 % interval "
                   f"{row['depth_ci_low_pct']:.1f} to {row['depth_ci_high_pct']:.1f} %, "
                   f"p = {row['p_value']:.3g}; {row['offers_followed']} offers whose own noise "
                   f"is {row['noise_pct']:.2f} %; {row['positive_offer_months']} of "
                   f"{row['offer_months']} offer-months below the line)"),
        "link": row["url"] or "no current offer"}
    key = (f"month_end_dip:{raw['source']}:{raw['gpu_model']}:{raw['gpu_variant'] or '-'}:"
           f"{raw['region_code']}:{raw['offer_kind']}:{month}")
    return _alert(key, "month_end_dip", context, _payload(raw, month=month), texts, route)


def watch_alert(row: dict, watch: WatchRule, texts: AlertTexts | None = None) -> Alert:
    context = {**_offer_context(row), "watch": watch.label,
               "ceiling": f"{watch.max_price_cny_per_gpu_hour:g}",
               "watch_line": (f"Watch: {watch.label} ({watch.gpu_model}, region {watch.region}, "
                              f"{watch.offer_kind or 'any kind'}, "
                              f"{watch.billing_period or 'any billing period'}, at most "
                              f"{watch.max_price_cny_per_gpu_hour:g} CNY per GPU-hour)"),
               "since": _ts(row["since"])}
    key = f"watch:{watch.watch_id}:{row['offer_id']}:{_key_ts(row['since'])}"
    return _alert(key, "watch", context,
                  _payload(row, watch=watch.label, watch_id=watch.watch_id,
                           max_price_cny_per_gpu_hour=watch.max_price_cny_per_gpu_hour),
                  texts, watch.channels)


def registered_alert(rule: RegisteredRule, row: dict, texts: AlertTexts | None = None,
                     route: tuple[str, ...] = ()) -> Alert:
    """An alert of a registry rule: its key from the rule's key columns, its texts from its one
    template given the row (made inert; the key and payload keep the row as it is)."""
    key = ":".join([rule.name, *(_key_ts(row[c]) if isinstance(row[c], datetime) else str(row[c])
                                 for c in rule.key)])
    return _alert(key, rule.name, {"row": inert_row(row)}, _payload(row), texts, route)


def workload_cheaper_alert(row: dict, texts: AlertTexts | None = None,
                           route: tuple[str, ...] = ()) -> Alert:
    raw, row = row, inert_row(row)   # the texts shown inert; the key and payload as they are
    cost, previous = float(row["total_cost_cny"]), float(row["previous_cost_cny"])
    usd = f" / {float(row['total_cost_usd']):,.2f} USD" if row.get("total_cost_usd") else ""
    context = {
        "row": row, "cost": f"{cost:,.2f}", "previous": f"{previous:,.2f}",
        "best": (f"Best option now: {row['configuration']} ({row['kind']}), {row['vendor']} "
                 f"({row['source']}), {row['gpu_model']} {row['offer_kind']} billed per "
                 f"{row['billing_period']}, sku {row['sku']}, offer {row['offer_id']}"),
        "region": f"{row['region_code']} ({row['region_group']})",
        "total": f"Total cost: {cost:,.2f} CNY{usd}",
        "previous_best": (f"Previous best: {previous:,.2f} CNY, {row['previous_configuration']} "
                          f"at {row['previous_vendor']} (advised "
                          f"{_ts(row['previous_computed_at'])})"),
        "advised": _ts(row["computed_at"]), "link": row["url"]}
    key = f"workload_cheaper:{raw['workload']}:{_key_ts(raw['computed_at'])}"
    return _alert(key, "workload_cheaper", context, _payload(raw), texts, route)
