"""The commands' console writes a message as one line when its output is not a terminal, so a
log keeps a long path whole (a CI log once held `alerts.` and `toml` on two lines)."""

from __future__ import annotations

import io

import pytest

from pipelines.cli.output import make_console

LONG_PATH = "/tmp/pytest-of-root/pytest-263/popen-gw0/test_a_failed_step_stays_put_a1/alerts.toml"


@pytest.mark.parametrize("message", [
    f"step alerts__price_alerts failed: {LONG_PATH}: not valid TOML",
    "x" * 300,
    "一个很长的中文消息" * 20,
])
def test_a_long_message_stays_one_line_in_a_log(message):
    out = io.StringIO()
    make_console(file=out, width=80).print(message)
    assert out.getvalue() == message + "\n"


def test_markup_is_still_rendered_and_escaped_text_kept():
    out = io.StringIO()
    make_console(file=out, width=80).print(f"[red]step failed[/]: \\[x] {LONG_PATH}")
    assert out.getvalue() == f"step failed: [x] {LONG_PATH}\n"


def test_on_a_terminal_messages_wrap_at_its_width():
    out = io.StringIO()
    make_console(file=out, width=40, force_terminal=True, color_system=None).print("word " * 20)
    lines = out.getvalue().splitlines()
    assert len(lines) > 1 and all(len(line) <= 40 for line in lines)


def test_a_table_still_fits_the_width():
    from rich.table import Table

    table = Table("source", "note")
    table.add_row("autodl", "a very long note " * 10)
    out = io.StringIO()
    make_console(file=out, width=60).print(table)
    assert all(len(line) <= 60 for line in out.getvalue().splitlines())
