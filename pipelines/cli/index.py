"""`gpuprices index`: the price index (marts.price_index), each series' latest published day, or
every day of the series a filter names from --since on."""

from __future__ import annotations

from datetime import date, timedelta

import click

from pipelines.cli.exit_codes import NoData
from pipelines.cli.filters import option_errors
from pipelines.cli.listing import Column, show_listing
from pipelines.cli.options import CARD_HELP, TEXT
from pipelines.cli.output import listing_options, write_rows
from pipelines.cli.published import published_db
from pipelines.display import terminal_text
from pipelines.index.absence import why_empty
from pipelines.query.index import INDEX_TABLES, index_query
from pipelines.query.rows import columns_and_records
from pipelines.warehouse.sql_files import sql_text

NO_MATCH = ("no published series matches these filters ({series} series are published: "
            "`gpuprices index --all` lists them)")


def _level(value, currency: str) -> str:
    return "–" if value is None else f"{value:,.2f} {currency}"


def _pct(value) -> str:
    return "–" if value is None else f"{value:+.2f} %"


def _change_since(rows: list[dict], row: dict, days: int) -> float | None:
    """The level's change in % over `days` days to `row` (None: no level then or now)."""
    then = {r["index_date"]: r for r in rows if r["series_id"] == row["series_id"]}.get(
        row["index_date"] - timedelta(days=days))
    if not then or then["index_level"] is None or row["index_level"] is None:
        return None
    return 100 * (row["index_level"] / then["index_level"] - 1)


def _evidence(row: dict) -> str:
    if row["evidence_lacking"]:
        return (f"[yellow]{terminal_text(row['evidence'])}[/]: "
                f"[dim]{terminal_text(row['evidence_lacking'])}[/]")
    return (f"{row['vendors_matched']}/{row['vendors_in_series']} vendors, "
            f"{row['offers_matched']} offers")


def _interval(row: dict) -> str:
    if row["index_level"] is None:
        return ""
    return f"{row['level_low']:,.2f}–{row['level_high']:,.2f}"


SERIES_COLUMNS = (
    Column("card", lambda r: terminal_text(r["index_card"])),
    Column("market · kind · term", lambda r: f"{r['market']} · {r['offer_kind']} · {r['term']}",
           rank=2, wrap=True),
    Column("day", lambda r: str(r["index_date"]), rank=5),
    Column("level", lambda r: _level(r["index_level"], r["currency"]), justify="right",
           style="bold"),
    Column("interval", _interval, rank=6, justify="right"),
    Column("1d", lambda r: _pct(r["change_pct"]), rank=4, justify="right"),
    Column("7d", lambda r: _pct(r["change_7d"]), rank=1, justify="right"),
    Column("30d", lambda r: _pct(r["change_30d"]), rank=3, justify="right"),
    Column("listing median", lambda r: _level(r["listing_median"], r["currency"]), rank=7,
           justify="right"),
    Column("evidence", _evidence, rank=8, wrap=True),
)
DAY_COLUMNS = (
    Column("day", lambda r: str(r["index_date"])),
    Column("level", lambda r: _level(r["index_level"], r["currency"]), justify="right",
           style="bold"),
    Column("interval", _interval, rank=3, justify="right"),
    Column("change", lambda r: _pct(r["change_pct"]), rank=1, justify="right"),
    Column("listing median", lambda r: _level(r["listing_median"], r["currency"]), rank=2,
           justify="right"),
    Column("evidence", _evidence, rank=4, wrap=True),
)


def show_latest(rows: list[dict], every_series: bool = False, wide: bool = False) -> list[dict]:
    """Each series' latest published day, with its 7- and 30-day change; in the table only the
    series that ever printed a level, unless `every_series` (the rows returned are all)."""
    latest: dict[str, dict] = {}
    for row in rows:
        latest[row["series_id"]] = row                   # rows come in day order
    with_level = {r["series_id"] for r in rows if r["index_level"] is not None}
    shown = [{**r, "change_7d": _change_since(rows, r, 7), "change_30d": _change_since(rows, r, 30)}
             for r in latest.values() if every_series or r["series_id"] in with_level]
    hidden = len(latest) - len(shown)
    note = (f"; {hidden} series never had enough evidence for a level (one vendor, mostly): "
            "--all shows them" if hidden else "")
    show_listing(shown, SERIES_COLUMNS, wide=wide,
                 title="GPU rental price index (docs/price-index.md): per GPU-hour, chained "
                       "over matched offers, vendors weighted equally",
                 caption="level: the chained index in the market's currency (its base day's "
                         "listing median); interval: 90 % bootstrap over vendors; listing "
                         "median: the plain median of the day's listings, for comparison" + note)
    return list(latest.values())


def show_days(rows: list[dict], wide: bool = False) -> None:
    """Every day of the rows' series, a table per series."""
    series: dict[str, list[dict]] = {}
    for row in rows:
        series.setdefault(row["series_id"], []).append(row)
    for series_id, days in series.items():
        show_listing(days, DAY_COLUMNS, wide=wide,
                     title=f"price index {terminal_text(series_id)}, day by day "
                           "(docs/price-index.md)")


@click.command("index")
@click.option("--card", type=TEXT, help=CARD_HELP)
@click.option("--market", type=TEXT,
              help="china (offers listed in CNY) or world (listed in USD); also CN, 中国, "
                   "global ...")
@click.option("--kind", type=TEXT, help="on_demand, spot, reserved (按需, 竞价 ...).")
@click.option("--term", type=TEXT,
              help="The billing period of the series: hour, day, month ... (包月 ...).")
@click.option("--since", type=click.DateTime(["%Y-%m-%d"]),
              help="Show every day from this day on (YYYY-MM-DD) instead of the latest.")
@click.option("--until", type=click.DateTime(["%Y-%m-%d"]), help="The last day shown.")
@click.option("--all", "every_series", is_flag=True,
              help="The table also lists the series that never had enough evidence for a level.")
@listing_options("every column of marts.price_index, every series")
def index_command(card: str | None, market: str | None, kind: str | None, term: str | None,
                  since, until, every_series: bool, fmt: str, wide: bool) -> None:
    """The GPU rental price index: is renting each card getting cheaper, and how fast?

    A matched-offer chained index per card class (A100-80GB, H100/H800 SXM, RTX4090 ...),
    market (china: listed in CNY; world: listed in USD), offer kind and term: each day's change
    is the geometric mean of the price relatives of the offers matched against their last close
    within a week, vendors weighted equally, so listings that come and go do not move it; the
    plain listing median is shown beside it. A day without enough evidence says so instead of
    printing a level, and a day whose change is one vendor's move alone names it. Rows are
    published once a day has closed and never rewritten (docs/price-index.md). An empty answer
    says why (curated tables never enter the index; a day is published once a later one lands).

    Without --since: each series' latest day, with its 7- and 30-day change; with --since:
    every day. csv and json print every column of the rows shown.

    Exit codes: 0 shown; 2 an unknown card, market, kind or term; 3 no database yet, or no
    published day matches.
    """
    since_day: date | None = since.date() if since else None
    until_day: date | None = until.date() if until else None
    with published_db(*INDEX_TABLES) as con:
        with option_errors():
            sql, params = index_query(con, card, market, kind, term, None, until_day)
        columns, rows = columns_and_records(con, sql, params)
        if not rows:
            series = con.execute(sql_text(__file__, "published_series")).fetchone()[0]
            raise NoData(NO_MATCH.format(series=series) if series else why_empty(con))
    if since_day is not None:
        shown = [r for r in rows if r["index_date"] >= since_day]
        if not shown:
            last = max(r["index_date"] for r in rows)
            raise NoData(f"no published day of these series from {since_day} on: their last "
                         f"published day is {last} (a day is published once a later day's "
                         "crawl has landed)")
        if fmt == "table":
            show_days(shown, wide)
        else:
            write_rows(shown, columns, fmt)
        return
    if fmt == "table":
        show_latest(rows, every_series, wide)
    else:
        latest = {r["series_id"]: r for r in rows}          # rows come in day order
        write_rows(list(latest.values()), columns, fmt)
