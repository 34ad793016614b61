"""Scraped text made inert in alerts, for each channel's format.

Two places where a vendor's text could become more than text:

* Formula-like values. A sku or vendor that starts with `=`, `+`, `-`, `@` (or a tab, a CR, the
  full-width forms) is a formula to a spreadsheet that a webhook receiver or a mail rule files
  the alert into. `inert_row` gives such a value a leading `'` before it reaches a template (the
  CSV feeds' rule, pipelines/sql/csv_safe_cell.sql, applied through feed_cells.spreadsheet_safe:
  one rule, one home). The key and the payload keep the row as it is.
* Markup. Apprise converts a plain-text body into each channel's own format itself (it escapes
  HTML for an HTML channel and CommonMark for a Markdown one), but a title the service shows on
  its own (title_maxlen > 0) is passed on as it is: `for_channel` escapes it the same way, so
  `<b>`, `[link](…)`, `*`, `#` or `@everyone` in a title reach a chat as characters.

Control, zero-width and bidi characters are shown as escapes and long text is cut by `Alert`
itself (outbox.py, display.clean_text), for every channel alike.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from pipelines.feed_cells import spreadsheet_safe

TEXT, HTML, MARKDOWN = "text", "html", "markdown"


def inert_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """`row` with each text value a spreadsheet would evaluate given a leading `'`; every other
    value as it is."""
    texts = {name: value for name, value in row.items() if isinstance(value, str) and value}
    if not texts:
        return dict(row)
    safe = dict(zip(texts, spreadsheet_safe(list(texts.values())), strict=True))
    return {name: (f"'{value}" if name in safe and safe[name].startswith("'")
                   and not value.startswith("'") else value)
            for name, value in row.items()}


def escape_markdown(text: str) -> str:
    """`text` as CommonMark that renders as the same characters (Apprise's own rule)."""
    from apprise.conversion.format import text_to_markdown

    return text_to_markdown(text)


ESCAPES = {TEXT: lambda text: text, HTML: lambda text: html.escape(text, quote=True),
           MARKDOWN: escape_markdown}


def declared_formats(plugin: Any) -> list[str]:
    """The formats a channel's service declares, its native one first."""
    declared = plugin.notify_format
    formats = declared if isinstance(declared, tuple | list) else [declared]
    return [getattr(f, "value", f) for f in formats]


def channel_format(plugin: Any) -> str:
    """How a channel's service renders text: html when HTML is its native format (mail);
    markdown for a chat that declares Markdown but no HTML (Slack, Discord, DingTalk, Lark:
    they render markup in plain text too); text otherwise (a JSON, XML or form webhook, which
    declares every format and renders none)."""
    formats = declared_formats(plugin)
    if formats and formats[0] == HTML:
        return HTML
    if MARKDOWN in formats and HTML not in formats:
        return MARKDOWN
    return TEXT


def for_channel(plugin: Any, title: str) -> str:
    """The title as the channel's service should get it: escaped for its format when the
    service shows the title apart from the body (Apprise leaves such a title as it is); a
    title blended into the body is converted by Apprise with the body."""
    if getattr(plugin, "title_maxlen", 0) <= 0:
        return title
    return ESCAPES[channel_format(plugin)](title)
