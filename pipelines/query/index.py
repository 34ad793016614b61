"""The price index's read side (marts.price_index): which series a card, a market, an offer kind
and a term name, and the rows of those series from a day on, as `gpuprices index` and
`pipelines.api.index` both read them."""

from __future__ import annotations

import re
from datetime import date

from pipelines.query.choices import KINDS, PERIODS, Spellings
from pipelines.query.errors import UnknownValueError
from pipelines.query.filters import day_bounds, sql_in
from pipelines.warehouse.tables import INDEX_TABLE

INDEX_TABLES = (INDEX_TABLE,)
MARKETS = Spellings(lambda: {"china": ("cn", "中国", "国内", "cny"),
                             "world": ("global", "intl", "international", "全球", "usd")})


def _tokens(index_card: str) -> set[str]:
    """'H100/H800 SXM' -> {H100, H800, SXM}; 'A100-80GB' -> {A100, 80GB}."""
    return {t for t in re.split(r"[/\s-]+", index_card.upper()) if t}


def series_cards(models: list[str], cards: list[str]) -> list[str]:
    """The index cards (index_card values) that `models` (pipelines.lookup's reading of a card)
    name: a card class named after a model needs that model (A100-80GB); one named after
    families needs one of them (H100/H800 SXM, H100 PCIe, RTX4090)."""
    wanted_models = {m.upper() for m in models}
    families = {m.upper().split("-")[0] for m in models}
    matched = []
    for card in cards:
        if "-" in card and card.upper().split("-")[0] in families:
            if card.upper() in wanted_models:
                matched.append(card)
        elif _tokens(card) & families:
            matched.append(card)
    return matched


def index_query(con, card: str | None = None, market: str | None = None,
                kind: str | None = None, term: str | None = None,
                since: str | date | None = None, until: str | date | None = None
                ) -> tuple[str, list]:
    """SQL and parameters for the rows of the series the filters name, ordered by series and
    day. `card` as pipelines.lookup reads it (A100, H100, 4090, A100-80GB); `market` china or
    world (CN, 中国, global, ...); `kind` and `term` as the prices' kind and period."""
    # the rows of the method that published last (a new method version publishes its own rows)
    where = ["method_version = (select arg_max(method_version, published_at) "
             f"from {INDEX_TABLE})"]
    params: list = []
    if card is not None:
        from pipelines.lookup import LookupTextError, match_card
        try:
            models = list(match_card(card).models)
        except LookupTextError as exc:
            raise UnknownValueError(str(exc), "card") from None
        known = [r[0] for r in con.execute(
            f"select distinct index_card from {INDEX_TABLE} order by 1").fetchall()]
        cards = series_cards(models, known)
        if not cards:
            raise UnknownValueError(f"card: no index series for {card!r} (series: "
                                    f"{', '.join(known) or 'none yet'})", "card")
        where.append(sql_in("index_card", cards))
        params += cards
    for value, spellings, column, field in ((market, MARKETS, "market", "market"),
                                            (kind, KINDS, "offer_kind", "kind"),
                                            (term, PERIODS, "term", "term")):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(spellings.read(value, field))
    days, day_params = day_bounds("index_date", since, until)
    return (f"select * from {INDEX_TABLE} where {' and '.join([*where, *days])} "
            "order by series_id, index_date", [*params, *day_params])
