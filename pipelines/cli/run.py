"""`gpuprices run`: one run of the Dagster job in this process (crawl, normalize, check, build the
models and feeds), with a live view of its steps and a summary; the exit code says how it went."""

from __future__ import annotations

import gc
import os
import sys
import uuid

import click

from pipelines.cli.dagster_home import dagster_home
from pipelines.cli.options import TEXT
from pipelines.cli.output import console
from pipelines.cli.record_progress import load_record_before_run
from pipelines.cli.run_progress import StepProgress
from pipelines.cli.run_summary import print_summary
from pipelines.display import terminal_text

ORIGINS = {"live": "live vendor sites", "raw": "the raw archive (replay on 127.0.0.1)",
           "replay": "bundled snapshots (replay on 127.0.0.1)"}


@click.command("run")
@click.option("--live", is_flag=True,
              help="Crawl the vendors' real sites instead of the bundled snapshots.")
@click.option("--from-raw", is_flag=True,
              help="Re-run from the raw archive (each source's latest archived crawl), "
                   "no crawling.")
@click.option("--source", "sources", type=TEXT, multiple=True, metavar="S",
              help="Only this source (repeatable), opted in: an opt-in source named here is "
                   "crawled; see `gpuprices sources`.")
@click.option("--no-record", is_flag=True,
              help="Do not load the public price record (data/records/) first; also "
                   "GPUPRICES_RECORD=off.")
def run_command(live: bool, from_raw: bool, sources: tuple[str, ...], no_record: bool) -> None:
    """Run the main job once: crawl, normalize, check, build models and feeds; print a summary.

    First it loads the versions of the public price record (data/records/: dated public
    prices, years of them) that the database lacks, as archive observations: the first run
    loads them all, a later one nothing (`gpuprices record` shows what the record holds).

    \b
    The default run crawls every source but the opt-in ones (`gpuprices sources` says which
    and why: a template with no real operator, a guessed endpoint, illustrative prices), and no
    page shows a modeled price it was not asked for. Opt in by naming a source (--source S), or
    for every run, scheduled ones too, with GPUPRICES_OPT_IN=S1,S2 (or `all`). A source not
    opted in is skipped with its reason: a warning, not a failure.

    \b
    Exit codes: 0 every source landed (an opt-in source not named counts as not selected;
    a source whose crawl a blocking rule held back is a warning: `gpuprices sources` and the
    summary say why and how it settles); 4 some sources failed, the others landed;
    1 the run failed: a step failed (named first; prices.db and the feeds are published all the
    same when only the report, the alerts or the advice failed), or every source failed
    (nothing is republished); 2 usage error; 5 another run held the data directory longer
    than GPUPRICES_LOCK_WAIT (seconds, default 1800; 0: do not wait): nothing was done. One run
    per data directory at a time.
    """
    if live and from_raw:
        raise click.UsageError("--live and --from-raw exclude each other")
    mode = "live" if live else "raw" if from_raw else "replay"
    os.environ["GPUPRICES_MODE"] = mode
    gc.disable()   # until the run starts: see start_collecting
    start_gx_worker()
    dagster_home()
    refuse_unusable_data_dir()
    hold_run_lock(f"gpuprices run ({mode})")
    refuse_unless_ready_to_write()
    # Dagster and Scrapy load here, when a run starts, not with `gpuprices --help`.
    from spiders.registry import source_names

    unknown = sorted(set(sources) - set(source_names()))
    if unknown:
        raise click.BadParameter(f"unknown source(s) {', '.join(unknown)}; known: "
                                 f"{', '.join(source_names())}", param_hint="--source")
    opt_in_named(sources)
    run_id = str(uuid.uuid4())  # known before the run starts, so its events can be followed
    crawl_before_the_run(run_id, sources)
    import dagster as dg

    from pipelines.definitions import defs
    from pipelines.resources import hold_working_database
    from spiders.layout import data_dir

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
    console.print(f"[bold]gpuprices run[/] over {ORIGINS[mode]}; data in {data_dir()}"
                  + (f" ({job.executor_def.name} executor)"
                     if job.executor_def.name != "in_process" else ""))
    load_record_before_run(no_record)
    instance = dg.DagsterInstance.get()
    start_collecting()
    with StepProgress(instance, run_id, len(sources) or len(source_names()), data_dir()):
        if job.executor_def.name == "in_process":
            with hold_working_database():
                result = execute_in_this_process(job, instance, run_id, selection)
        else:
            result = execute_out_of_process(instance, run_id, selection)
    code = print_summary(result)
    skip_the_last_collection()
    sys.exit(code)


def start_collecting() -> None:
    """The start-up ran without the cyclic garbage collector: importing Dagster, the code location
    and their packages makes ~430,000 objects that live as long as the process, and each full
    collection on the way walked them all again (15-20% of the start-up's CPU; what it would have
    freed is ~17,000 objects, a few MB). From the run on, what the start-up made is frozen (left
    out of every collection) and collections go on as usual for what the steps make."""
    gc.freeze()
    gc.enable()


def skip_the_last_collection() -> None:
    """The run is over: what it loaded (Dagster, GX, plotly, pandas: millions of objects) needs
    no garbage collection when the interpreter exits, which spent 1-5 s of the command walking
    them after the summary was printed. Frozen objects are left out of every collection; exit
    handlers, thread joins, the run lock's release and closing connections all happen as before."""
    gc.freeze()


def runs_in_process() -> bool:
    """Whether the job's steps run in this process (GPUPRICES_EXECUTOR); False for a value the
    code location refuses, which it says when it loads."""
    from pipelines.defs.execution import executor_name

    try:
        return executor_name() == "in_process"
    except ValueError:
        return False


def start_gx_worker() -> None:
    """Great Expectations loads in a process of its own (pipelines/quality/gx_worker.py), forked
    before the run lock is taken and before any thread starts; it ends as the process exits."""
    from pipelines.quality import gx_worker

    if runs_in_process():
        gx_worker.start()


def opt_in_named(sources: tuple[str, ...]) -> None:
    """Naming a source opts it in: added to GPUPRICES_OPT_IN before the code location loads (its
    crawler reads it; the multiprocess executor's step processes inherit it)."""
    from spiders.default_sources import OPT_IN_ENV, opt_in_from_env

    if sources:
        os.environ[OPT_IN_ENV] = ",".join(sorted({*opt_in_from_env(), *sources}))


def crawl_before_the_run(run_id: str, sources: tuple[str, ...]) -> None:
    """In process, the crawl step's crawl starts now, on a thread, and the step takes it
    (pipelines/crawl_ahead.py): its Scrapy processes crawl while this one loads Dagster, the code
    location and the instance and plans the run, seconds it used to spend before the crawl."""
    from pipelines import crawl_ahead
    from spiders.registry import source_names

    if runs_in_process():
        crawl_ahead.start(run_id, list(sources) or source_names())


def refuse_unusable_data_dir() -> None:
    """A data directory that is a file, or under one, is a usage error (exit 2) before the lock;
    what else keeps a run from writing, the preflight check says (exit 1)."""
    from pipelines.cli.exit_codes import EXIT_USAGE
    from pipelines.cli.output_paths import output_dir
    from spiders.layout import data_dir

    try:
        output_dir(data_dir(), "--data-dir")
    except click.ClickException as exc:
        if exc.exit_code == EXIT_USAGE:
            raise
        # read-only, full or unwritable: the preflight check names the cause in its own words


def refuse_unless_ready_to_write() -> None:
    """Before Dagster loads and anything is crawled: a data directory or working database the run
    cannot write ends the command in a second with one paragraph (exit 1), not after the crawl."""
    from pipelines.preflight import DiskRefused, check_ready_to_write

    try:
        check_ready_to_write()
    except DiskRefused as exc:
        raise click.ClickException(str(exc)) from None


# failed steps are summarized by print_summary; Dagster's own log keeps the full traces
RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def hold_run_lock(by: str) -> None:
    """One writer per data directory (pipelines/run_lock.py), `by` naming it ("gpuprices run
    (replay)", "gpuprices reject"): wait up to GPUPRICES_LOCK_WAIT seconds for another run, or
    exit 5 having done nothing. Released when the command ends; the kernel
    releases it if the process dies."""
    import time

    from pipelines.cli.exit_codes import RunLocked
    from pipelines.run_lock import RunLockBusy, acquire, release, wait_seconds_from_env
    from spiders.layout import data_dir

    directory = data_dir()
    try:
        wait = wait_seconds_from_env()
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    asked = time.monotonic()

    def say_waiting(holder: str) -> None:
        console.print(f"[yellow]another run is using {directory} ({terminal_text(holder)}); "
                      f"waiting up to {wait:g} s for it to finish[/]")
    try:
        acquire(directory, by, wait, say_waiting if wait else None)
    except RunLockBusy as busy:
        raise RunLocked(f"another run is using {directory} ({terminal_text(busy.holder)}); "
                        f"waited {wait:g} s for it. Nothing was done: run again when it has "
                        "finished, or set GPUPRICES_LOCK_WAIT (seconds) to wait longer.") from None
    except OSError as exc:   # an unwritable data directory: the preflight check says why
        console.print(f"[yellow]cannot lock {directory} ({exc}): not guarded against a "
                      "concurrent run[/]")
        return
    if time.monotonic() - asked >= 1:
        console.print(f"the other run finished; waited {time.monotonic() - asked:.0f} s")
    click.get_current_context().call_on_close(lambda: release(directory))


def gpuprices_job():
    """The job, from the code location (already loaded in this process; the multiprocess
    executor's step processes each load it once through this function)."""
    from pipelines.definitions import defs

    return defs.resolve_job_def("gpuprices_job")


def execute_in_this_process(job, instance, run_id: str, selection):
    """`job.execute_in_process`, under the job's own in-process executor: Dagster's
    execute_in_process swaps in its own, which runs one step at a time, where the job's runs the
    steps after the models side by side (pipelines/defs/step_overlap.py)."""
    from dagster._core.definitions.job_base import InMemoryJob
    from dagster._core.execution.execute_in_process import (
        core_execute_in_process,
        merge_run_tags,
        type_check_and_normalize_args,
    )

    run_config, _, selection, _, _, input_values = type_check_and_normalize_args(
        run_config=RUN_CONFIG, asset_selection=selection)
    ephemeral = job.as_ephemeral_job(resource_defs={}, input_values=input_values,
                                     asset_selection=selection)
    return core_execute_in_process(
        run_config=run_config, job=InMemoryJob(ephemeral.with_executor_def(job.executor_def)),
        instance=instance, output_capturing_enabled=True, raise_on_error=False,
        run_tags=merge_run_tags(job_def=job, partition_key=None, tags=None,
                                asset_selection=selection, instance=instance,
                                run_config=run_config),
        run_id=run_id, asset_selection=frozenset(selection))


def execute_out_of_process(instance, run_id: str, selection):
    """A run of the job under its own executor (GPUPRICES_EXECUTOR=multiprocess: a process per
    step). What `dagster.execute_job` does, with the run id chosen beforehand."""
    import dagster as dg
    from dagster._core.execution.api import execute_run

    recon = dg.reconstructable(gpuprices_job)
    load_data = recon.repository.get_definition().repository_load_data
    recon = recon.with_repository_load_data(load_data)
    run = instance.create_run_for_job(
        job_def=recon.get_definition(), run_id=run_id, run_config=RUN_CONFIG,
        asset_selection=frozenset(selection) if selection else None,
        job_code_origin=recon.get_python_origin(), repository_load_data=load_data)
    ensure_pool_limit(instance)
    try:
        return execute_run(recon, run, instance, raise_on_error=False)
    finally:
        # a step process that died holding a duckdb_writer slot must not block the next run
        instance.event_log_storage.free_concurrency_slots_for_run(run_id)


def ensure_pool_limit(instance) -> None:
    """A DAGSTER_HOME made before the pool existed has no limit in its dagster.yaml; without one
    the pool would not hold the DuckDB steps back, and they would fail on the file lock."""
    from pipelines.defs.execution import DUCKDB_POOL_NAME

    storage = instance.event_log_storage
    if (storage.supports_global_concurrency_limits
            and instance.get_concurrency_config().pool_config.default_pool_limit is None
            and DUCKDB_POOL_NAME not in {pool.name for pool in storage.get_pool_limits()}):
        storage.set_concurrency_slots(DUCKDB_POOL_NAME, 1)
