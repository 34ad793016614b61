"""Every option of every command (found through the click group, so a new command is covered the
day it is registered): a number has both bounds, stated in its help and in its error; text and
paths refuse an empty value as a usage error instead of reading it as "everything" or ".";
`simulate --months 10000` and `prices --card ""` are usage errors (issue 30)."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from pipelines.cli.options import NonEmptyPath, NonEmptyText
from tests.cli.output_walk import command, main

# Options of commands other work is still adding; each is checked once its owner moves it to the
# shared types (pipelines/cli/options.py), and this list may only shrink.


def every_param() -> list[tuple[str, click.Parameter]]:
    params = [("gpuprices", p) for p in main.params]
    for name in sorted(main.commands):
        cmd = command(name)
        params += [(name, p) for p in cmd.params]
        if isinstance(cmd, click.Group):
            params += [(f"{name} {sub}", p) for sub, c in cmd.commands.items() for p in c.params]
    return params


def label(name: str, param: click.Parameter) -> tuple[str, str]:
    return name, (param.opts[0] if param.opts else param.name)


def is_flag(param: click.Parameter) -> bool:
    return isinstance(param, click.Option) and (param.is_flag or param.count)


NUMERIC = [(n, p) for n, p in every_param()
           if isinstance(p.type, click.types._NumberParamTypeBase) and not is_flag(p)]
TEXTUAL = [(n, p) for n, p in every_param()
           if isinstance(p.type, click.types.StringParamType | click.Path | NonEmptyText)
           and not is_flag(p)]


def test_the_walk_finds_the_options_of_the_issue():
    found = {label(n, p) for n, p in NUMERIC + TEXTUAL}
    assert {("simulate", "--months"), ("prices", "--card"), ("gpuprices", "--data-dir")} <= found


@pytest.mark.parametrize(("name", "param"), NUMERIC, ids=lambda v: getattr(v, "name", v))
def test_every_number_has_both_bounds(name, param):
    kind = param.type
    assert isinstance(kind, click.types._NumberRangeBase), f"{name} {param.opts}: no range"
    assert kind.min is not None and kind.max is not None, f"{name} {param.opts}: open range"


@pytest.mark.parametrize(("name", "param"), NUMERIC, ids=lambda v: getattr(v, "name", v))
def test_the_bound_is_in_the_help_and_in_the_error(name, param):
    words = " ".join(name.split()[1:])
    args = [*([] if name == "gpuprices" else name.split()), "--help"]
    text = " ".join(CliRunner().invoke(main, args).output.split())
    bound = param.type._describe_range()
    assert bound in text, f"{name} {param.opts[0]}: help lacks {bound}"
    too_big = param.type.max + (1 if isinstance(param.type, click.IntRange) else 1.0)
    with pytest.raises(click.BadParameter) as refused:
        param.type.convert(str(too_big), param, None)
    assert bound in refused.value.format_message(), words


@pytest.mark.parametrize(("name", "param"), TEXTUAL, ids=lambda v: getattr(v, "name", v))
def test_empty_text_and_paths_are_usage_errors(name, param):
    assert isinstance(param.type, NonEmptyText | NonEmptyPath), \
        f"{name} {param.opts}: use options.TEXT or NonEmptyPath"
    for empty in ("", "  "):
        with pytest.raises(click.UsageError, match="is empty"):
            param.type.convert(empty, param, click.Context(main))


@pytest.mark.parametrize(("args", "words"), [
    (["simulate", "--months", "10000"], "10000 is not in the range 1<=x<=36"),
    (["simulate", "--days", "5000"], "5000 is not in the range 1<=x<=1100"),
    (["prices", "--card", ""], "--card is empty"),
    (["prices", "--region", " "], "--region is empty"),
    (["export", "--out", ""], "--out is empty"),
    (["run", "--source", ""], "--source is empty"),
    (["prices", "--limit", "1000001"], "is not in the range 0<=x<=100000"),
])
def test_the_probes_of_the_issue_are_usage_errors(tmp_path, args, words):
    result = CliRunner(env={"GPUPRICES_DATA_DIR": str(tmp_path)}).invoke(main, args)
    assert result.exit_code == 2, result.output
    assert words in " ".join(result.output.split())
    assert not (tmp_path / "simulated.db").exists()
