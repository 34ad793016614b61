"""`gpuprices alerts`: the latest alerts of the outbox in the published database, with their
delivery state."""

from __future__ import annotations

import click
from rich.table import Table

from pipelines.cli.exit_codes import NoData
from pipelines.cli.output import console
from pipelines.cli.published import published_db, records
from pipelines.display import terminal_text
from pipelines.warehouse.sql_files import sql_text


@click.command("alerts")
@click.option("--status", type=click.Choice(["pending", "sent", "failed", "all"]), default="all",
              show_default=True, help="Only alerts in this delivery state.")
@click.option("--limit", type=click.IntRange(1), default=20, show_default=True)
def alerts_command(status: str, limit: int) -> None:
    """The latest alerts of the outbox (as of the last published run): rule, title, delivery.

    Alerts are detected and delivered by the run itself (rules: pipelines/alerts/alerts.toml;
    channels: GPUPRICES_NOTIFY_URLS). Exit codes: 0 listed; 3 no database or no alerts yet."""
    with published_db("alerts.outbox") as con:
        rows = records(con, sql_text(__file__, "latest_alerts"),
                       {"status": None if status == "all" else status, "limit": limit})
    if not rows:
        raise NoData(f"no {'' if status == 'all' else status + ' '}alerts yet")
    table = Table(title="alerts")
    for column in ("created", "rule", "title", "status", "attempts", "last error"):
        table.add_column(column, overflow="fold")
    for r in rows:
        table.add_row(f"{r['created_at']:%Y-%m-%d %H:%M}", r["rule"], terminal_text(r["title"]),
                      r["status"], str(r["attempts"]), terminal_text(r["last_error"] or ""))
    console.print(table)
