"""The `gpuprices` command group: the --data-dir option, and every command registered under its
name. Each command lives in a module of its own (pipelines/cli/<command>.py); this module imports
them, and none of them imports it.

Two commands are slow to import (the advisor's grammar, the simulator's pandas): they are
registered by import path and imported only when used, so `gpuprices --help` and the other
commands start fast."""

from __future__ import annotations

import importlib
import os
from functools import cached_property
from pathlib import Path

import click

from pipelines.cli.alerts import alerts_command
from pipelines.cli.check_sources import check_sources_command
from pipelines.cli.claims import claims_command
from pipelines.cli.export import export_command
from pipelines.cli.index import index_command
from pipelines.cli.options import DataDirPath
from pipelines.cli.prices import prices_command
from pipelines.cli.record import record_command
from pipelines.cli.reject import accept_command, reject_command
from pipelines.cli.report import report_command
from pipelines.cli.run import run_command
from pipelines.cli.signals import signals_command
from pipelines.cli.sources import sources_command
from pipelines.cli.ui import ui_command


class LazyCommand(click.Command):
    """A command imported when it is used. `gpuprices NAME ...` (its --help too) runs the real
    command, `module:attribute`; the group's help lists it by `summary`, the first paragraph of
    the real command's docstring (tests/cli/test_startup.py checks that they agree)."""

    def __init__(self, name: str, import_path: str, summary: str) -> None:
        super().__init__(name, help=summary)
        self.import_path = import_path

    @cached_property
    def command(self) -> click.Command:
        module, _, attribute = self.import_path.partition(":")
        return getattr(importlib.import_module(module), attribute)

    def make_context(self, info_name, args, parent=None, **extra) -> click.Context:
        return self.command.make_context(info_name, args, parent=parent, **extra)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--data-dir", type=DataDirPath(),
              help="Where prices.db, raw/ and feeds/ live "
                   "(default: ./data, or GPUPRICES_DATA_DIR).")
def main(data_dir: Path | None) -> None:
    """gpuprices: an honest, queryable history of GPU rental prices.

    \b
    Start with `gpuprices run` (or `make run`), then:
      gpuprices prices --card A100-80GB --region 北京      the latest prices
      gpuprices prices --region 内蒙古 --kind spot --format json
      gpuprices signals --card a100                       signals and the claims scorecard
      gpuprices claims                                    just the scorecard
      gpuprices index --card H100 --market world          the price index, per card
      gpuprices export --bom                              every mart to CSV/Parquet
      gpuprices ui                                        the Dagster UI on 127.0.0.1:3000

    Options take English or Chinese values (--region 北京 or Beijing, --period 月 or month).

    \b
    Exit codes:
      0  ok
      1  failed: the run failed (a step errored, named first; a blocking check failed; or every
         source failed), an output could not be written (not writable, read-only, no space),
         dg dev (the UI) failed, or the database is held open for writing
      2  usage error: unknown option or value (the message lists the known values), a number
         out of its range, an empty value, or an output path that is wrong or not ours
      3  no data: no published database yet (run `make run` first), or no rows matched
      4  partial: some sources failed, the others landed
      5  locked: another run held the data directory longer than GPUPRICES_LOCK_WAIT seconds
    """
    if data_dir:
        os.environ["GPUPRICES_DATA_DIR"] = str(data_dir.resolve())


for _name, _command in {
    "run": run_command, "reject": reject_command, "accept": accept_command,
    "sources": sources_command,
    "prices": prices_command, "signals": signals_command, "claims": claims_command,
    "export": export_command, "ui": ui_command, "report": report_command,
    "alerts": alerts_command, "check-sources": check_sources_command, "index": index_command,
    "record": record_command,
    "advise": LazyCommand("advise", "pipelines.cli.advise:advise_command",
                          "The cheapest configuration of today's offers that fits a workload."),
    "demo": LazyCommand("demo", "pipelines.cli.demo:demo_command",
                        "A simulated demo history and its report, in a directory of its own."),
    "simulate": LazyCommand("simulate", "pipelines.cli.simulate:simulate_command",
                            "Simulate months of hourly price history with known effects, in a "
                            "database of its own."),
    "backfill": LazyCommand("backfill", "pipelines.cli.backfill:backfill_command",
                            "Load real price history from a local clone of a public price "
                            "archive."),
}.items():
    main.add_command(_command, _name)
