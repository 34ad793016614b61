"""Values a reader picks among (an offer kind, a billing period, a sort order), each with other
spellings, Chinese ones included: `月` is `month`, `竞价` is `spot`. The canonical values come
from the tables that define them (the parser's periods, normalization's offer kinds, the price
query's sort orders); this module adds only the other spellings. Both the CLI's options and the
Python API read values through these."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cached_property

from pipelines.display import fold as spelling_key
from pipelines.query.errors import UnknownValueError


class Spellings:
    """Canonical values, each with its other spellings. `table` gives them, {value: spellings},
    and is called when they are first needed: the period and kind tables import the parser,
    which `gpuprices --help` need not load."""

    def __init__(self, table: Callable[[], Mapping[str, Sequence[str]]]) -> None:
        self._table = table

    @cached_property
    def table(self) -> dict[str, tuple[str, ...]]:
        return {value: tuple(spellings) for value, spellings in self._table().items()}

    @property
    def values(self) -> list[str]:
        return list(self.table)

    @cached_property
    def _by_spelling(self) -> dict[str, str]:
        by_spelling: dict[str, str] = {}
        for value, spellings in self.table.items():
            for spelling in (value, *spellings):
                key = spelling_key(spelling)
                if by_spelling.setdefault(key, value) != value:
                    raise ValueError(f"{spelling!r} spells both {by_spelling[key]!r} and "
                                     f"{value!r}")
        return by_spelling

    def canonical(self, text: str) -> str | None:
        """The canonical value `text` spells (any case, full-width or not), None if none."""
        return self._by_spelling.get(spelling_key(text))

    def invalid_message(self, text: object) -> str:
        """What is wrong with `text`, listing the values and their other spellings; the same
        words as click's choices, so the CLI and the API say it alike."""
        values = ", ".join(map(repr, self.values))
        message = (f"{text!r} is not {values}." if len(self.values) == 1
                   else f"{text!r} is not one of {values}.")
        other = "; ".join(f"{value}: {', '.join(spellings)}"
                          for value, spellings in self.table.items() if spellings)
        return f"{message} (other spellings: {other})" if other else message

    def read(self, text: str, field: str) -> str:
        """The canonical value `text` spells; UnknownValueError ("<field>: ...") if none."""
        value = self.canonical(text)
        if value is None:
            raise UnknownValueError(f"{field}: {self.invalid_message(text)}", field)
        return value


def _kinds() -> dict[str, Sequence[str]]:
    from pipelines.normalize import OFFER_KINDS

    return _spelled(OFFER_KINDS, KIND_SPELLINGS, "offer kind")


def _periods() -> dict[str, Sequence[str]]:
    from spiders.parsing.prices import HOURS_PER_PERIOD

    return _spelled(HOURS_PER_PERIOD, PERIOD_SPELLINGS, "billing period")


def _spelled(values: Sequence[str] | Mapping[str, object],
             spellings: Mapping[str, Sequence[str]], what: str) -> dict[str, Sequence[str]]:
    """{value: its other spellings} over the defining table's values, in their order; a spelling
    of a value the table does not have is an error, not a choice nobody can match."""
    stray = set(spellings) - set(values)
    if stray:
        raise ValueError(f"spellings of no {what}: {sorted(stray)}")
    return {value: spellings.get(value, ()) for value in values}


# Other spellings of normalization's offer kinds (pipelines/normalize.py OFFER_KINDS).
KIND_SPELLINGS = {"on_demand": ("on-demand", "ondemand", "按需", "按量", "按量付费", "按需付费"),
                  "spot": ("preemptible", "竞价", "竞价实例", "抢占式", "抢占式实例", "可抢占"),
                  "reserved": ("预留", "预留实例")}
# Other spellings of the parser's billing periods (spiders/parsing/prices.py HOURS_PER_PERIOD).
PERIOD_SPELLINGS = {"hour": ("h", "hr", "hourly", "时", "小时", "按时", "按小时"),
                    "day": ("d", "daily", "天", "日", "按天", "按日"),
                    "week": ("w", "weekly", "周", "按周"),
                    "month": ("mo", "monthly", "月", "包月", "按月"),
                    "quarter": ("qtr", "quarterly", "季", "季度", "包季", "按季", "按季度"),
                    "year": ("y", "yr", "yearly", "annual", "年", "包年", "按年")}

KINDS = Spellings(_kinds)
PERIODS = Spellings(_periods)
