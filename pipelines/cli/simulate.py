"""`gpuprices simulate`: the command line over the simulator's API."""

from __future__ import annotations

import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import click
import duckdb

from pipelines.cli.demo import is_demo
from pipelines.cli.options import TEXT, NonEmptyPath
from pipelines.cli.output_paths import output_file, refuse
from pipelines.simulate.api import (
    ModelBuild,
    SimulationError,
    check_target,
    connect,
    months_to_days,
    run_models,
    simulate,
)
from pipelines.simulate.common import DEFAULT_DB_NAME, NOISE_PCT
from pipelines.simulate.effects import (
    Effect,
    FxMove,
    MonthEndChurn,
    MonthEndDip,
    PriceDrop,
    Trend,
    split_names,
)
from pipelines.simulate.offers import load_offers
from pipelines.simulate.structure import CLI_FLAGS

# Bounds of the options: what a laptop writes in minutes, not hours (a month of hourly crawls of
# the bundled offers is about 650,000 rows; --months 10000 once wrote 763 MB a minute, unbounded).
MAX_MONTHS = 36
MAX_DAYS = 1100                # about 36 months
MAX_EVERY_HOURS = 24 * 31      # one crawl a month
MAX_SCALE = 100
MAX_SEED = 2**32 - 1           # numpy's seed sequence takes any, a 32-bit one is plenty


def _default_start(months: int) -> date:
    today = datetime.now(UTC).date()
    year, month = divmod(today.month - 1 - months, 12)
    return date(today.year + year, month + 1, 1)


# The effect options: the command's parameter name -> the parser of one spec (in this order).
# The structural effects' options are structure.CLI_FLAGS (parameter: the flag's name, e.g.
# --regional-gap -> regional_gap).
EFFECT_PARSERS: dict[str, Callable[[str], Effect]] = {
    "dips": MonthEndDip.parse,
    **{_flag.flag.lstrip("-").replace("-", "_"): _flag.effect.parse for _flag in CLI_FLAGS},
    "drops": PriceDrop.parse, "trends": Trend.parse, "churns": MonthEndChurn.parse,
    "fx_moves": FxMove.parse,
}


def _parse_effects(specs: Mapping[str, Sequence[str]], dip_availability: bool) -> list[Effect]:
    """Every effect option's specs parsed, in EFFECT_PARSERS order."""
    effects: list[Effect] = []
    try:
        for name, parse in EFFECT_PARSERS.items():
            for spec in specs.get(name, ()):
                effects.append(MonthEndDip.parse(spec, dip_availability) if name == "dips"
                               else parse(spec))
    except SimulationError as exc:
        raise click.BadParameter(str(exc)) from exc
    if dip_availability and not specs.get("dips"):
        raise click.BadParameter("--dip-availability needs a --dip")
    return effects


# The dated effects, by the option that sets them: one dated before the history, or at or after
# its end, would change nothing the history shows (or every row alike), so it is refused.
DATED_EFFECT_FLAGS = {PriceDrop: "--drop", FxMove: "--fx-move"}


def _refuse_effects_outside(effects: Sequence[Effect], start: datetime, days: int) -> None:
    """A usage error naming the window when a dated effect falls outside [start, start + days)."""
    end = start + timedelta(days=days)
    for effect in effects:
        flag = DATED_EFFECT_FLAGS.get(type(effect))
        if flag and not start < effect.at < end:
            raise click.UsageError(
                f"{flag} at {effect.at:%Y-%m-%dT%H:%M}Z is outside the simulated history "
                f"{start:%Y-%m-%dT%H:%M}Z to {end:%Y-%m-%dT%H:%M}Z ({days} days): move it inside, "
                "or change --start, --days or --months")


def _who(sources: Sequence[str] | None) -> str:
    return ", ".join(sources) if sources else "every source"


def _describe(effect: Effect) -> str:
    if isinstance(effect, MonthEndDip):
        extra = ", every stated offer in stock" if effect.availability else ""
        return (f"month-end dip: -{effect.size_pct:g} % over the last {effect.days} local days "
                f"({_who(effect.sources)}{extra})")
    if isinstance(effect, Trend):
        return (f"trend: {effect.pct_per_30_days:+g} % per 30 days, compounding hourly "
                f"({_who(effect.sources)})")
    if isinstance(effect, MonthEndChurn):
        what = "vanish" if effect.mode == "vanish" else "appear (#month-end clones)"
        return (f"month-end churn: {effect.share:.0%} of the offers {what} in the last "
                f"{effect.days} local days ({_who(effect.sources)})")
    if isinstance(effect, FxMove):
        return (f"exchange-rate move: 1 {effect.currency} worth {effect.pct:+g} % CNY from "
                f"{effect.at.isoformat()}")
    if isinstance(effect, PriceDrop):
        return f"price drop: {effect.source} -{effect.pct:g} % from {effect.at.isoformat()}"
    return effect.describe()          # the structural effects describe themselves


def _structure_options(command):
    """One repeatable option per structural effect (structure.CLI_FLAGS)."""
    for flag in reversed(CLI_FLAGS):
        command = click.option(flag.flag, flag.flag.lstrip("-").replace("-", "_"), type=TEXT,
                               multiple=True,
                               metavar=flag.metavar, help=f"{flag.help} (repeatable)")(command)
    return command


SIMULATE_EPILOG = """\b
Examples:
  gpuprices simulate --months 3 --dip 8:gpugeek_cn,idc_ulanqab:5
  gpuprices simulate --start 2026-06-01 --days 60 --regional-gap "Inner Mongolia:25"
  gpuprices simulate --drop gpugeek_cn:10:2026-07-15T12:00 --every-hours 3
  gpuprices simulate --trend -9:gpugeek_cn --churn vanish:idc_ulanqab --fx-move USD:5:2026-07-10
  gpuprices simulate --offers-from data/prices.db --scale 3 --months 12 --no-models
\b
Effects (repeatable; none by default):
  --dip SIZE_PCT[:SOURCES][:DAYS]  prices of SOURCES (comma-separated; all if empty) are SIZE_PCT %
                                   lower in the last DAYS (default 5) days of every month of the
                                   vendor's calendar (Beijing time for Chinese vendors, else UTC)
  --drop SOURCE:PCT:ISO_TIME       from ISO_TIME (UTC) on, SOURCE's prices are PCT % lower
  --trend PCT[:SOURCES]            prices change PCT % per 30 days from the start, compounding
                                   hourly (-9: a steady decline of about 1.5 % per 5 days)
  --churn MODE[:SOURCES][:DAYS][:SHARE]
                                   vanish: SHARE (0.5) of the offers are not listed in the last
                                   DAYS (5) local days of each month; appear: clones of SHARE of
                                   them (#month-end) are listed only then; prices do not move
  --fx-move CCY:PCT:ISO_TIME       from ISO_TIME on, 1 CCY is worth PCT % more CNY: listed amounts
                                   stay, CNY (and, but for USD, USD) prices per GPU-hour move
{structural}
\b
Every injected effect is recorded in the database: truth.scenario (the run and its effects) and
truth.offer_effects (one row per effect and affected offer).
\b
The simulated database is separate from the real one: a file named prices.db is refused, and an
existing simulated database at --db is replaced. See docs/simulator.md.
"""


def _structural_help() -> str:
    lines = ["\b", "Structural effects (prices set once, before the first hour):"]
    for flag in CLI_FLAGS:
        lines.append(f"  {flag.flag} {flag.metavar}")
        lines += [f"      {line}" for line in textwrap.wrap(flag.help, 88)]
    return "\n".join(lines)


SIMULATE_EPILOG = SIMULATE_EPILOG.format(structural=_structural_help())


@click.command("simulate", epilog=SIMULATE_EPILOG,
               context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--db", "db", type=NonEmptyPath(dir_okay=False, path_type=Path), default=None,
              help="The simulated DuckDB file to (re)create [default: <data dir>/simulated.db]. "
                   "Never prices.db.")
@click.option("--start", type=click.DateTime(["%Y-%m-%d", "%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S"]),
              default=None, metavar="DATE",
              help="First simulated hour, UTC: 2026-06-01 or 2026-06-01T06:00 [default: the 1st "
                   "of the month --months before the current one: the history ends where the "
                   "current month starts].")
@click.option("--months", type=click.IntRange(1, MAX_MONTHS), default=3, show_default=True,
              help="Length of the history in calendar months.")
@click.option("--days", type=click.IntRange(1, MAX_DAYS), default=None,
              help="Length of the history in days (overrides --months).")
@click.option("--every-hours", type=click.IntRange(1, MAX_EVERY_HOURS), default=1,
              show_default=True,
              help="One crawl of every source every K hours.")
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=0, show_default=True,
              help="Seed of the noise: the same seed writes the same table.")
@click.option("--sources", type=TEXT, default=None, metavar="A,B",
              help="Only the offers of these sources (comma-separated) [default: all].")
@click.option("--scale", type=click.IntRange(1, MAX_SCALE), default=1, show_default=True,
              help="Clone every offer into N offers (sku/offer_id suffixed #k) for volume.")
@click.option("--offers-from", type=NonEmptyPath(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Start from the latest offers of this database "
                                 "(marts.latest_prices, opened read-only) instead of crawling the "
                                 "bundled snapshots.")
@click.option("--noise", "noise_pct", type=click.FloatRange(0, 20), default=NOISE_PCT,
              show_default=True, help="Bound of the slow random walk of each price, +/- %.")
@click.option("--dip", "dips", type=TEXT, multiple=True, metavar="SIZE[:SOURCES][:DAYS]",
              help="Month-end dip (repeatable), e.g. 8:gpugeek_cn,idc_ulanqab:5.")
@click.option("--dip-availability", is_flag=True,
              help="During a dip, every offer that states its stock is in stock.")
@click.option("--drop", "drops", type=TEXT, multiple=True, metavar="SOURCE:PCT:ISO_TIME",
              help="Price drop (repeatable), e.g. gpugeek_cn:10:2026-07-15T12:00.")
@click.option("--trend", "trends", type=TEXT, multiple=True, metavar="PCT[:SOURCES]",
              help="Steady trend, % per 30 days (repeatable), e.g. -9:gpugeek_cn.")
@click.option("--churn", "churns", type=TEXT, multiple=True,
              metavar="vanish|appear[:SOURCES][:DAYS][:SHARE]",
              help="Month-end listing churn (repeatable), e.g. vanish:idc_ulanqab:5:0.5.")
@click.option("--fx-move", "fx_moves", type=TEXT, multiple=True, metavar="CCY:PCT:ISO_TIME",
              help="Exchange-rate move (repeatable), e.g. USD:5:2026-07-10T00:00.")
@click.option("--no-models", is_flag=True, help="Write the observations only; build no SQL model.")
@_structure_options
def simulate_command(db: Path | None, start: datetime | None, months: int, days: int | None,
                     every_hours: int, seed: int, sources: str | None, scale: int,
                     offers_from: Path | None, noise_pct: float, dip_availability: bool,
                     no_models: bool, **effect_specs: tuple[str, ...]) -> None:
    """Simulate months of hourly price history with known effects, in a database of its own.

    The offers are real (the bundled snapshots, crawled offline and normalized, or --offers-from a
    database); each price follows its real value with small seeded noise, stock flips now and
    then, and the effects you switch on are injected exactly. Then every SQL model is built on the
    simulated history, so each signal can be checked against the truth you injected.
    """
    from rich.markup import escape
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.table import Table

    from pipelines.cli.output import make_console
    from pipelines.warehouse.sql_models import SqlModelError
    from spiders.layout import data_dir

    console = make_console()
    path = db or data_dir() / DEFAULT_DB_NAME
    try:
        check_target(path)
    except SimulationError as exc:
        raise click.BadParameter(str(exc), param_hint="--db") from exc
    # a directory, a device, an unwritable place or a file that is not a simulated database is
    # refused before the offers are crawled (and never replaced: there is no --force for it)
    path = output_file(path, "--db" if db else "--data-dir", force=False, is_own=is_demo,
                       kind="simulated database", force_option=None)
    effects = _parse_effects(effect_specs, dip_availability)
    start_day = start.date() if start else _default_start(months)
    start_dt = start.replace(tzinfo=UTC) if start else datetime(start_day.year, start_day.month,
                                                                start_day.day, tzinfo=UTC)
    n_days = days or months_to_days(start_day, months)
    _refuse_effects_outside(effects, start_dt, n_days)
    wanted = list(split_names(sources)) if sources else None
    clock = time.perf_counter()
    try:
        if offers_from:
            console.print(f"offers: latest prices of {offers_from}")
            offers = load_offers(offers_from=offers_from, sources=wanted, scale=scale, seed=seed)
        else:
            console.print("offers: crawling the bundled snapshots offline (replay) ...")

            def on_source(source: str, status: str, n: int) -> None:
                mark = "[green]ok[/]" if status == "passed" else f"[red]{escape(status)}[/]"
                console.print(f"  {source:<15} {mark} {n} offers")

            offers = load_offers(sources=wanted, scale=scale, seed=seed, on_source=on_source)
        with Progress(TextColumn("writing observations"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("rows"), TimeRemainingColumn(), console=console,
                      transient=True) as bar:
            task = bar.add_task("rows", total=None)

            tenths_said = [0]

            def progress(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)
                # the bar draws only on a terminal; a log or a pipe gets a line per tenth
                tenths = done * 10 // total if total else 0
                if not console.is_terminal and tenths > tenths_said[0]:
                    tenths_said[0] = tenths
                    console.print(f"  writing observations: {done:,} of {total:,} rows "
                                  f"({tenths * 10} %)")

            result = simulate(path, start=start_dt, days=n_days, offers=offers, effects=effects,
                              seed=seed, every_hours=every_hours, build_models=False,
                              noise_pct=noise_pct, progress=progress)
        console.print(f"wrote {result.rows:,} observations of {result.offers:,} offers in "
                      f"{result.seconds:.1f} s ({result.rows_per_second:,.0f} rows/s)")
        builds: list[ModelBuild] = []
        models_seconds = 0.0
        if not no_models:
            with console.status("building the SQL models ..."):
                t0 = time.perf_counter()
                con = connect(result.db_path)
                try:
                    builds = run_models(con, full=True)
                    con.execute("checkpoint")
                except (SqlModelError, duckdb.Error) as exc:
                    raise SimulationError(f"the observations are in {result.db_path}, but "
                                          f"building the SQL models failed: {exc}") from exc
                finally:
                    con.close()
                models_seconds = time.perf_counter() - t0
    except SimulationError as exc:
        raise click.ClickException(str(exc)) from exc
    except duckdb.Error as exc:
        raise click.ClickException(f"DuckDB: {exc}") from exc
    except OSError as exc:   # the disk filled up while writing
        raise refuse(path, exc, "--db" if db else "--data-dir") from None

    table = Table(title="gpuprices simulate", show_header=False, title_justify="left")
    table.add_row("database", str(result.db_path))
    table.add_row("period", f"{result.start:%Y-%m-%d %H:%M} to {result.end:%Y-%m-%d %H:%M} UTC "
                            f"({n_days} days, a crawl every {every_hours} h)")
    table.add_row("offers", f"{result.offers:,} ({len(set(offers['source']))} sources, "
                            f"scale {scale}, seed {seed}, noise +/-{noise_pct:g} %)")
    table.add_row("rows written", f"{result.rows:,} observations, {result.crawls:,} crawls")
    table.add_row("write speed", f"{result.rows_per_second:,.0f} rows/s ({result.seconds:.1f} s)")
    table.add_row("effects", "\n".join(_describe(e) for e in effects) or "none")
    table.add_row("truth", f"{result.truth_rows:,} rows in truth.offer_effects, the scenario in "
                           "truth.scenario")
    for note in result.notes:
        table.add_row("", f"[yellow]{note}[/]")
    table.add_row("models", f"{len(builds)} built in {models_seconds:.1f} s" if builds
                  else "not built (--no-models)")
    table.add_row("total time", f"{time.perf_counter() - clock:.1f} s")
    console.print(table)
