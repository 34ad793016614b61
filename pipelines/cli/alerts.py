"""`gpuprices alerts`: the latest alerts of the outbox in the published database, with their
delivery state per channel; `gpuprices alerts test`: a test notification to every channel."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import click
from rich.markup import escape

from pipelines.cli.exit_codes import EXIT_RUN_FAILED, NoData
from pipelines.cli.listing import Column, show_listing
from pipelines.cli.options import MAX_ROWS, TEXT
from pipelines.cli.output import console, listing_options, write_rows
from pipelines.cli.published import published_db
from pipelines.display import terminal_text
from pipelines.query.rows import records
from pipelines.warehouse.sql_files import sql_text

STATUSES = ["pending", "sent", "partial", "failed", "all"]
ALERT_COLUMNS = ("created_at", "rule", "title", "status", "channels", "attempts", "last_error")
TABLE_COLUMNS = (
    Column("created", lambda r: f"{r['created_at']:%Y-%m-%d %H:%M}"),
    Column("rule", lambda r: terminal_text(r["rule"]), rank=2),
    Column("title", lambda r: terminal_text(r["title"]), wrap=True),
    Column("status", lambda r: r["status"]),
    Column("channels", lambda r: terminal_text(r["channels"]), rank=3, wrap=True),
    Column("attempts", lambda r: str(r["attempts"]), rank=4, justify="right"),
    Column("last error", lambda r: terminal_text(r["last_error"] or ""), rank=1, wrap=True),
)


def _channels_text(channel_status: str | dict | None) -> str:
    """"json://127.0.0.1:8080 sent, dingtalk://… failed": the outcome per channel."""
    if isinstance(channel_status, str):
        channel_status = json.loads(channel_status)
    return ", ".join(f"{v.get('channel', '?')} {v.get('status', '?')}"
                     for v in (channel_status or {}).values())


@click.group("alerts", invoke_without_command=True)
@click.option("--status", type=click.Choice(STATUSES), default="all", show_default=True,
              help="Only alerts in this delivery state (partial: some channels have it).")
@click.option("--limit", type=click.IntRange(1, MAX_ROWS), default=20, show_default=True)
@listing_options("the columns " + ", ".join(ALERT_COLUMNS))
@click.pass_context
def alerts_command(ctx: click.Context, status: str, limit: int, fmt: str, wide: bool) -> None:
    """The latest alerts of the outbox (as of the last published run): rule, title, delivery.

    Alerts are detected and delivered by the run itself (rules: pipelines/alerts/alerts.toml;
    channels: GPUPRICES_NOTIFY_URLS). `gpuprices alerts test` sends a test notification.
    Exit codes: 0 listed; 3 no database or no alerts yet."""
    if ctx.invoked_subcommand is not None:
        return
    with published_db("alerts.outbox") as con:
        rows = records(con, sql_text(__file__, "latest_alerts"),
                       {"status": None if status == "all" else status, "limit": limit})
    if not rows:
        raise NoData(f"no {'' if status == 'all' else status + ' '}alerts yet")
    listed = [{"created_at": r["created_at"], "rule": r["rule"], "title": r["title"],
               "status": r["status"], "channels": _channels_text(r.get("channel_status")),
               "attempts": r["attempts"], "last_error": r["last_error"]} for r in rows]
    if fmt != "table":
        write_rows(listed, list(ALERT_COLUMNS), fmt)
        return
    shown = any(r["channels"] for r in listed)   # no column for outboxes from before
    columns = [c for c in TABLE_COLUMNS if shown or c.header != "channels"]
    show_listing(listed, columns, title="alerts", wide=wide)


@alerts_command.command("test")
@click.option("--channel", "tag", type=TEXT, metavar="TAG",
              help="Only the channels with this Apprise tag (default: every channel).")
def alerts_test_command(tag: str | None) -> None:
    """Send a test notification to every configured channel (or the tagged ones).

    Channels come from GPUPRICES_NOTIFY_URLS and GPUPRICES_NOTIFY_CONFIG (docs/alerts.md).
    Prints sent or failed per channel. Exit codes: 0 every channel received it; 1 some
    channel failed, or a URL is not valid; 3 no channel configured (or none with the tag)."""
    from pipelines.alerts import (
        NOTIFY_URLS_ENV,
        AlertConfigError,
        NotifyConfigError,
        load_channels,
        load_rules,
        send,
    )
    from pipelines.alerts.templating import alert_texts

    try:
        channels = load_channels()
    except NotifyConfigError as exc:
        raise click.ClickException(str(exc)) from exc   # exit 1
    if tag is not None:
        channels = [c for c in channels if tag.lower() in c.tags]
    if not channels:
        raise NoData(f"no notification channel{f' tagged {tag!r}' if tag else ''} configured: "
                     f"set {NOTIFY_URLS_ENV} (e.g. ops=json://host/hook; see docs/alerts.md)")
    try:   # the user's templates when the rules file names them; a broken one: the default
        texts = alert_texts(load_rules().templates_dir)
    except AlertConfigError as exc:
        console.print(f"[yellow]{escape(str(exc))}[/]: the default test template is used",
                      highlight=False)
        texts = alert_texts()
    failed = 0
    sent_at = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    for channel in channels:
        title, body = texts.render("test", {"channel": channel.label, "sent_at": sent_at,
                                            "tags": sorted(channel.tags)})
        error = send(channel, title, body)
        tags = escape(f" [{', '.join(sorted(channel.tags))}]") if channel.tags else ""
        if error is None:
            console.print(f"{channel.label}{tags}: [green]sent[/]", highlight=False)
        else:
            failed += 1
            console.print(f"{channel.label}{tags}: [red]failed[/]: "
                          f"{escape(terminal_text(error))}", highlight=False)
    if failed:
        console.print(f"{failed} of {len(channels)} channels failed", highlight=False)
        raise SystemExit(EXIT_RUN_FAILED)
