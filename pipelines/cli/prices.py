"""`gpuprices prices`: the latest price of every offer (marts.latest_prices), filtered and sorted,
as a table for people or csv/json for scripts."""

from __future__ import annotations

import click

from pipelines.cli.exit_codes import NoData
from pipelines.cli.filters import held_note, option_errors
from pipelines.cli.listing import Column, show_listing
from pipelines.cli.options import (
    CARD_HELP,
    KINDS,
    MAX_AGE,
    MAX_AGE_HELP,
    MAX_PRICE_CNY,
    MAX_ROWS,
    PERIODS,
    REGION_HELP,
    SORTS,
    TEXT,
    FiniteFloatRange,
)
from pipelines.cli.output import console, listing_options, write_rows
from pipelines.cli.published import published_db
from pipelines.display import as_of_text, card_share_text, count_text, price_text, terminal_text
from pipelines.display import fold as spelling_key
from pipelines.query.ages import aged_out_note, old_prices_note
from pipelines.query.prices import LATEST_PRICES_TABLES, latest_prices_query
from pipelines.query.rows import columns_and_records
from spiders.price_basis import is_real_price, price_from_word

# The columns of the table, most important first to stay: vendor, card and the comparable price
# are always shown; the as-of date is the day the price held (the last-seen day, or the date of
# published prices; the last-seen time itself is in --format csv/json).
# The source states (pipelines/query/sql/source_states.sql) a table marks: not refreshed lately.
STALE_STATES = ("stale", "held", "failed")


@click.command("prices")
@click.option("--card", type=TEXT, metavar="CARD", help=CARD_HELP)
@click.option("--region", type=TEXT, metavar="REGION", help=REGION_HELP)
@click.option("--kind", type=KINDS, help="Offer kind (also 按需, 竞价/抢占式, 预留).")
@click.option("--period", type=PERIODS,
              help="Billing period the price is listed for "
                   "(also 时/小时, 天, 周, 月/包月, 季/包季, 年/包年).")
@click.option("--vendor", type=TEXT, metavar="S",
              help="Part of a vendor or source name: azure, 阿里云, idc_.")
@click.option("--max-price", type=FiniteFloatRange(0, MAX_PRICE_CNY, min_open=True),
              metavar="CNY",
              help="At most this many CNY per GPU-hour.")
@click.option("--max-age", type=MAX_AGE, metavar="DAYS|all", help=MAX_AGE_HELP)
@click.option("--limit", type=click.IntRange(0, MAX_ROWS), metavar="N",
              help="At most N rows (default: 50 in a table, all in csv/json; 0 = all).")
@click.option("--sort", type=SORTS, default="price", show_default=True,
              help="Cheapest first (per GPU-hour, CNY), or by vendor.")
@listing_options("every column of marts.latest_prices")
@click.option("--include-held", is_flag=True,
              help="Also the prices held back as possible outliers (far from their card's "
                   "market, not yet confirmed by a later crawl; marts.price_outliers).")
def prices_command(card: str | None, region: str | None, kind: str | None, period: str | None,
                   vendor: str | None, max_price: float | None, max_age: str | None,
                   limit: int | None, sort: str, fmt: str, wide: bool,
                   include_held: bool) -> None:
    """The latest price of every offer (marts.latest_prices), filtered and sorted, each with
    its as-of date and age; prices older than the horizon are left out unless --max-age.

    \b
    Examples:
      gpuprices prices --card A100-80GB --region 北京 --period hour
      gpuprices prices --card 4090 --kind spot --max-price 5
      gpuprices prices --region 'Inner Mongolia' --period 月 --format csv > im.csv
      gpuprices prices --card a100 --format json | jq '.[0]'
      gpuprices prices --card H100 --max-age all

    Exit codes: 0 rows shown; 2 unknown card/region/vendor/value; 3 no database yet or no rows
    matched.
    """
    with published_db(*LATEST_PRICES_TABLES) as con:
        with option_errors():
            query = latest_prices_query(con, card, region, kind, period, vendor, max_price,
                                        sort, include_held, max_age=max_age)
        columns, rows = columns_and_records(con, query.sql, query.params)
    found, held = query.found, query.held
    shown = rows if limit == 0 else rows[:limit or (50 if fmt == "table" else None)]
    aged_out = aged_out_note(query.aged_out, query.max_age, query.delisted)
    left_out = [*([held_note(held)] if held else []), *([aged_out] if aged_out else [])]
    old = old_prices_note(query.ages)
    if fmt != "table":
        for note in [*([old] if old else []), *left_out]:   # stdout stays the rows a script reads
            click.echo(f"note: {note}", err=True)
        write_rows(shown, columns, fmt)
    else:
        if old:
            console.print(f"[bold yellow]{old}[/]")
        _prices_table(shown, len(rows), sort, [*found.notes, *left_out], wide)
    if not rows:
        raise NoData("no offers match " + (", ".join(found.notes) or "the filters")
                     + (f" but {' and '.join(left_out)}" if left_out else "")
                     + "; try fewer filters, or `gpuprices prices --max-age all` for everything")


def _prices_table(rows: list[dict], total: int, sort: str, notes: list[str],
                  wide: bool) -> None:
    if not rows:
        return
    order = "cheapest first" if sort == "price" else "by vendor"
    title = f"latest prices: {total} offers, {order}"
    if len(rows) < total:
        title += f" (showing {len(rows)}; --limit 0 for all)"
    notes = list(notes)
    undated = sorted({r["source"] for r in rows if r.get("price_basis") == "undated"})
    modeled = sorted({r["source"] for r in rows if not is_real_price(r.get("price_basis"))}
                     - set(undated))
    if undated:
        notes.append(f"UNDATED prices are real public prices whose date nobody could read "
                     f"({', '.join(undated)}): not counted as dated")
    if modeled:
        notes.append(f"MODELED prices are illustrative, not quotes: replayed from modeled "
                     f"snapshots ({', '.join(modeled)}); price_basis_label in --format csv says "
                     "more")
    behind = not_refreshed_note(rows)
    if behind:
        notes.append(behind)
    show_listing(rows, PRICE_COLUMNS, title=title, caption=terminal_text(" · ".join(notes)),
                 wide=wide)


def _where(r: dict) -> str:
    where = r["province_or_state"] or r["country"]
    if r["country"] not in ("CN", None) and r["province_or_state"]:
        where = f"{r['province_or_state']}, {r['country']}"
    region = r["region_code"] if spelling_key(r["region_code"]) == spelling_key(where) \
        else f"{r['region_code']} ({where})"
    return terminal_text(region)


def _card(r: dict) -> str:
    return (f"{count_text(r['gpu_count'])} " if r["gpu_count"] > 1 else "") + r["gpu_model"]


def _as_of(r: dict) -> str:
    state = source_state_word(r)
    return (as_of_text(r.get("price_as_of"), r.get("price_age_days"))
            + (f" [yellow]{state}[/]" if state else ""))


PRICE_COLUMNS = (
    Column("vendor", lambda r: terminal_text(r["vendor"]), wrap=True),
    Column("region", _where, rank=2, wrap=True),
    Column("card", _card),
    Column("rents", lambda r: card_share_text(r["gpu_fraction"], r["vram_gb"], r["gpu_count"]),
           rank=5),
    Column("kind", lambda r: r["offer_kind"], rank=4),
    Column("listed price", lambda r: price_text(r["price_amount"], r["currency"],
                                                r["billing_period"]), rank=3, justify="right"),
    Column("CNY/GPU-h", lambda r: f"{r['price_per_gpu_hour_cny']:,.2f}", justify="right",
           style="bold"),
    Column("USD/GPU-h", lambda r: f"{r['price_per_gpu_hour_usd']:,.3f}", rank=7,
           justify="right"),
    Column("available", lambda r: {True: "[green]yes[/]", False: "[red]no[/]"}.get(
        r["available"], "[dim]?[/]"), rank=6),
    Column("price from", lambda r: price_from_text(r), rank=6),
    Column("as of (age)", _as_of, rank=1),
)


def price_from_text(r: dict) -> str:
    """Where an offer's price comes from, in a table cell: published prices with their date, a
    price that is not a real one (modeled, simulated, not stated) in capitals and yellow."""
    basis = r.get("price_basis")
    if not is_real_price(basis):
        return f"[yellow]{price_from_word(basis).upper()}[/]"
    as_of = r.get("prices_as_of")
    return price_from_word(basis) + (f" {as_of:%Y-%m-%d}" if as_of else "")


def source_state_word(r: dict) -> str | None:
    """The mark of a price whose source is not being refreshed (its source_state, in capitals:
    STALE, HELD, FAILED); None for a fresh source, an archive's, or one without crawls."""
    state = r.get("source_state")
    return state.upper() if state in STALE_STATES else None


def not_refreshed_note(rows: list[dict]) -> str | None:
    """Under a table: the sources of the rows shown whose latest crawl failed or is held, or that
    no crawl refreshed lately, since when their prices are the last good ones; None: none."""
    sources = sorted({(r["source"], r["source_state"], r.get("source_stale_since"))
                      for r in rows if source_state_word(r)}, key=lambda s: s[0])
    if not sources:
        return None
    each = ", ".join(f"{source} {state.upper()}"
                     + (f" since {since:%Y-%m-%d %H:%M} UTC" if since else "")
                     for source, state, since in sources)
    return (f"not refreshed: {each}; their last good prices are shown (source_state, "
            "source_stale_since in --format csv)")
