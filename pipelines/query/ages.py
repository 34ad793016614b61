"""How old the prices a reader sees are: the filter of "now" over the latest prices (a price at
most `--max-age` days old, the API's `max_age`, default the horizon, price_horizon_days(); of an
offer its record still lists: price_is_now), the note that says what it left out and why, and the
line a page opens with when most of what it shows is older than the horizon. The as-of date, the
age and the rule itself are the macros of pipelines/warehouse/sql/price_age_macros.sql."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from pipelines.query.errors import UnknownValueError
from pipelines.warehouse.price_age import listing_lag_days, price_horizon_days

# `--max-age all`, max_age="all": every price, however old.
ALL_AGES = "all"
# The age of a row of the aged latest prices (pipelines/query/sql/aged_latest_prices.sql).
AGE_COLUMN = "price_age_days"
# How many days its last sighting trails its record's newest data (the same file).
LAG_COLUMN = "days_behind_record"


def max_age_days(value: int | str | None) -> int | None:
    """The most days old a price shown may be: None (not given) the horizon; "all" no limit
    (None); a whole number of days, 0 or more. Anything else raises UnknownValueError."""
    if value is None:
        return price_horizon_days()
    if isinstance(value, str):
        text = value.strip().lower()
        if text == ALL_AGES:
            return None
        if not text.isdigit():
            raise UnknownValueError(f"max_age: {value!r} is not a number of days or "
                                    f"{ALL_AGES!r}", "max_age")
        return int(text)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UnknownValueError(f"max_age: {value!r} is not a number of days (0 or more) or "
                                f"{ALL_AGES!r}", "max_age")
    return value


def within_age_sql(max_age: int | None) -> str:
    """The predicate over the aged latest prices that keeps the prices "now": at most `max_age`
    days old, of an offer its record still lists (price_is_now); "true" for no limit (`all`:
    every price, however old, listed or not)."""
    return ("true" if max_age is None
            else f"price_is_now({AGE_COLUMN}, {LAG_COLUMN}, {int(max_age)})")


def left_out_sql(max_age: int | None) -> tuple[str, str]:
    """The predicates of the two reasons within_age_sql leaves a price out, exclusive: older than
    `max_age` days, and (not older) of an offer its record no longer lists."""
    if max_age is None:
        return "false", "false"
    within = within_age_sql(max_age)
    older = f"coalesce({AGE_COLUMN} > {int(max_age)}, true)"
    return f"not ({within}) and {older}", f"not ({within}) and not {older}"


def aged_out_note(older: int, max_age: int | None, delisted: int = 0) -> str | None:
    """Under a table: how many offers "now" left out, for each reason, and how to see them
    ("3 offers older than 180 days left out (--max-age all shows them)"); None when none was."""
    def offers(n: int) -> str:
        return f"{n} offer{'s' if n != 1 else ''}"
    old = f"older than {max_age} days"
    unlisted = (f"no longer listed by their record (last seen over {listing_lag_days()} days "
                "before its newest data)")
    if older and delisted:
        head = f"{offers(older + delisted)} left out: {older} {old}, {delisted} {unlisted}"
    elif older or delisted:
        head = f"{offers(older or delisted)} {old if older else unlisted} left out"
    else:
        return None
    return f"{head} (--max-age {ALL_AGES} shows them)"


@dataclass(frozen=True)
class PriceAges:
    """What a page shows, by age: how many prices, how many of them older than the horizon,
    and the newest as-of date among all the prices it draws on (shown or left out)."""

    shown: int
    old: int
    newest_as_of: date | None
    newest_age_days: int | None
    horizon_days: int


def old_prices_note(ages: PriceAges) -> str | None:
    """The line a page opens with when most of what it shows (over half) is older than the
    horizon, or the newest price it draws on is: "most of these prices are older than 180 days:
    the newest is 2026-08-20 (108 days)". None when the page is current."""
    horizon = ages.horizon_days
    newest_old = ages.newest_age_days is not None and ages.newest_age_days > horizon
    if not (newest_old or 2 * ages.old > ages.shown):
        return None
    head = "all of these prices are" if newest_old else "most of these prices are"
    days = ages.newest_age_days
    newest = (f": the newest is {ages.newest_as_of:%Y-%m-%d} ({days} day{'s' if days != 1 else ''})"
              if ages.newest_as_of else "")
    return f"{head} older than {horizon} days{newest}"
