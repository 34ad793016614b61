"""`gpuprices claims`: the market-claims scorecard (marts.market_claims), and the table that
`gpuprices signals` shows under its signals."""

from __future__ import annotations

import click
from rich.table import Table

from pipelines.cli.exit_codes import NoData
from pipelines.cli.options import FORMATS
from pipelines.cli.output import console, write_rows
from pipelines.cli.published import published_db
from pipelines.display import terminal_text
from pipelines.query.rows import records
from pipelines.verdicts import NOT_ENOUGH_EVIDENCE, TERMINAL_MARKUP, tally


def _number(value) -> str:
    if value is None:
        return "–"
    value = float(value)
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:,.1f}"


def verdict_text(row: dict) -> str:
    """The verdict in colour and, without one, the distinct offers a verdict would need."""
    text = TERMINAL_MARKUP.get(row["verdict"], terminal_text(row["verdict"]))
    needed = row.get("distinct_offers_needed")
    if needed is not None:
        about = "about " if row.get("evidence_lacking") == "interval overlaps the range" else ""
        text += f"\n[dim]needs {about}{needed} distinct offers[/]"
    return text


def claims_table(con) -> tuple[Table, list[dict]]:
    """The marts.market_claims scorecard: each claim, the median of its distinct offers with the
    interval of that median, the expected range, the evidence, the verdict in colour and, without
    one, why and what evidence it would need."""
    rows = records(con, "select * from marts.market_claims")
    minimum = rows[0]["min_distinct_offers"] if rows else 5
    table = Table(title="market claims (docs/market-claims.md) against the latest data",
                  show_lines=True, title_justify="left", title_style="bold",
                  caption=f"{tally(r['verdict'] for r in rows)}; a verdict needs {minimum}+ "
                          "distinct offers, not all of them modeled, and is read from the "
                          "interval of the median: inside the range it holds, entirely outside "
                          "it does not, across an edge it is not enough evidence yet",
                  caption_justify="left")
    table.add_column("claim", ratio=3)
    table.add_column("median", justify="right")
    table.add_column("interval", justify="right")
    table.add_column("expected", justify="right")
    table.add_column("offers", justify="right")
    table.add_column("verdict")
    for r in rows:
        low, high = r["expected_low"], r["expected_high"]
        expected = f"≥ {_number(low)}" if high is None else f"{_number(low)}–{_number(high)}"
        interval = ("–" if r["ci_low"] is None else
                    f"{_number(r['ci_low'])}–{_number(r['ci_high'])}\n"
                    f"[dim]{100 * r['ci_coverage']:.0f} %[/]")
        evidence = (f"{r['distinct_offers']} distinct\n[dim]{r['offers']} offers, "
                    f"{r['vendors']} vendors[/]")
        claim = (f"{terminal_text(r['claim'])}\n"
                 f"[dim]{terminal_text(r['measure'])}; {terminal_text(r['scope'])}[/]")
        if r["verdict"] == NOT_ENOUGH_EVIDENCE and r["reason"]:
            claim += f"\n[yellow]{terminal_text(r['reason'])}[/]"
        table.add_row(claim, _number(r["median_value"]), interval, expected, evidence,
                      verdict_text(r))
    return table, rows


@click.command("claims")
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True,
              help="A table for people; csv or json (every column of marts.market_claims).")
def claims_command(fmt: str) -> None:
    """The market-claims scorecard: does each rule of thumb of the GPU-rental guides hold?

    Each claim (docs/market-claims.md) is measured on the current market: every offer at its latest
    day within the price horizon of the mart's newest day (marts.market_claims; the values behind
    it: marts.market_claim_evidence). The verdict is read from the 90 % interval of the median over
    distinct offers: holds (inside the expected range), does not hold (entirely outside), or not
    enough evidence, with the reason and the distinct offers a verdict would need: too few offers
    (under 5), an interval across an edge of the range, illustrative prices only (no offer with a
    real price: modeled or undated), or no offer in scope.

    Exit codes: 0 shown; 3 no database yet, or no claims measured.
    """
    with published_db("marts.market_claims") as con:
        table, rows = claims_table(con)
        columns = [d[0] for d in con.execute("select * from marts.market_claims limit 0")
                   .description]
    if fmt == "table":
        if rows:
            console.print(table)
    else:
        write_rows(rows, columns, fmt)
    if not rows:
        raise NoData("marts.market_claims is empty: run `make run` first")
