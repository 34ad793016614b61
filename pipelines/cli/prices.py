"""`gpuprices prices`: the latest price of every offer (marts.latest_prices), filtered and sorted,
as a table for people or csv/json for scripts."""

from __future__ import annotations

import click
from rich import box
from rich.table import Table

from pipelines.cli.exit_codes import NoData
from pipelines.cli.filters import held_note, option_errors
from pipelines.cli.options import (
    CARD_HELP,
    FORMATS,
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
from pipelines.cli.output import console, write_rows
from pipelines.cli.published import published_db
from pipelines.display import age_text, amount_text, fraction_text, terminal_text
from pipelines.display import fold as spelling_key
from pipelines.query.ages import aged_out_note, old_prices_note
from pipelines.query.prices import LATEST_PRICES_TABLES, latest_prices_query
from pipelines.query.rows import columns_and_records
from spiders.price_basis import is_real_price, price_from_word

WIDE_COLUMNS = ("vendor", "region", "card", "fraction", "kind", "period", "listed price",
                "CNY/GPU-h", "USD/GPU-h", "available", "price from", "as of (age)")
# The as-of date is the day the price held: the last-seen day, or the date of published prices;
# the last-seen time itself is in --format csv/json. Below this width the twelve columns no
# longer fit: vendor, region and card share one cell, and where the price comes from and its age
# are said under it.
NARROW_COLUMNS = ("offer", "kind", "listed price", "CNY/GPU-h", "available")
WIDE_TABLE = 170
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
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True,
              help="A table for people; csv or json (every column of marts.latest_prices).")
@click.option("--include-held", is_flag=True,
              help="Also the prices held back as possible outliers (far from their card's "
                   "market, not yet confirmed by a later crawl; marts.price_outliers).")
def prices_command(card: str | None, region: str | None, kind: str | None, period: str | None,
                   vendor: str | None, max_price: float | None, max_age: str | None,
                   limit: int | None, sort: str, fmt: str, include_held: bool) -> None:
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
        if old:     # stdout stays the rows a script reads
            click.echo(f"note: {old}", err=True)
        write_rows(shown, columns, fmt)
    else:
        if old:
            console.print(f"[bold yellow]{old}[/]")
        _prices_table(shown, len(rows), sort, [*found.notes, *left_out])
    if not rows:
        raise NoData("no offers match " + (", ".join(found.notes) or "the filters")
                     + (f" but {' and '.join(left_out)}" if left_out else "")
                     + "; try fewer filters, or `gpuprices prices --max-age all` for everything")


def _prices_table(rows: list[dict], total: int, sort: str, notes: list[str]) -> None:
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
    wide = console.width >= WIDE_TABLE
    if not wide:
        notes.append(f"a terminal of {WIDE_TABLE}+ columns (or --format csv) also shows "
                     "USD/GPU-h and the as-of date")
    columns = WIDE_COLUMNS if wide else NARROW_COLUMNS
    table = Table(title=title, caption=terminal_text(" · ".join(notes)) or None,
                  caption_justify="left", box=box.SIMPLE_HEAD)
    for column in columns:
        numeric = column in ("fraction", "listed price", "CNY/GPU-h", "USD/GPU-h")
        table.add_column(column, justify="right" if numeric else
                         "center" if column == "available" else "left",
                         style="bold" if column == "CNY/GPU-h" else None,
                         min_width={"vendor": 14, "region": 16}.get(column),
                         no_wrap=column not in ("vendor", "region", "offer"))
    for r in rows:
        cells = _cells(r)
        table.add_row(*(cells[c] for c in columns))
    console.print(table)


def _cells(r: dict) -> dict[str, str]:
    """One offer's cells, by column name (wide and narrow tables)."""
    where = r["province_or_state"] or r["country"]
    if r["country"] not in ("CN", None) and r["province_or_state"]:
        where = f"{r['province_or_state']}, {r['country']}"
    region = r["region_code"] if spelling_key(r["region_code"]) == spelling_key(where) \
        else f"{r['region_code']} ({where})"
    card = r["gpu_model"] + (f" ×{r['gpu_count']}" if r["gpu_count"] > 1 else "")
    fraction = fraction_text(r["gpu_fraction"])
    vendor, region = terminal_text(r["vendor"]), terminal_text(region)
    price_from, age = price_from_text(r), age_text(r.get("price_age_days"))
    state = source_state_word(r)
    return {
        "vendor": vendor, "region": region, "card": card, "price from": price_from,
        "offer": f"{vendor}\n[dim]{region}[/]\n{card}"
                 + ("" if fraction == "1" else f" [cyan]{fraction} slice[/]")
                 + ("\n" if r.get("price_basis") == "live" else f"\n{price_from} · ") + age
                 + (f" [yellow]{state}[/]" if state else ""),
        "fraction": fraction, "kind": r["offer_kind"], "period": r["billing_period"],
        "listed price": f"{amount_text(r['price_amount'])} {r['currency']}/{r['billing_period']}",
        "CNY/GPU-h": f"{r['price_per_gpu_hour_cny']:,.2f}",
        "USD/GPU-h": f"{r['price_per_gpu_hour_usd']:,.3f}",
        "as of (age)": (f"{r['price_as_of']:%Y-%m-%d} " if r.get("price_as_of") else "")
                       + f"({age})" + (f" [yellow]{state}[/]" if state else ""),
        "available": {True: "[green]yes[/]", False: "[red]no[/]"}.get(r["available"],
                                                                      "[dim]?[/]")}


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
