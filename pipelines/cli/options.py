"""Option values several commands take: choices that also accept other spellings (Chinese ones
included), numbers that must be finite, the data directory, and the help of --card and --region."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import click

from pipelines.display import fold as spelling_key


class AliasChoice(click.Choice):
    """A choice among canonical values that also takes other spellings, Chinese ones included:
    `--period 月` is `--period month`. Help and error messages list the canonical values."""

    def __init__(self, aliases: dict[str, Sequence[str]]) -> None:
        super().__init__(list(aliases), case_sensitive=False)
        self.aliases = {spelling_key(alias): value for value, spellings in aliases.items()
                        for alias in (value, *spellings)}
        self.spellings = aliases

    def convert(self, value, param, ctx):
        if isinstance(value, str):
            value = self.aliases.get(spelling_key(value), value)
        return super().convert(value, param, ctx)

    def get_invalid_choice_message(self, value, ctx) -> str:
        other = "; ".join(f"{canonical}: {', '.join(spellings)}"
                          for canonical, spellings in self.spellings.items() if spellings)
        message = super().get_invalid_choice_message(value, ctx)
        return f"{message} (other spellings: {other})" if other else message


KINDS = AliasChoice({"on_demand": ("on-demand", "ondemand", "按需", "按量", "按量付费", "按需付费"),
                     "spot": ("preemptible", "竞价", "竞价实例", "抢占式", "抢占式实例", "可抢占"),
                     "reserved": ("预留", "预留实例")})
PERIODS = AliasChoice({"hour": ("h", "hr", "hourly", "时", "小时", "按时", "按小时"),
                       "day": ("d", "daily", "天", "日", "按天", "按日"),
                       "week": ("w", "weekly", "周", "按周"),
                       "month": ("mo", "monthly", "月", "包月", "按月"),
                       "year": ("y", "yr", "yearly", "annual", "年", "包年", "按年")})
SORTS = AliasChoice({"price": ("价格", "cheapest"), "vendor": ("厂商", "供应商", "vendors")})
FORMATS = AliasChoice({"table": ("表格",), "csv": (), "json": ()})
EXPORT_FORMATS = AliasChoice({"csv": (), "parquet": (), "both": ("all", "全部"),
                               "skypilot": ("sky",)})

CARD_HELP = "Card: A100-80GB, a100-80g, A100 (the family: 40 and 80 GB), 4090, 4090D, H100 NVL ..."
REGION_HELP = ("Province/state, city, country or vendor region code: 北京 or Beijing, 内蒙古 or "
               "'Inner Mongolia', 乌兰察布, US, eastus, cn-beijing ...")


class FiniteFloatRange(click.FloatRange):
    """A FloatRange that refuses nan and infinity: click's range check lets nan through (every
    comparison with it is false), and 1e400 reads as infinity."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


class DataDirPath(click.Path):
    """A directory path that may not be empty: `--data-dir ""` would read as the current
    directory (Path("") is "."), i.e. the repository root, instead of ./data."""

    def __init__(self) -> None:
        super().__init__(file_okay=False, path_type=Path)

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value.strip():
            raise click.UsageError("--data-dir is empty: give a directory, or leave the option "
                                   "out for the default (./data, or GPUPRICES_DATA_DIR)", ctx)
        return super().convert(value, param, ctx)
