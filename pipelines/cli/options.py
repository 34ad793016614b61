"""Option values several commands take: choices that also accept other spellings (Chinese ones
included; the read layer's, pipelines/query/choices.py), numbers that must be finite and bounded,
text and paths that may not be empty, the data directory, and the help of --card and --region.

Every option of every command takes one of these types or a click range with both ends
(tests/cli/test_option_bounds.py walks the commands): an empty string is a usage error, never a
silent wildcard (`--card ""` once dropped the filter), and a number has a bound that its help
and its error both state."""

from __future__ import annotations

import math
from pathlib import Path

import click

from pipelines.query import ages as query_ages
from pipelines.query import choices as query_choices
from pipelines.query import prices as query_prices
from pipelines.query.choices import Spellings
from pipelines.query.errors import UnknownValueError
from pipelines.warehouse.price_age import price_horizon_days


class AliasChoice(click.Choice):
    """A choice among canonical values that also takes other spellings, Chinese ones included:
    `--period 月` is `--period month`. The values and spellings are the read layer's
    (pipelines/query/choices.py), read when the option is first used or shown; help and error
    messages list the canonical values, the errors in the API's words."""

    def __init__(self, spellings: Spellings) -> None:
        # click.Choice.__init__ would read the values now, and the kind and period tables import
        # the parser, which `gpuprices --help` need not load.
        self.spellings = spellings
        self.case_sensitive = False

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self.spellings.values)

    def convert(self, value, param, ctx):
        if isinstance(value, str):
            value = self.spellings.canonical(value) or value
        return super().convert(value, param, ctx)

    def get_invalid_choice_message(self, value, ctx) -> str:
        return self.spellings.invalid_message(value)


def _fixed(table: dict[str, tuple[str, ...]]) -> Spellings:
    return Spellings(lambda: table)


KINDS = AliasChoice(query_choices.KINDS)
PERIODS = AliasChoice(query_choices.PERIODS)
SORTS = AliasChoice(query_prices.SORTS)
FORMATS = AliasChoice(_fixed({"table": ("表格",), "csv": (), "tsv": (), "json": ()}))
EXPORT_FORMATS = AliasChoice(_fixed({"csv": (), "parquet": (), "both": ("all", "全部"),
                                     "skypilot": ("sky",)}))

CARD_HELP = "Card: A100-80GB, a100-80g, A100 (the family: 40 and 80 GB), 4090, 4090D, H100 NVL ..."
REGION_HELP = ("Province/state, city, country or vendor region code: 北京 or Beijing, 内蒙古 or "
               "'Inner Mongolia', 乌兰察布, US, eastus, cn-beijing ...")


class FiniteFloatRange(click.FloatRange):
    """A FloatRange that refuses nan and infinity: click's range check lets nan through (every
    comparison with it is false), and 1e400 reads as infinity."""

    def convert(self, value, param, ctx):
        # finiteness first: with an upper bound, "inf" would otherwise read as out of range
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return super().convert(number, param, ctx)


def refuse_empty(value, param, ctx) -> None:
    """A usage error for an empty (or all-blank) string given to `param`."""
    if isinstance(value, str) and not value.strip():
        name = param.opts[0] if param is not None and param.opts else "the value"
        raise click.UsageError(f"{name} is empty: give a value, or leave the option out", ctx)


class NonEmptyText(click.ParamType):
    """Text that may not be empty: `--card ""` is a usage error, not "every card"."""

    name = "text"

    def convert(self, value, param, ctx):
        refuse_empty(value, param, ctx)
        return value


TEXT = NonEmptyText()


class NonEmptyPath(click.Path):
    """A click.Path that may not be empty: `--out ""` would read as the current directory
    (Path("") is ".")."""

    def convert(self, value, param, ctx):
        refuse_empty(value, param, ctx)
        return super().convert(value, param, ctx)


class DataDirPath(NonEmptyPath):
    """A directory path that may not be empty: `--data-dir ""` would read as the current
    directory (Path("") is "."), i.e. the repository root, instead of ./data."""

    def __init__(self) -> None:
        super().__init__(file_okay=False, path_type=Path)

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value.strip():
            raise click.UsageError("--data-dir is empty: give a directory, or leave the option "
                                   "out for the default (./data, or GPUPRICES_DATA_DIR)", ctx)
        return super().convert(value, param, ctx)


class MaxAge(click.ParamType):
    """--max-age DAYS|all: the most days old a price shown may be, or every price (read by
    pipelines.query.ages.max_age_days, which the command's query applies)."""

    name = "days|all"

    def convert(self, value, param, ctx):
        try:
            query_ages.max_age_days(value)
        except UnknownValueError as exc:
            self.fail(exc.message, param, ctx)
        return value


MAX_AGE = MaxAge()
MAX_AGE_HELP = (f"Leave out prices older than DAYS days (default "
                f"{price_horizon_days()}, the horizon of a price now); `all`: however old.")


# Bounds of the options several commands share.
MAX_ROWS = 100_000            # --limit of a listing (0 = all where the command says so)
MAX_PRICE_CNY = 1e6           # --max-price per GPU-hour: far above any listed price
MAX_DAYS = 3660               # --days of a workload: ten years
