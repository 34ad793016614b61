"""`gpuprices`: run the pipeline, and read what it published.

Commands: `run` (one run of the job, with a live view of its steps and a summary), `sources`,
`reject`, `prices` (the latest price of every offer), `signals` (the latest day of each signal
mart and the market-claims scorecard), `claims` (just the scorecard), `export` (every mart to
CSV/Parquet files), `check-sources` (does each source's page still have the shape its spider
reads: pipelines/check_sources.py) and `ui` (the Dagster UI). The reading commands open the published database
`data/prices.db` read-only, never the pipeline's working copy, so they never block a run.

Exit codes, the same for every command, for scripts:
  0  ok
  1  failed: the run failed (a step errored, a blocking check failed, or every source failed:
     nothing new was published past it); `ui`: dagster dev failed; the reading commands: the
     database could not be opened (another process holds it open for writing)
  2  usage error: an unknown option or value (an unknown card, region, vendor, kind ...); the
     message lists the known values
  3  no data: there is no published database yet (run `make run` first), or the query matched no
     rows (like grep's 1: scripts can tell "nothing" from "broken"; csv/json output is still
     well-formed: a header row, `[]`)
  4  partial: `run` landed some sources and others failed
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from spiders.layout import REPO_ROOT, SNAPSHOT_DIR

console = Console(stderr=False, highlight=False)
EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE, EXIT_NO_DATA, EXIT_PARTIAL = 0, 1, 2, 3, 4


class NoData(click.ClickException):
    """Nothing to show: no published database yet, or no rows matched (exit code 3)."""

    exit_code = EXIT_NO_DATA


def _dagster_home() -> Path:
    home = Path(os.environ.get("DAGSTER_HOME") or REPO_ROOT / ".dagster_home").resolve()
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists():
        shutil.copy(REPO_ROOT / "dagster.yaml", home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    return home


def _norm(text: str) -> str:
    """Compare spellings loosely: full-width folded (NFKC), case-folded, spaces collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


class AliasChoice(click.Choice):
    """A choice among canonical values that also takes other spellings, Chinese ones included:
    `--period 月` is `--period month`. Help and error messages list the canonical values."""

    def __init__(self, aliases: dict[str, Sequence[str]]) -> None:
        super().__init__(list(aliases), case_sensitive=False)
        self.aliases = {_norm(alias): value for value, spellings in aliases.items()
                        for alias in (value, *spellings)}
        self.spellings = aliases

    def convert(self, value, param, ctx):
        if isinstance(value, str):
            value = self.aliases.get(_norm(value), value)
        return super().convert(value, param, ctx)

    def get_invalid_choice_message(self, value, ctx) -> str:
        other = "; ".join(f"{canonical}: {', '.join(spellings)}"
                          for canonical, spellings in self.spellings.items() if spellings)
        message = super().get_invalid_choice_message(value, ctx)
        return f"{message} (other spellings: {other})" if other else message


KINDS = AliasChoice({"on_demand": ("on-demand", "ondemand", "按需", "按量", "按量付费", "按需付费"),
                     "spot": ("preemptible", "竞价", "竞价实例", "抢占式", "抢占式实例", "可抢占"),
                     "reserved": ("预留", "预留实例")})
PERIODS = AliasChoice({"hour": ("h", "hr", "hourly", "时", "小时", "按时", "按小时"),
                       "day": ("d", "daily", "天", "日", "按天", "按日"),
                       "week": ("w", "weekly", "周", "按周"),
                       "month": ("mo", "monthly", "月", "包月", "按月"),
                       "year": ("y", "yr", "yearly", "annual", "年", "包年", "按年")})
SORTS = AliasChoice({"price": ("价格", "cheapest"), "vendor": ("厂商", "供应商", "vendors")})
FORMATS = AliasChoice({"table": ("表格",), "csv": (), "json": ()})
EXPORT_FORMATS = AliasChoice({"csv": (), "parquet": (), "both": ("all", "全部")})


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where prices.db, raw/ and feeds/ live (default: ./data, or GPUPRICES_DATA_DIR).")
def main(data_dir: Path | None) -> None:
    """gpuprices: an honest, queryable history of GPU rental prices.

    \b
    Start with `gpuprices run` (or `make run`), then:
      gpuprices prices --card A100-80GB --region 北京      the latest prices
      gpuprices prices --region 内蒙古 --kind spot --format json
      gpuprices signals --card a100                       signals and the claims scorecard
      gpuprices claims                                    just the scorecard
      gpuprices export --bom                              every mart to CSV/Parquet
      gpuprices ui                                        the Dagster UI on 127.0.0.1:3000

    Options take English or Chinese values (--region 北京 or Beijing, --period 月 or month).

    \b
    Exit codes:
      0  ok
      1  failed: the run failed (a step errored, a blocking check failed, or every source
         failed), dagster dev failed, or the database is held open for writing
      2  usage error: unknown option or value (the message lists the known values)
      3  no data: no published database yet (run `make run` first), or no rows matched
      4  partial: some sources failed, the others landed
    """
    if data_dir:
        os.environ["GPUPRICES_DATA_DIR"] = str(data_dir.resolve())


@main.command()
@click.option("--live", is_flag=True, help="Crawl the vendors' real sites instead of the bundled snapshots.")
@click.option("--from-raw", is_flag=True,
              help="Re-run from the raw archive (each source's latest archived crawl), no crawling.")
@click.option("--source", "sources", multiple=True, metavar="S",
              help="Only this source (repeatable); see `gpuprices sources`.")
def run(live: bool, from_raw: bool, sources: tuple[str, ...]) -> None:
    """Run the main job once: crawl, normalize, check, build models and feeds; print a summary.

    \b
    Exit codes: 0 every source landed; 4 some sources failed, the others landed;
    1 the run failed (nothing new was published past the failed step); 2 usage error.
    """
    if live and from_raw:
        raise click.UsageError("--live and --from-raw exclude each other")
    mode = "live" if live else "raw" if from_raw else "replay"
    os.environ["GPUPRICES_MODE"] = mode
    _dagster_home()
    import dagster as dg

    from pipelines.definitions import defs
    from spiders.layout import data_dir
    from spiders.registry import source_names

    unknown = sorted(set(sources) - set(source_names()))
    if unknown:
        raise click.BadParameter(f"unknown source(s) {', '.join(unknown)}; known: "
                                 f"{', '.join(source_names())}", param_hint="--source")
    job = defs.resolve_job_def("gpuprices_job")
    selection = None
    if sources:
        raw_keys = [dg.AssetKey(["raw", s]) for s in sources]
        downstream = dg.AssetSelection.assets(*raw_keys).downstream()
        # plus what those assets read that no crawl feeds (constant tables such as
        # intermediate.int_sign_test), but never another source's crawl
        selection = list((downstream | (downstream.upstream(depth=1)
                                        - dg.AssetSelection.key_prefixes(["raw"])))
                         .resolve(defs.resolve_asset_graph()))
    origin = {"live": "live vendor sites", "raw": "the raw archive (replay on 127.0.0.1)",
              "replay": "bundled snapshots (replay on 127.0.0.1)"}[mode]
    console.print(f"[bold]gpuprices run[/] over {origin}; data in {data_dir()}")
    instance = dg.DagsterInstance.get()
    run_id = str(uuid.uuid4())  # known before the run starts, so its events can be followed
    with StepProgress(instance, run_id, len(sources) or len(source_names()), data_dir()):
        result = job.execute_in_process(
            instance=instance, asset_selection=selection, raise_on_error=False, run_id=run_id,
            # failed steps are summarized below; Dagster's own log keeps the full traces
            run_config={"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}},
        )
    sys.exit(print_summary(result))


class StepProgress:
    """A live view of an in-process run: a spinner naming the running step, a bar over the run's
    steps and, while the crawl step runs, how many sources have finished.

    It listens to the run's events through `DagsterInstance.add_event_listener`: the in-process
    executor calls it from the run's own thread for every event the run stores. Display is a
    nicety: any error in it is swallowed, and the run goes on whatever the terminal is.
    """

    def __init__(self, instance, run_id: str, sources: int, data_dir: Path) -> None:
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn,
                                   TextColumn, TimeElapsedColumn)

        self.instance, self.run_id, self.sources = instance, run_id, sources
        # each crawl writes its monitor verdict here when it ends; crawl ids end in the run id's
        # first 8 characters (pipelines/defs/ingest.py)
        self.verdicts = data_dir / "raw" / "crawls"
        self.running: dict[str, float] = {}
        self.finished = 0
        # Dagster captures each step's stdout into its compute logs by redirecting file
        # descriptor 1 while the step runs; the display writes to a duplicate of the terminal's
        # descriptor, which the redirection does not touch.
        self._terminal = None
        display = console
        if console.is_terminal:
            self._terminal = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
            display = Console(file=self._terminal, force_terminal=True, width=console.width,
                              highlight=False)
        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(), console=display,
                                 transient=True)
        self.task = self.progress.add_task("starting the run", total=None)
        self._stop = threading.Event()
        self._poller = threading.Thread(target=self._poll, daemon=True, name="gpuprices-progress")

    def __enter__(self) -> StepProgress:
        if self._terminal is None:  # piped or captured: the summary alone, as before
            return self
        try:
            self.instance.add_event_listener(self.run_id, self)
        except Exception:  # an instance without listeners: the spinner alone still runs
            pass
        self.progress.start()
        self._poller.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._poller.is_alive():
            self._poller.join(timeout=5)
        self.progress.stop()
        if self._terminal is not None:
            self._terminal.close()

    def __call__(self, entry) -> None:
        try:
            self._on_event(entry)
        except Exception:
            pass

    def _on_event(self, entry) -> None:
        event = entry.dagster_event
        if event is None:
            return
        kind = event.event_type_value
        if kind == "PIPELINE_START":
            run = self.instance.get_run_by_id(self.run_id)
            plan = self.instance.get_execution_plan_snapshot(run.execution_plan_snapshot_id)
            self.progress.update(self.task, total=len(plan.steps))
        elif kind == "STEP_START":
            self.running[event.step_key] = entry.timestamp
        elif kind in ("STEP_SUCCESS", "STEP_FAILURE", "STEP_SKIPPED"):
            started = self.running.pop(event.step_key, entry.timestamp)
            self.finished += 1
            self.progress.update(self.task, completed=self.finished)
            if self._terminal is not None:  # a log of finished steps above the bar
                mark = {"STEP_SUCCESS": "[green]✓[/]", "STEP_FAILURE": "[red]✗[/]",
                        "STEP_SKIPPED": "[yellow]-[/]"}[kind]
                self.progress.console.print(f"  {mark} {_step_name(event.step_key)} "
                                            f"[dim]{entry.timestamp - started:.1f} s[/]")
        self._describe()

    def _describe(self) -> None:
        steps = [_step_name(key) for key in self.running]
        if "raw_offers" in self.running:
            done = len(list(self.verdicts.glob(f"*/*-{self.run_id[:8]}.json")))
            steps[steps.index("raw_offers")] = f"raw_offers: crawled {done}/{self.sources} sources"
        text = ", ".join(steps) if steps else ("…" if self.finished else "starting the run")
        self.progress.update(self.task, description=escape(text))

    def _poll(self) -> None:
        while not self._stop.wait(0.5):
            try:
                self._describe()
            except Exception:
                pass


def _step_name(step_key: str) -> str:
    """Dagster step keys join an asset key's parts with "__": marts__latest_prices."""
    return step_key.replace("__", "/")


def print_summary(result) -> int:
    import dagster as dg

    from pipelines.defs.ingest import CRAWL_CHECK
    from spiders.layout import data_dir, db_path
    from pipelines.resources import duckdb_from_env

    # The run's own connections used this configuration; DuckDB refuses a second, different one
    # to the same file within one process.
    with duckdb_from_env().get_connection() as con:
        crawls = con.execute("""
            select source, status, offers, coalesce(normalized_rows, 0),
                   coalesce(quarantined_rows, 0), failures, crawl_id
            from raw.crawls where run_id = ? order by source""", [result.run_id]).fetchall()
        reasons = con.execute("""
            select q.source, q.stage, q.reason, count(*) from quarantine q
            join raw.crawls c using (crawl_id) where c.run_id = ?
            group by all order by 1, 4 desc""", [result.run_id]).fetchall()
        total, offers = con.execute(
            "select count(*), count(distinct offer_id) from observations").fetchone()
        pending = con.execute("select source, crawl_id from raw.crawls where passed and "
                              "normalized_at is null order by 1, 2").fetchall()

    table = Table(title="sources")
    for column in ("source", "crawl", "collected", "normalized", "quarantined"):
        table.add_column(column, justify="right" if column not in ("source", "crawl") else "left")
    shown = {"passed": "[green]ok[/]", "failed": "[red]FAILED[/]", "skipped": "[yellow]skipped[/]",
             "rejected": "[yellow]rejected[/]"}
    for source, status, collected, normalized, quarantined, _, _ in crawls:
        table.add_row(source, shown[status], str(collected), str(normalized), str(quarantined))
    console.print(table)
    for source, status, *_, failures, _ in crawls:
        colour = "yellow" if status == "skipped" else "red"
        for failure in ([] if status == "passed" else failures):
            console.print(f"[{colour}]  {_text(source)}: {_text(failure)}[/]")
    for source, stage, reason, count in reasons:
        console.print(f"  quarantined {count} × {_text(source)} \\[{_text(stage)}]: {_text(reason)}")

    checks = result.get_asset_check_evaluations()
    failed_checks = [c for c in checks if not c.passed and c.severity == dg.AssetCheckSeverity.ERROR]
    warned = [c for c in checks if not c.passed and c.severity != dg.AssetCheckSeverity.ERROR]
    console.print(f"checks: {len(checks) - len(failed_checks) - len(warned)} passed, "
                  f"{len(failed_checks)} failed, {len(warned)} warned")
    for check in failed_checks:
        name = f"{check.asset_key.to_user_string()}:{check.check_name}"
        if check.check_name == CRAWL_CHECK:  # its reasons are listed under the sources above
            console.print(f"[red]  {name}[/]")
            continue
        console.print(f"[red]  {name}: {_text(check.description or '')}[/]")
        if check.metadata.get("failures"):
            failures = json.dumps(check.metadata["failures"].value, ensure_ascii=False)
            console.print("    " + _text(failures, 600))
    if failed_checks:
        console.print("[yellow]  the batch stays pending and is retried next run; to set a wrong "
                      "crawl aside: gpuprices reject <crawl_id> --reason '...'[/]")
        for source, crawl_id in pending:
            console.print(f"    pending: {source} {crawl_id}")
    console.print(f"observations: {total} rows, {offers} offers in {db_path()}")
    console.print(f"feeds: {data_dir() / 'feeds'}   raw archive: {data_dir() / 'raw'}")
    console.print("query: .venv/bin/duckdb -readonly " + str(db_path()) + "   (or: make sql)")
    if not result.success:
        for event in result.all_events:
            if event.is_step_failure:
                error = event.step_failure_data.error
                cause = error.cause or error
                console.print(f"[red]  step {event.step_key} failed: "
                              f"{_text(cause.message.strip().splitlines()[0])}[/]")
        console.print("[red bold]run failed[/]: nothing new was published past the failed step "
                      f"(Dagster run {result.run_id}; `make ui` shows its full log).")
        return EXIT_RUN_FAILED
    statuses = [status for _, status, *_ in crawls]
    if "failed" in statuses and "passed" not in statuses:
        console.print("[red bold]every source failed[/]: nothing new was collected")
        return EXIT_RUN_FAILED
    if "failed" in statuses:
        return EXIT_PARTIAL
    return EXIT_OK


@main.command()
@click.argument("crawl_ids", nargs=-1, required=True)
@click.option("--reason", required=True, help="Why the crawl is set aside (kept with it).")
def reject(crawl_ids: tuple[str, ...], reason: str) -> None:
    """Set aside pending crawls that a blocking check refused; their raw offers stay in raw.offers."""
    from pipelines.warehouse.db import ensure_schema, transaction
    from pipelines.resources import duckdb_from_env

    with duckdb_from_env().get_connection() as con:
        ensure_schema(con)
        with transaction(con):
            for crawl_id in crawl_ids:
                row = con.execute("select passed, normalized_at from raw.crawls where crawl_id = ?",
                                  [crawl_id]).fetchone()
                if row is None:
                    raise click.UsageError(f"no crawl {crawl_id!r} (see raw.crawls)")
                if not row[0] or row[1] is not None:
                    raise click.UsageError(f"crawl {crawl_id!r} is not pending: only a passing, "
                                           "unpublished crawl can be rejected")
                con.execute("""update raw.crawls set passed = false, status = 'rejected',
                               failures = list_append(failures, ?) where crawl_id = ?""",
                            [f"rejected: {reason}", crawl_id])
    console.print(f"rejected {len(crawl_ids)} crawl(s); the next run publishes without them")


def _source_facts() -> dict[str, dict]:
    """Per source, from the database when there is one: cards, kinds, periods, regions, last run."""
    import duckdb

    from spiders.layout import db_path

    if not db_path().exists():
        return {}
    with duckdb.connect(str(db_path()), read_only=True) as con:
        tables = {t for (t,) in con.execute("select table_name from information_schema.tables").fetchall()}
        if not {"crawls", "observations"} <= tables:
            return {}
        facts = {src: {"cards": cards, "kinds": kinds, "regions": regions}
                 for src, cards, kinds, regions in con.execute("""
            select source, string_agg(distinct gpu_model, ' ' order by gpu_model),
                   string_agg(distinct offer_kind || '/' || billing_period, ' '
                              order by offer_kind || '/' || billing_period),
                   count(distinct region_code)
            from observations group by source""").fetchall()}
        # databases written before the status column existed: derive it from `passed`
        has_status = con.execute("select count(*) from information_schema.columns where "
                                 "table_name = 'crawls' and column_name = 'status'").fetchone()[0]
        status_sql = "status" if has_status else "case when passed then 'passed' else 'failed' end"
        for src, status, finished, offers, failures in con.execute(f"""
            select source, {status_sql}, finished_at, offers, failures from raw.crawls
            qualify row_number() over (partition by source order by crawl_id desc) = 1""").fetchall():
            last = f"{status} {finished:%Y-%m-%d %H:%M} ({offers} offers)" if finished else status
            if status != "passed" and failures:
                last += f": {failures[0]}"
            facts.setdefault(src, {})["last_run"] = last
    return facts


@main.command()
def sources() -> None:
    """List the sources: vendor, kind, fetch style, cards, price kinds, regions, snapshot, last run."""
    from spiders.registry import source_names, spider_class

    facts = _source_facts()
    table = Table(title="sources", show_lines=True)
    for column in ("source", "vendor", "kind", "fetch", "cards", "kind/period", "regions",
                   "snapshot", "last run"):
        table.add_column(column, overflow="fold")
    for name in source_names():
        spider = spider_class(name)
        manifest = SNAPSHOT_DIR / name / "manifest.json"
        snapshot = "none"
        if manifest.exists():
            meta = json.loads(manifest.read_text(encoding="utf-8"))
            snapshot = f"{meta['captured_at'][:10]} {meta.get('provenance', '')}"
        seen = facts.get(name, {})
        table.add_row(name, spider.vendor, spider.vendor_kind, spider.describe_fetch(),
                      seen.get("cards", "-"),
                      seen.get("kinds", "-"), str(seen.get("regions", "-")), snapshot,
                      escape(seen.get("last_run", "never run")))
    console.print(table)



# ---------------------------------------------------------------------------------------------
# Reading the published database: prices, signals, claims, export
# ---------------------------------------------------------------------------------------------

@contextmanager
def published_db(*tables: str) -> Iterator:
    """A read-only connection to the published `data/prices.db` (never the working database, so
    a reader never blocks a run). No database, or one without `tables` yet: exit 3."""
    import duckdb

    from spiders.layout import db_path

    path = db_path()
    if not path.exists():
        raise NoData(f"no published database at {path} yet: run `make run` first "
                     "(or `gpuprices run`)")
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.IOException as exc:  # a session holds it for writing (`duckdb` without -readonly)
        raise click.ClickException(
            f"cannot open {path}: {str(exc).splitlines()[0]}. Close that session, or open the "
            "database with `duckdb -readonly` (`make sql` does), then retry") from None
    try:
        con.execute("set TimeZone = 'UTC'")
        present = {f"{s}.{t}" for s, t in con.execute(
            "select table_schema, table_name from information_schema.tables").fetchall()}
        missing = [t for t in tables if t not in present]
        if missing:
            raise NoData(f"{path} has no {', '.join(missing)} yet: run `make run` first "
                         "(or `gpuprices run`)")
        yield con
    finally:
        con.close()


def _records(con, sql: str, params: Sequence = ()) -> list[dict]:
    cursor = con.execute(sql, list(params))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


@dataclass
class Filter:
    """A user's --card/--region/--vendor read against the data: SQL predicates over
    marts.latest_prices, and a note of how each value was read (shown under the table)."""

    where: list[str] = field(default_factory=list)
    params: list = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, sql: str, params: Sequence, note: str | None = None) -> None:
        self.where.append(sql)
        self.params.extend(params)
        if note:
            self.notes.append(note)

    @property
    def sql(self) -> str:
        return " and ".join(self.where) or "true"


def _in(column: str, values: Sequence) -> str:
    return f"{column} in ({', '.join('?' for _ in values)})"


_FAMILY_TOKENS = re.compile(r"nvidia|geforce|tesla|rtx|[ah]\s*[18]00|4090\s*d|4090", re.I)
_MEMORY = re.compile(r"(?<![\d.])\d+(?:\.\d+)?\s*(?:gib|gb|g)(?![a-z.])", re.I)


def card_filter(text: str, found: Filter) -> list[str]:
    """--card: a canonical model (`A100-80GB`), any vendor spelling `parse_gpu` reads (`a100-80g`,
    `RTX 4090D`, `H100 NVL`), or a family alone (`A100`, `4090`: every model of the family).
    A slice (`A100 1/4`, `A100 80G MIG 2g.20gb`) also filters the fraction. Returns the models."""
    from spiders.parsing.gpu_models import (CANONICAL_MODELS, GpuParseError, gpu_family,
                                            parse_gpu)

    known = ", ".join(CANONICAL_MODELS)
    exact = {m.casefold().replace("-", ""): m for m in CANONICAL_MODELS}
    key = re.sub(r"[\s_-]+", "", _norm(text))
    if key in exact:
        models, fraction = [exact[key]], None
    else:
        try:
            spec = parse_gpu(text)
        except GpuParseError as exc:
            raise click.BadParameter(f"{exc}. Known cards: {known}, or a family: A100, H100, "
                                     "H800, 4090, 4090D", param_hint="--card") from None
        family = gpu_family(spec.gpu_model)
        rest = _FAMILY_TOKENS.sub(" ", unicodedata.normalize("NFKC", text))
        # "A100" alone names the family; memory ("a100 80g") or a variant that fixes the memory
        # ("H100 NVL" = 94 GB) names one model. parse_gpu would read "A100" as the 40 GB card.
        if _MEMORY.search(rest) or spec.gpu_model != parse_gpu(family).gpu_model:
            models = [spec.gpu_model]
        else:
            models = [m for m in CANONICAL_MODELS if gpu_family(m) == family]
        fraction = spec.gpu_fraction if spec.gpu_fraction < 1 else None
    note = f"card {text} → {', '.join(models)}"
    if fraction is not None:
        note += f" (slice {_fraction(fraction)})"
    found.add(_in("gpu_model", models), models, note)
    if fraction is not None:
        found.add("gpu_fraction = ?", [fraction])
    return models


def region_filter(con, text: str, found: Filter) -> None:
    """--region: a province or state (北京, Beijing, 内蒙古, Inner Mongolia, Virginia), a city
    (乌兰察布, Ulanqab), a country code (CN, US) or a vendor's region code (eastus, cn-beijing,
    内蒙B区). A place matches every vendor's offers there; a code matches that code only."""
    from spiders.parsing.regions import RegionParseError, province_aliases, resolve_region

    places = con.execute("""select distinct region_code, country, province_or_state, city
                            from marts.latest_prices""").fetchall()
    key = _norm(text)
    aliases = {_norm(alias): name for alias, name in province_aliases().items()}
    provinces = {_norm(p): p for _, _, p, _ in places if p}
    cities = {_norm(c): c for *_, c in places if c}
    countries = {_norm(c): c for _, c, _, _ in places}
    codes: dict[str, list[str]] = {}
    for code, *_ in places:
        codes.setdefault(_norm(code), []).append(code)

    def place(column: str, value: str, what: str) -> None:
        found.add(f"{column} = ?", [value], f"region {text} → {what} {value}")

    if key in aliases or key in provinces:
        return place("province_or_state", aliases.get(key) or provinces[key], "province/state")
    if key in cities:
        return place("city", cities[key], "city")
    if key in countries:
        return place("country", countries[key], "country")
    try:
        region = resolve_region(text)
    except RegionParseError:
        region = None
    # A Chinese city name ("乌兰察布") is a place, though an IDC may also use it as its code.
    if region and region.city and re.fullmatch(r"[\u4e00-\u9fff]+", text.strip()) \
            and not text.strip().endswith("区"):
        return place("city", region.city, "city")
    if key in codes:
        return found.add(_in("region_code", codes[key]), codes[key],
                         f"region {text} → region code {', '.join(codes[key])}")
    if region:  # other spellings of a place: 江苏省, 华北2（北京）, "Texas, US"
        if region.city:
            return place("city", region.city, "city")
        if region.province_or_state:
            return place("province_or_state", region.province_or_state, "province/state")
        return place("country", region.country, "country")
    chinese = {}
    for alias, name in province_aliases().items():
        if re.fullmatch(r"[\u4e00-\u9fff]+", alias):
            chinese.setdefault(name, alias)
    listed = ", ".join(f"{p} ({chinese[p]})" if p in chinese else p
                       for p in sorted(set(provinces.values())))
    raise click.BadParameter(
        f"unknown region {text!r}. Known provinces/states: {listed}; countries: "
        f"{', '.join(sorted(set(countries.values())))}; or one of {len(codes)} vendor region "
        "codes such as eastus, cn-beijing, 内蒙B区 (`gpuprices prices --format csv` lists them)",
        param_hint="--region")


def vendor_filter(con, text: str, found: Filter) -> None:
    """--vendor: part of a vendor's name or of a source name (`azure`, `阿里云`, `idc_`)."""
    pairs = con.execute("select distinct vendor, source from marts.latest_prices order by 1, 2"
                        ).fetchall()
    key = _norm(text)
    if not any(key in _norm(v) or key in _norm(s) for v, s in pairs):
        known = _CONTROL.sub("?", ", ".join(f"{v} ({s})" for v, s in pairs))
        raise click.BadParameter(f"no vendor or source matches {text!r}. Known: {known}",
                                 param_hint="--vendor")
    found.add("(strpos(lower(vendor), ?) > 0 or strpos(lower(source), ?) > 0)", [key, key],
              f"vendor {text}")


def signal_scope(con, found: Filter) -> tuple[list[str], list[str], list[str]]:
    """The models, region codes and region groups (province in China, country elsewhere, as in
    staging.stg_observations) of the offers the filter matches: how the signal marts, which have
    no province or city column, are filtered."""
    rows = con.execute(f"""
        select distinct gpu_model, region_code,
               case when country = 'CN' then coalesce(province_or_state, 'CN') else country end
        from marts.latest_prices where {found.sql}""", found.params).fetchall()
    return (sorted({r[0] for r in rows}), sorted({r[1] for r in rows}),
            sorted({r[2] for r in rows}))


# C0/C1 control characters and bidi overrides: scraped text must not drive the terminal.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _text(value, limit: int = 300) -> str:
    """Text from the data, for a rich table: control characters shown as "?" (a vendor's
    ESC [2J is displayed, never executed), [markup] escaped, cut to `limit` characters."""
    text = _CONTROL.sub("?", str(value))
    if len(text) > limit:
        text = text[:limit - 1] + "…"
    return escape(text)


def _fraction(value) -> str:
    if value is None:
        return ""
    share = Fraction(Decimal(value)).limit_denominator(64)
    if share.denominator == 1:
        return str(share.numerator)
    return f"{share.numerator}/{share.denominator}"


def _amount(value) -> str:
    """A listed amount as a person writes it: 62.00, 3.673, 11,800.00, 0.0035."""
    value = Decimal(value)
    text = f"{value:,.6f}".rstrip("0")
    whole, _, decimals = text.partition(".")
    return f"{whole}.{decimals.ljust(2, '0')}"


def _utc(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _plain(value, exact: bool = False):
    """A value for JSON (exact=False: decimals as numbers) or CSV (exact=True: as written)."""
    if isinstance(value, Decimal):
        return str(value) if exact else float(value)
    if isinstance(value, bool) and exact:
        return "true" if value else "false"   # as DuckDB writes the feeds
    if isinstance(value, datetime):
        return _utc(value)
    if isinstance(value, date):
        return value.isoformat()
    return value


def write_rows(rows: list[dict], columns: list[str], fmt: str) -> None:
    """csv or json to stdout, every column, for scripts (columns and timestamps as in the feeds)."""
    if fmt == "json":
        click.echo(json.dumps([{c: _plain(r[c]) for c in columns} for r in rows],
                              ensure_ascii=False, indent=2))
        return
    out = click.get_text_stream("stdout")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if row[c] is None else _plain(row[c], exact=True) for c in columns])
    out.flush()


CARD_HELP = "Card: A100-80GB, a100-80g, A100 (the family: 40 and 80 GB), 4090, 4090D, H100 NVL ..."
REGION_HELP = ("Province/state, city, country or vendor region code: 北京 or Beijing, 内蒙古 or "
               "'Inner Mongolia', 乌兰察布, US, eastus, cn-beijing ...")


@main.command()
@click.option("--card", metavar="CARD", help=CARD_HELP)
@click.option("--region", metavar="REGION", help=REGION_HELP)
@click.option("--kind", type=KINDS, help="Offer kind (also 按需, 竞价/抢占式, 预留).")
@click.option("--period", type=PERIODS,
              help="Billing period the price is listed for (also 时/小时, 天, 周, 月/包月, 年/包年).")
@click.option("--vendor", metavar="S", help="Part of a vendor or source name: azure, 阿里云, idc_.")
@click.option("--max-price", type=click.FloatRange(min=0, min_open=True), metavar="CNY",
              help="At most this many CNY per GPU-hour.")
@click.option("--limit", type=click.IntRange(min=0), metavar="N",
              help="At most N rows (default: 50 in a table, all in csv/json; 0 = all).")
@click.option("--sort", type=SORTS, default="price", show_default=True,
              help="Cheapest first (per GPU-hour, CNY), or by vendor.")
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True,
              help="A table for people; csv or json (every column of marts.latest_prices).")
def prices(card: str | None, region: str | None, kind: str | None, period: str | None,
           vendor: str | None, max_price: float | None, limit: int | None, sort: str,
           fmt: str) -> None:
    """The latest price of every offer (marts.latest_prices), filtered and sorted.

    \b
    Examples:
      gpuprices prices --card A100-80GB --region 北京 --period hour
      gpuprices prices --card 4090 --kind spot --max-price 5
      gpuprices prices --region 'Inner Mongolia' --period 月 --format csv > im.csv
      gpuprices prices --card a100 --format json | jq '.[0]'

    Exit codes: 0 rows shown; 2 unknown card/region/vendor/value; 3 no database yet or no rows
    matched.
    """
    with published_db("marts.latest_prices") as con:
        found = Filter()
        if card:
            card_filter(card, found)
        if region:
            region_filter(con, region, found)
        if vendor:
            vendor_filter(con, vendor, found)
        if kind:
            found.add("offer_kind = ?", [kind])
        if period:
            found.add("billing_period = ?", [period])
        if max_price is not None:
            found.add("price_per_gpu_hour_cny <= ?", [max_price])
        order = {"price": "price_per_gpu_hour_cny, vendor, gpu_model, region_code",
                 "vendor": "vendor, gpu_model, price_per_gpu_hour_cny, region_code"}[sort]
        cursor = con.execute(f"select * from marts.latest_prices where {found.sql} "
                             f"order by {order}, offer_id", found.params)
        columns = [d[0] for d in cursor.description]
        rows = [dict(zip(columns, row)) for row in cursor.fetchall()]
    shown = rows if limit == 0 else rows[:limit or (50 if fmt == "table" else None)]
    if fmt != "table":
        write_rows(shown, columns, fmt)
    else:
        _prices_table(shown, len(rows), sort, found)
    if not rows:
        raise NoData("no offers match " + (", ".join(found.notes) or "the filters")
                     + "; try fewer filters, or `gpuprices prices` for everything")


WIDE_COLUMNS = ("vendor", "region", "card", "fraction", "kind", "period", "listed price",
                "CNY/GPU-h", "USD/GPU-h", "available", "last seen (UTC)")
# Below this width the eleven columns no longer fit: vendor, region and card share one cell.
NARROW_COLUMNS = ("offer", "kind", "listed price", "CNY/GPU-h", "available")
WIDE_TABLE = 160


def _prices_table(rows: list[dict], total: int, sort: str, found: Filter) -> None:
    if not rows:
        return
    order = "cheapest first" if sort == "price" else "by vendor"
    title = f"latest prices: {total} offers, {order}"
    if len(rows) < total:
        title += f" (showing {len(rows)}; --limit 0 for all)"
    notes = list(found.notes)
    wide = console.width >= WIDE_TABLE
    if not wide:
        notes.append(f"a terminal of {WIDE_TABLE}+ columns (or --format csv) also shows "
                     "USD/GPU-h and last seen")
    columns = WIDE_COLUMNS if wide else NARROW_COLUMNS
    table = Table(title=title, caption=_text(" · ".join(notes)) or None,
                  caption_justify="left", box=box.SIMPLE_HEAD)
    for column in columns:
        numeric = column in ("fraction", "listed price", "CNY/GPU-h", "USD/GPU-h")
        table.add_column(column, justify="right" if numeric else
                         "center" if column == "available" else "left",
                         style="bold" if column == "CNY/GPU-h" else None,
                         min_width={"vendor": 14, "region": 16}.get(column),
                         no_wrap=column not in ("vendor", "region", "offer"))
    for r in rows:
        where = r["province_or_state"] or r["country"]
        if r["country"] not in ("CN", None) and r["province_or_state"]:
            where = f"{r['province_or_state']}, {r['country']}"
        region = r["region_code"] if _norm(r["region_code"]) == _norm(where) \
            else f"{r['region_code']} ({where})"
        card = r["gpu_model"] + (f" ×{r['gpu_count']}" if r["gpu_count"] > 1 else "")
        fraction = _fraction(r["gpu_fraction"])
        cells = {
            "vendor": _text(r["vendor"]), "region": _text(region), "card": card,
            "offer": f"{_text(r['vendor'])}\n[dim]{_text(region)}[/]\n{card}"
                     + ("" if fraction == "1" else f" [cyan]{fraction} slice[/]"),
            "fraction": fraction, "kind": r["offer_kind"], "period": r["billing_period"],
            "listed price": f"{_amount(r['price_amount'])} {r['currency']}/{r['billing_period']}",
            "CNY/GPU-h": f"{r['price_per_gpu_hour_cny']:,.2f}",
            "USD/GPU-h": f"{r['price_per_gpu_hour_usd']:,.3f}",
            "available": {True: "[green]yes[/]", False: "[red]no[/]"}.get(r["available"],
                                                                          "[dim]?[/]"),
            "last seen (UTC)": r["last_seen_at"].astimezone(UTC).strftime("%Y-%m-%d %H:%M")}
        table.add_row(*(cells[c] for c in columns))
    console.print(table)


@dataclass(frozen=True)
class SignalView:
    """How `gpuprices signals` shows one mart: its latest day, a few columns, sorted."""

    mart: str
    title: str
    columns: tuple[str, ...]
    order: str
    day: str = "day"


SIGNAL_VIEWS = (
    SignalView("slice_to_whole_ratio",
               "slice vs whole card (same vendor, region, card variant, kind, period)",
               ("vendor", "region_code", "gpu_model", "gpu_variant", "offer_kind",
                "billing_period", "gpu_fraction", "slice_vram_gb", "slice_price_cny_per_hour",
                "whole_price_cny_per_hour", "slice_to_whole_ratio", "per_gpu_premium"),
               "gpu_model, slice_to_whole_ratio"),
    SignalView("regional_discount", "regional discount, each vendor against its own price in "
               "tier-1 cities (CN) or the US, median across vendors",
               ("gpu_model", "offer_kind", "billing_period", "region_group", "vendors",
                "vendors_paired", "distinct_offers", "median_price_cny_per_gpu_hour",
                "reference_price_cny_per_gpu_hour", "ratio_low", "ratio_high", "discount_pct"),
               "discount_pct desc nulls last"),
    SignalView("spot_discount", "spot against on-demand of the same SKU (else the same line)",
               ("vendor", "region_code", "gpu_model", "gpu_count", "gpu_fraction",
                "billing_period", "spot_sku", "pairing", "on_demand_price_cny_per_gpu_hour",
                "spot_price_cny_per_gpu_hour", "spot_discount_pct"),
               "spot_discount_pct desc"),
    SignalView("monthly_vs_hourly_saving",
               "monthly package against paying hourly (same SKU, else the same line)",
               ("vendor", "region_code", "gpu_model", "gpu_fraction", "gpu_count", "offer_kind",
                "monthly_sku", "pairing", "hourly_price_cny_per_gpu_hour",
                "monthly_price_cny_per_gpu_hour", "saving_pct"),
               "saving_pct desc"),
    SignalView("multi_gpu_discount",
               "multi-GPU server against a single card (same variant, kind, period)",
               ("vendor", "region_code", "gpu_model", "gpu_variant", "offer_kind",
                "billing_period", "server_gpu_count", "server_sku", "server_price_cny_per_gpu_hour",
                "single_price_cny_per_gpu_hour", "server_to_single_ratio", "discount_pct"),
               "discount_pct desc"),
    # The group's test over its complete months sits on every month's row, so the latest
    # (usually unfinished) month still shows it.
    SignalView("month_end_dip", "month-end dip of the same offers below the line from mid-month "
               "to the next month's start (hourly, listed currency, sign test)",
               ("vendor", "region_code", "gpu_model", "gpu_variant", "offer_kind",
                "months_observed", "offer_months", "positive_offer_months", "p_value",
                "strength_pct", "depth_ci_low_pct", "depth_ci_high_pct", "median_recovery_pct",
                "dip_signal"),
               "dip_signal desc, p_value nulls last, strength_pct desc nulls last",
               day="month"),
)
# Short headers for the terminal; the marts' own column names are in README.md.
HEADERS = {"region_code": "region", "gpu_model": "card", "offer_kind": "kind",
           "gpu_variant": "variant", "vendors_paired": "paired", "distinct_offers": "offers",
           "ratio_low": "lowest ratio", "ratio_high": "highest ratio", "spot_sku": "spot SKU",
           "monthly_sku": "package SKU", "server_sku": "server SKU", "pairing": "paired by",
           "billing_period": "period", "gpu_fraction": "fraction", "slice_vram_gb": "slice GB",
           "slice_price_cny_per_hour": "slice CNY/h", "whole_price_cny_per_hour": "whole CNY/h",
           "slice_to_whole_ratio": "slice/whole", "per_gpu_premium": "premium/GPU",
           "region_group": "region", "median_price_cny_per_gpu_hour": "median CNY/GPU-h",
           "reference_price_cny_per_gpu_hour": "reference", "discount_pct": "discount %",
           "on_demand_price_cny_per_gpu_hour": "on-demand CNY/GPU-h",
           "spot_price_cny_per_gpu_hour": "spot CNY/GPU-h", "spot_discount_pct": "discount %",
           "gpu_count": "GPUs", "hourly_price_cny_per_gpu_hour": "hourly CNY/GPU-h",
           "monthly_price_cny_per_gpu_hour": "monthly CNY/GPU-h", "saving_pct": "saving %",
           "server_gpu_count": "GPUs", "server_price_cny_per_gpu_hour": "server CNY/GPU-h",
           "single_price_cny_per_gpu_hour": "single CNY/GPU-h",
           "server_to_single_ratio": "server/single", "dip_pct": "dip %",
           "gpu_variant": "variant", "months_observed": "months",
           "offer_months": "offer-months", "positive_offer_months": "below line",
           "p_value": "p", "strength_pct": "depth %", "depth_ci_low_pct": "CI low %",
           "depth_ci_high_pct": "CI high %", "median_recovery_pct": "recovery %",
           "dip_signal": "signal"}


def _cell(column: str, value) -> str:
    if value is None:
        return "[dim]–[/]"
    if isinstance(value, bool):
        colour = "green bold" if column == "dip_signal" and value else "dim"
        return f"[{colour}]{'yes' if value else 'no'}[/]"
    if column == "gpu_fraction":
        return _fraction(value)
    if column.endswith("_gb"):
        return f"{float(value):g}"
    if isinstance(value, (Decimal, float)):
        digits = 2 if column.endswith(("_pct", "_hour", "_gpu_hour")) else 3
        return f"{float(value):,.{digits}f}"
    return _text(value)


def _signal_table(con, view: SignalView, models: list[str] | None, codes: list[str] | None,
                  groups: list[str] | None, limit: int) -> Table | None:
    present = [c for (c,) in con.execute(
        "select column_name from information_schema.columns where table_schema = 'marts' "
        "and table_name = ? order by ordinal_position", [view.mart]).fetchall()]
    if not present:
        return None
    columns = [c for c in view.columns if c in present]
    where, params = [f"{view.day} = (select max({view.day}) from marts.{view.mart})"], []
    if models is not None and "gpu_model" in present:
        where.append(_in("gpu_model", models) if models else "false")
        params += models
    if codes is not None:   # region codes where the mart has them, else its region groups
        column, values = ("region_code", codes) if "region_code" in present \
            else ("region_group", groups)
        where.append(_in(column, values) if values else "false")
        params += values
    rows = _records(con, f"select {view.day}, {', '.join(columns)} from marts.{view.mart} "
                         f"where {' and '.join(where)} order by {view.order}", params)
    if not rows:
        return None
    latest = rows[0][view.day]
    title = f"{view.mart}: {view.title}, {latest:%Y-%m-%d}" if view.day == "day" \
        else f"{view.mart}: {view.title}, month of {latest:%Y-%m}"
    shown = rows if limit == 0 else rows[:limit]
    if len(shown) < len(rows):
        title += f" ({len(shown)} of {len(rows)}; --limit 0 for all)"
    table = Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD)
    for column in columns:
        numeric = column not in ("vendor", "region_code", "gpu_model", "offer_kind",
                                 "billing_period", "region_group", "dip_signal", "gpu_variant",
                                 "pairing", "spot_sku", "monthly_sku", "server_sku")
        table.add_column(HEADERS.get(column, column), justify="right" if numeric else "left")
    for row in shown:
        table.add_row(*(_cell(c, row[c]) for c in columns))
    return table


VERDICTS = {"holds": "[green bold]holds[/]", "does not hold": "[red bold]does not hold[/]",
            "inconclusive": "[yellow bold]inconclusive[/]",
            "not enough data": "[dim]not enough data[/]"}


def _number(value) -> str:
    if value is None:
        return "–"
    value = float(value)
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:,.1f}"


def claims_table(con) -> tuple[Table, list[dict]]:
    """The marts.market_claims scorecard: each claim, the median of its distinct offers with the
    interval of that median, the expected range, the evidence, the verdict in colour."""
    rows = _records(con, "select * from marts.market_claims")
    counts = {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
    table = Table(title="market claims (docs/market-claims.md) against the latest data",
                  show_lines=True, title_justify="left", title_style="bold",
                  caption=f"{counts['holds']} hold, {counts['does not hold']} do not hold, "
                          f"{counts['inconclusive']} inconclusive, "
                          f"{counts['not enough data']} without enough data; a verdict needs "
                          "5+ distinct offers and is read from the interval of the median",
                  caption_justify="left")
    table.add_column("claim", ratio=3)
    table.add_column("median", justify="right")
    table.add_column("interval", justify="right")
    table.add_column("expected", justify="right")
    table.add_column("offers", justify="right")
    table.add_column("verdict")
    for r in rows:
        low, high = r["expected_low"], r["expected_high"]
        expected = f"≥ {_number(low)}" if high is None else f"{_number(low)}–{_number(high)}"
        interval = ("–" if r["ci_low"] is None else
                    f"{_number(r['ci_low'])}–{_number(r['ci_high'])}\n"
                    f"[dim]{100 * r['ci_coverage']:.0f} %[/]")
        evidence = (f"{r['distinct_offers']} distinct\n[dim]{r['offers']} offers, "
                    f"{r['vendors']} vendors[/]")
        claim = f"{_text(r['claim'])}\n[dim]{_text(r['measure'])}; {_text(r['scope'])}[/]"
        if r["verdict"] == "not enough data" and r["reason"]:
            claim += f"\n[yellow]{_text(r['reason'])}[/]"
        table.add_row(claim, _number(r["median_value"]), interval, expected, evidence,
                      VERDICTS.get(r["verdict"], _text(r["verdict"])))
    return table, rows


@main.command()
@click.option("--card", metavar="CARD", help=CARD_HELP)
@click.option("--region", metavar="REGION", help=REGION_HELP)
@click.option("--limit", type=click.IntRange(min=0), default=10, show_default=True, metavar="N",
              help="Rows per signal table (0 = all).")
def signals(card: str | None, region: str | None, limit: int) -> None:
    """The signals on the latest day of each mart, then the market-claims scorecard.

    Slice vs whole card, regional discount, spot discount, monthly vs hourly saving, multi-GPU
    discount, month-end dip (latest month, with dip_signal). --card/--region narrow the signal
    tables (regional_discount by province in China, by country elsewhere); the scorecard always
    covers the whole market.

    \b
    Examples:
      gpuprices signals
      gpuprices signals --card A100-80GB --region 内蒙古

    Exit codes: 0 shown; 2 unknown card/region; 3 no database yet, or no signal rows match.
    """
    with published_db("marts.latest_prices", "marts.market_claims") as con:
        found, models, codes, groups = Filter(), None, None, None
        if card:
            card_filter(card, found)
        if region:
            region_filter(con, region, found)
        if card or region:
            in_scope, codes, groups = signal_scope(con, found)
            models = in_scope if card else None
            codes, groups = (codes, groups) if region else (None, None)
        tables = [t for view in SIGNAL_VIEWS
                  if (t := _signal_table(con, view, models, codes, groups, limit)) is not None]
        scorecard, _ = claims_table(con)
    if found.notes:
        console.print("[dim]" + _text(" · ".join(found.notes)) + "[/]")
    for table in tables:
        console.print(table)
    if not tables:
        console.print("[yellow]no signal rows" + (" for " + _text(", ".join(found.notes))
                                                  if found.notes else "") + "[/]")
    console.print(scorecard)
    if not tables:
        raise NoData("no signal rows match " + (", ".join(found.notes) or "yet")
                     + "; signals need comparable offers (a slice and its whole card, spot and "
                       "on-demand, ...) on the same day")


@main.command()
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True,
              help="A table for people; csv or json (every column of marts.market_claims).")
def claims(fmt: str) -> None:
    """The market-claims scorecard: does each rule of thumb of the GPU-rental guides hold?

    Each claim (docs/market-claims.md) is measured on the latest day of the mart it reads
    (marts.market_claims; the values behind it: marts.market_claim_evidence). The verdict is read
    from the 90 % interval of the median over distinct offers: holds (inside the expected range),
    does not hold (outside), inconclusive (overlapping), not enough data (under 5 offers).

    Exit codes: 0 shown; 3 no database yet, or no claims measured.
    """
    with published_db("marts.market_claims") as con:
        table, rows = claims_table(con)
        columns = [d[0] for d in con.execute("select * from marts.market_claims limit 0")
                   .description]
    if fmt == "table":
        if rows:
            console.print(table)
    else:
        write_rows(rows, columns, fmt)
    if not rows:
        raise NoData("marts.market_claims is empty: run `make run` first")


@main.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Directory to write to (default: <data dir>/export; created if missing).")
@click.option("--bom", is_flag=True,
              help="Start each CSV with a UTF-8 BOM, so Excel reads Chinese text right.")
@click.option("--format", "fmt", type=EXPORT_FORMATS, default="both", show_default=True,
              help="CSV, Parquet, or both.")
def export(out: Path | None, bom: bool, fmt: str) -> None:
    """Every mart of the published database to files: <mart>.csv and/or <mart>.parquet.

    CSV: UTF-8, a header row, ISO 8601 UTC timestamps (the same as data/feeds/). Each file is
    written to a temporary name and renamed into place, so a reader never sees half a file.

    \b
    Examples:
      gpuprices export --bom --format csv --out ~/gpu-prices
      gpuprices export --format parquet

    Exit codes: 0 written; 3 no database yet.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from pipelines.publish import publish_feed
    from spiders.layout import data_dir

    out = (out or data_dir() / "export").expanduser().resolve()
    kinds = ("csv", "parquet") if fmt == "both" else (fmt,)
    written: list[tuple[Path, int]] = []
    with published_db() as con:
        marts = [f"marts.{t}" for (t,) in con.execute(
            "select table_name from information_schema.tables where table_schema = 'marts' "
            "order by table_name").fetchall()]
        if not marts:
            raise NoData("the published database has no marts yet: run `make run` first")
        out.mkdir(parents=True, exist_ok=True)
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      console=console, transient=True) as progress:
            task = progress.add_task("exporting", total=len(marts))
            for table in marts:
                progress.update(task, description=f"exporting {table}")
                # publish_feed writes both formats; it writes into a scratch directory next to
                # `out` and only the asked-for files are moved over, each by an atomic rename
                with tempfile.TemporaryDirectory(dir=out, prefix=".export-") as scratch:
                    result = publish_feed(con, table, Path(scratch), bom)
                    for kind in kinds:
                        target = out / result[kind].name
                        os.replace(result[kind], target)
                        written.append((target, result["rows"]))
                progress.advance(task)
    listing = Table(title=f"exported {len(marts)} marts to {out}", title_justify="left")
    listing.add_column("file")
    listing.add_column("rows", justify="right")
    listing.add_column("size", justify="right")
    for path, rows in written:
        listing.add_row(escape(path.name), f"{rows:,}", f"{path.stat().st_size / 1024:,.1f} KiB")
    console.print(listing)
    if bom and "csv" in kinds:
        console.print("[dim]CSV files start with a UTF-8 BOM (for Excel)[/]")


# ---------------------------------------------------------------------------------------------
# The Dagster UI
# ---------------------------------------------------------------------------------------------

def _port_in_use(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def _reap_group(pgid: int, grace_seconds: float) -> None:
    """dagster dev's code server outlives it by up to its 45 s heartbeat: give the process group
    a few seconds to finish, then kill what is left, so that nothing holds the port or the files."""
    deadline = time.monotonic() + grace_seconds
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        if time.monotonic() >= deadline:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            return
        time.sleep(0.2)


@main.command()
@click.option("--port", type=click.IntRange(1, 65535), default=3000, show_default=True,
              help="Port on 127.0.0.1.")
def ui(port: int) -> None:
    """The Dagster UI: `dagster dev` on http://127.0.0.1:PORT; Ctrl-C stops it.

    DAGSTER_HOME is the project-local .dagster_home (created, with dagster.yaml, when missing),
    so run history and schedules persist. Runs started from the UI replay the snapshots unless
    GPUPRICES_MODE=live is set.

    Exit codes: 0 stopped by Ctrl-C / SIGTERM; 1 dagster dev failed; 2 the port is taken.
    """
    if _port_in_use(port):
        raise click.BadParameter(f"port {port} on 127.0.0.1 is in use; try --port {port + 1}",
                                 param_hint="--port")
    home = _dagster_home()
    dagster = Path(sys.executable).with_name("dagster")
    cmd = [str(dagster) if dagster.exists() else "dagster", "dev", "-m", "pipelines.definitions",
           "-h", "127.0.0.1", "-p", str(port)]
    console.print(f"Dagster UI on [bold]http://127.0.0.1:{port}[/] (DAGSTER_HOME={home}); "
                  "Ctrl-C stops it")
    stopping: list[int] = []
    children: list[subprocess.Popen] = []

    def forward(signum, _frame) -> None:
        stopping.append(signum)
        if children:
            try:
                # a second Ctrl-C does not wait for a graceful shutdown
                os.killpg(children[0].pid, signal.SIGKILL if len(stopping) > 1 else signum)
            except ProcessLookupError:
                pass

    # Installed before the child starts, so it begins with default handlers (a handler set here
    # reverts to the default across exec; an *ignored* SIGINT, as in a background job, would be
    # inherited and dagster dev could then not be stopped).
    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        # Its own process group: a terminal's Ctrl-C reaches only us, and we pass it on once to
        # dagster dev and the webserver, daemon and code server it starts, so they stop together.
        children.append(subprocess.Popen(cmd, cwd=REPO_ROOT, env=os.environ.copy(),
                                         process_group=0))
        if stopping:  # a signal came while it was starting
            os.killpg(children[0].pid, signal.SIGTERM)
        code = children[0].wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for child in children:
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
            _reap_group(child.pid, grace_seconds=10 if stopping else 0)
    if stopping:
        console.print("Dagster UI stopped")
        sys.exit(EXIT_OK)
    if code != 0:
        console.print(f"[red]dagster dev exited with code {code}[/]")
        sys.exit(EXIT_RUN_FAILED)


@main.command()
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Where to write the page (default: <data dir>/report/index.html).")
def report(out: Path | None) -> None:
    """Write the price-history report (one offline HTML page) from the published database.

    The hourly run writes it too; this rebuilds it on demand, e.g. after `gpuprices simulate`
    with --data-dir. Exit codes: 0 written; 3 no database yet."""
    from pipelines.report import build_report
    from spiders.layout import data_dir

    target = out or data_dir() / "report" / "index.html"
    with published_db("marts.market_claims") as con:
        result = build_report(con, target)
    console.print(f"report: {result.path} ({result.bytes / 1e6:.1f} MB, {result.charts} charts, "
                  f"{result.tables} tables)")


@main.command()
@click.option("--status", type=click.Choice(["pending", "sent", "failed", "all"]), default="all",
              show_default=True, help="Only alerts in this delivery state.")
@click.option("--limit", type=click.IntRange(1), default=20, show_default=True)
def alerts(status: str, limit: int) -> None:
    """The latest alerts of the outbox (as of the last published run): rule, title, delivery.

    Alerts are detected and delivered by the run itself (rules: pipelines/alerts.toml; channels:
    GPUPRICES_NOTIFY_URLS). Exit codes: 0 listed; 3 no database or no alerts yet."""
    with published_db("alerts.outbox") as con:
        rows = _records(con, f"""select created_at, rule, title, status, attempts, last_error
            from alerts.outbox {"" if status == "all" else "where status = ?"}
            order by created_at desc limit {limit}""", [] if status == "all" else [status])
    if not rows:
        raise NoData(f"no {'' if status == 'all' else status + ' '}alerts yet")
    table = Table(title="alerts")
    for column in ("created", "rule", "title", "status", "attempts", "last error"):
        table.add_column(column, overflow="fold")
    for r in rows:
        table.add_row(f"{r['created_at']:%Y-%m-%d %H:%M}", r["rule"], _text(r["title"]),
                      r["status"], str(r["attempts"]), _text(r["last_error"] or ""))
    console.print(table)


# Commands other modules provide, registered when they are there.
try:
    from pipelines.tools.simulate import simulate_command
except ModuleNotFoundError as exc:  # not written yet; any other import error is a real bug
    if exc.name != "pipelines.tools.simulate":
        raise
else:
    main.add_command(simulate_command, "simulate")

from pipelines.cli.advise import advise_command  # noqa: E402  (registered after the group exists)

main.add_command(advise_command, "advise")

# Its module imports Scrapy only when the command runs, so `gpuprices --help` stays fast.
from pipelines.check_sources import check_sources_command  # noqa: E402

main.add_command(check_sources_command, "check-sources")


if __name__ == "__main__":
    main()
