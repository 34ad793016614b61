"""Every command that writes, walked through the output-path cases (tests/cli/test_output_paths.py).

The commands come from the click group itself: a command is a writer (WRITERS: its minimal
arguments) or a reader (READERS), and a new command must be put in one of them, so it is walked
as soon as it exists. A writer's output paths are its own click.Path options that need not exist
(--out, --db, its own --data-dir) and the group's --data-dir.

`python -m tests.cli.output_walk CASES_JSON` runs the cases in this process and prints one JSON
line per case: the read-only and full file systems are mounts made in a private mount namespace
(`unshare -m`) around that process.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path

import click
from click.testing import CliRunner

from pipelines.cli.group import LazyCommand, main

# A writer's minimal arguments: what takes it to its first write. {dir} is an existing directory.
WRITERS: dict[str, list[str]] = {
    "run": ["--source", "idc_sinnet_bj"],
    "reject": ["no-such-crawl", "--reason", "a test"],
    "accept": ["no-such-crawl", "--reason", "a test"],
    "export": ["--format", "csv"],
    "report": [],
    "demo": ["--months", "1"],
    "simulate": ["--months", "1", "--no-models"],
    "backfill": ["skypilot-catalog", "{dir}"],
    "record": ["--no-build"],
}
# Commands that write nothing (the published database is opened read-only; ui and check-sources
# write only their own scratch files outside the data directory).
READERS = frozenset({"sources", "prices", "signals", "claims", "alerts", "check-sources",
                     "index", "advise", "ui"})


def command(name: str) -> click.Command:
    found = main.commands[name]
    return found.command if isinstance(found, LazyCommand) else found


def output_options(name: str) -> list[str]:
    """The command's own options that name a path it writes (a click.Path that need not
    exist)."""
    return [param.opts[0] for param in command(name).params
            if isinstance(param, click.Option) and isinstance(param.type, click.Path)
            and not param.type.exists]


@dataclass
class Outcome:
    args: list[str]
    exit_code: int
    output: str
    traceback: str


def invoke(args: list[str], data_dir: Path, home: Path) -> Outcome:
    """`gpuprices *args` in this process on `data_dir`; a traceback is any exception that is
    not click's own exit."""
    runner = CliRunner(env={"GPUPRICES_DATA_DIR": str(data_dir), "DAGSTER_HOME": str(home),
                            "GPUPRICES_LOCK_WAIT": "0", "COLUMNS": "400"})
    result = runner.invoke(main, args, catch_exceptions=True)
    trace = ""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        trace = "".join(traceback.format_exception(result.exception))
    return Outcome(args, result.exit_code, result.output, trace)


def walk(cases: list[list[str]], data_dir: Path, home: Path) -> list[Outcome]:
    return [invoke(args, data_dir, home) for args in cases]


if __name__ == "__main__":
    spec = json.loads(sys.argv[1])
    os.chdir(spec["cwd"])
    for outcome in walk(spec["cases"], Path(spec["data_dir"]), Path(spec["home"])):
        print(json.dumps(asdict(outcome), ensure_ascii=False), flush=True)
