"""`gpuprices demo`: a simulated, clearly labelled multi-month history in a data directory of its
own (default <data dir>/demo), published as <dir>/prices.db with its report, so a newcomer sees
the charts, dips and signals working before a real history exists. Built with the simulator
(pipelines/simulate) from the bundled offers; never touches the real prices.db."""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import click

from pipelines.cli.options import DataDirPath
from pipelines.cli.output import console
from pipelines.cli.output_paths import output_dir, refuse

DIP_PCT, DIP_DAYS = 8.0, 5           # a month-end dip at every source
DROP_PCT = 12.0                      # one source cuts its prices ...
DROP_AT_SHARE = 0.6                  # ... this far into the history
DROP_SOURCES = ("autodl_cn", "gpugeek_cn", "matpool_cn")   # the first one present, else the largest
EVERY_HOURS = 4                      # one crawl every 4 h: daily closes without hourly volume
WORK_DB = Path(".work") / "demo.db"  # the simulator's file; prices.db is its published copy


def months_back(day: date, months: int) -> date:
    """The same day `months` calendar months earlier (the 31st becomes the month's last day)."""
    year, month = divmod(day.month - 1 - months, 12)
    year, month = day.year + year, month + 1
    for last in (31, 30, 29, 28):
        try:
            return date(year, month, min(day.day, last))
        except ValueError:
            continue
    raise AssertionError("unreachable")


def is_demo(path: Path) -> bool:
    """Whether an existing database was simulated (it records its scenario in truth.scenario)."""
    import duckdb

    from pipelines.warehouse.sql_files import sql_text

    try:
        with duckdb.connect(str(path), read_only=True) as con:
            return bool(con.execute(sql_text(__file__, "is_simulated")).fetchone()[0])
    except duckdb.Error:
        return False


def demo_target(chosen: Path | None) -> Path:
    """The demo's directory: --data-dir, else <data dir>/demo; never the real data directory,
    never one whose prices.db holds real data."""
    from spiders.layout import data_dir, db_path, demo_dir

    real = data_dir()
    target = (chosen or demo_dir(real)).expanduser().resolve()
    if target == real:
        raise click.BadParameter(f"{target} is the real data directory; the demo needs a "
                                 "directory of its own (the default is <data dir>/demo)",
                                 param_hint="--data-dir")
    published = db_path(target)
    if published.exists() and not is_demo(published):
        raise click.BadParameter(f"{published} holds real (not simulated) data; pick another "
                                 "directory", param_hint="--data-dir")
    return target


@click.command("demo")
@click.option("--data-dir", "directory", type=DataDirPath(), default=None,
              help="The demo's own data directory [default: <data dir>/demo].")
@click.option("--months", type=click.IntRange(1, 24), default=3, show_default=True,
              help="Length of the simulated history in calendar months, ending today.")
def demo_command(directory: Path | None, months: int) -> None:
    """A simulated demo history and its report, in a directory of its own.

    The bundled offers are crawled offline, their prices simulated every 4 hours with a month-end
    dip at every source and one source's price drop, every SQL model built, and the result
    published as <dir>/prices.db, so every reading command works on it with --data-dir; the
    report (<dir>/report/index.html) says it is simulated. Then e.g.:

    \b
      gpuprices report --data-dir data/demo
      gpuprices --data-dir data/demo prices --card A100-80GB
      gpuprices --data-dir data/demo signals --card a100
    """
    import duckdb

    from pipelines.alerts.detect import detect_alerts
    from pipelines.alerts.rules import load_rules
    from pipelines.publish import publish_database
    from pipelines.report import build_report
    from pipelines.simulate import (
        MonthEndDip,
        PriceDrop,
        SimulationError,
        load_offers,
        run_models,
        simulate,
    )
    from pipelines.simulate.api import connect
    from spiders.layout import db_path, report_path

    clock = time.perf_counter()
    target = output_dir(demo_target(directory), "--data-dir")
    end = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    start_day = months_back(end.date(), months)
    start = datetime(start_day.year, start_day.month, start_day.day, tzinfo=UTC)
    days = (end - start).days
    console.print(f"demo: a SIMULATED {months}-month history in {target} "
                  f"({start:%Y-%m-%d} to {end:%Y-%m-%d}, a crawl every {EVERY_HOURS} h)")
    try:
        console.print("[1/4] crawling the bundled snapshots offline for their offers ...")
        offers = load_offers()
        present = set(offers["source"])
        dropped = next((s for s in DROP_SOURCES if s in present),
                       offers["source"].value_counts().idxmax())
        drop_at = start + timedelta(days=round(days * DROP_AT_SHARE))
        effects = [MonthEndDip(DIP_PCT, None, DIP_DAYS), PriceDrop(dropped, DROP_PCT, drop_at)]
        console.print(f"      {len(offers):,} offers of {len(present)} sources; effects: "
                      f"-{DIP_PCT:g} % in the last {DIP_DAYS} days of each month (every "
                      f"source), {dropped} -{DROP_PCT:g} % from {drop_at:%Y-%m-%d}")
        console.print("[2/4] simulating the observations ...")
        work = target / WORK_DB
        result = simulate(work, start=start, days=days, offers=offers, effects=effects,
                          every_hours=EVERY_HOURS, build_models=False)
        console.print(f"      {result.rows:,} observations in {result.seconds:.1f} s")
        console.print("[3/4] building the SQL models ...")
        t0 = time.perf_counter()
        con = connect(work)
        try:
            builds = run_models(con, full=True)
            # The alert rules over the whole history, nothing delivered: they wait in
            # alerts.outbox, where `gpuprices alerts --data-dir` lists them.
            detection = detect_alerts(con, load_rules())
            con.execute("checkpoint")
        finally:
            con.close()
        console.print(f"      {len(builds)} models in {time.perf_counter() - t0:.1f} s; alerts "
                      f"(not sent, in alerts.outbox): {alert_counts(detection)}")
        console.print("[4/4] publishing prices.db and writing the report ...")
        published = db_path(target)
        publish_database(work, published)
        work.unlink()                     # rebuilt whole by the next demo: no need to keep it
        with duckdb.connect(str(published), read_only=True) as con:
            report = build_report(con, report_path(target))
    except SimulationError as exc:
        raise click.ClickException(str(exc)) from exc
    except duckdb.Error as exc:
        raise click.ClickException(f"DuckDB: {exc}") from exc
    except OSError as exc:   # the disk filled up, or the directory changed, while writing
        raise refuse(target, exc, "--data-dir") from None
    console.print(f"database: {published} (simulated; the real one is untouched)")
    console.print(f"report:   {report.path} ({report.charts} charts)")
    console.print(f"try:      gpuprices report --data-dir {target}\n"
                  f"          gpuprices --data-dir {target} prices --card A100-80GB\n"
                  f"          gpuprices --data-dir {target} alerts")
    console.print(f"done in {time.perf_counter() - clock:.0f} s")


def alert_counts(detection) -> str:
    """"12 drop, 3 new_low, ..." for the rules that found any; "none" when none did."""
    found = [f"{count} {rule}" for rule, count in sorted(detection.found.items()) if count]
    return ", ".join(found) or "none"
