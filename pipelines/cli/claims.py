"""`gpuprices claims`: the market-claims scorecard (marts.market_claims), and the table that
`gpuprices signals` shows under its signals."""

from __future__ import annotations

import click
from rich.padding import Padding

from pipelines.cli.exit_codes import NoData
from pipelines.cli.output import console, listing_options, write_rows
from pipelines.cli.published import published_db
from pipelines.display import terminal_text
from pipelines.query.rows import records
from pipelines.verdicts import NOT_ENOUGH_EVIDENCE, TERMINAL_MARKUP, tally

FIGURES_INDENT = 2


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
        text += f" [dim](needs {about}{needed} distinct offers)[/]"
    return text


def figures_text(r: dict) -> str:
    """A claim's figures on one line: median, interval, expected range, the evidence (distinct
    offers, offers, vendors, how many real) and the verdict."""
    low, high = r["expected_low"], r["expected_high"]
    expected = f"≥ {_number(low)}" if high is None else f"{_number(low)}–{_number(high)}"
    interval = ("no interval" if r["ci_low"] is None else
                f"{100 * r['ci_coverage']:.0f} % interval {_number(r['ci_low'])}–"
                f"{_number(r['ci_high'])}")
    real = r["offers"] - (r.get("illustrative_offers") or 0)
    return " · ".join((
        f"median [bold]{_number(r['median_value'])}[/]", interval, f"expected {expected}",
        f"{r['distinct_offers']} distinct of {r['offers']} offers, {r['vendors']} vendors, "
        f"{real} real", verdict_text(r)))


def show_claims(rows: list[dict]) -> None:
    """The scorecard as a person reads it: each claim's sentence as a heading, its figures on one
    line beneath (wrapped between figures on a narrow terminal), what it measures, and why there
    is no verdict yet."""
    minimum = rows[0]["min_distinct_offers"] if rows else 5
    console.print("[bold]market claims (docs/market-claims.md) against the latest data[/]: "
                  + tally(r["verdict"] for r in rows), soft_wrap=False)
    for r in rows:
        console.print("", soft_wrap=False)
        console.print(f"[bold]{terminal_text(r['claim'])}[/]", soft_wrap=False)
        lines = [figures_text(r),
                 f"[dim]{terminal_text(r['measure'])}; {terminal_text(r['scope'])}[/]"]
        if r["verdict"] == NOT_ENOUGH_EVIDENCE and r["reason"]:
            lines.append(f"[yellow]{terminal_text(r['reason'])}[/]")
        for line in lines:
            console.print(Padding(line, (0, 0, 0, FIGURES_INDENT), expand=False), soft_wrap=False)
    console.print("", soft_wrap=False)
    console.print(f"[dim]a verdict needs {minimum}+ distinct offers, not all of them modeled, and "
                  "is read from the interval of the median: inside the range it holds, entirely "
                  "outside it does not, across an edge it is not enough evidence yet[/]",
                  soft_wrap=False)


def claim_rows(con) -> tuple[list[str], list[dict]]:
    """The columns and rows of marts.market_claims."""
    columns = [d[0] for d in con.execute("select * from marts.market_claims limit 0")
               .description]
    return columns, records(con, "select * from marts.market_claims")


@click.command("claims")
@listing_options("every column of marts.market_claims")
def claims_command(fmt: str, wide: bool) -> None:
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
        columns, rows = claim_rows(con)
    if fmt == "table":
        if rows:
            show_claims(rows)
    else:
        write_rows(rows, columns, fmt)
    if not rows:
        raise NoData("marts.market_claims is empty: run `make run` first")
