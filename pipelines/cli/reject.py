"""`gpuprices reject` and `gpuprices accept`: a person settles a crawl a blocking rule held back
(or any pending one): rejected, it is set aside (its raw offers stay in raw.offers); accepted,
its new level lands on the next run. Each decision is recorded in raw.crawl_decisions with who
made it (person:$USER), when and why, beside the rules' own decisions."""

from __future__ import annotations

import getpass

import click

from pipelines.cli.options import TEXT
from pipelines.cli.output import console


@click.command("reject")
@click.argument("crawl_ids", nargs=-1, required=True, type=TEXT)
@click.option("--reason", required=True, type=TEXT,
              help="Why the crawl is set aside (kept with it).")
def reject_command(crawl_ids: tuple[str, ...], reason: str) -> None:
    """Set aside pending crawls (held by a blocking rule, or not yet published); their raw offers
    stay in raw.offers. Waits for a running run like `run` does (GPUPRICES_LOCK_WAIT; exit 5)."""
    _decide(crawl_ids, "rejected", reason, "gpuprices reject")
    console.print(f"rejected {len(crawl_ids)} crawl(s); the next run publishes without them")


@click.command("accept")
@click.argument("crawl_ids", nargs=-1, required=True, type=TEXT)
@click.option("--reason", default="accepted by hand", show_default=True, type=TEXT,
              help="Why its new level is real (kept with the decision).")
def accept_command(crawl_ids: tuple[str, ...], reason: str) -> None:
    """Let held crawls land: their new volume or price level is real (a promotion, a market
    move). The next run publishes them with their original observation time; a row rule still
    applies (a wrong row cannot be accepted: reject it). Waits for a running run like `run`."""
    _decide(crawl_ids, "accepted", reason, "gpuprices accept")
    console.print(f"accepted {len(crawl_ids)} crawl(s); the next run publishes them")


def _decide(crawl_ids: tuple[str, ...], decision: str, reason: str, by: str) -> None:
    import duckdb

    from pipelines.cli.output_paths import output_dir
    from pipelines.cli.run import hold_run_lock
    from spiders.layout import data_dir, work_db_path

    output_dir(data_dir(), "--data-dir")
    hold_run_lock(by)   # not between two steps of a running run
    try:
        decide_crawls(crawl_ids, decision, reason)
    except duckdb.Error as exc:   # a locked, unwritable or broken working database
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "no reason given"
        raise click.ClickException(f"cannot write {work_db_path()}: {first}") from None


def decided_by() -> str:
    """Who a person's decision is recorded as: person:<login name>."""
    from pipelines.quality.settlement import PERSON

    try:
        return PERSON + getpass.getuser()
    except (KeyError, OSError):   # no login name (a container without a passwd entry)
        return PERSON + "unknown"


def decide_crawls(crawl_ids: tuple[str, ...], decision: str, reason: str) -> None:
    """Record `decision` ('rejected' | 'accepted') for each crawl, in one transaction (the
    pipeline's own connection settings: Dagster's DuckDB resource, imported when run). A crawl
    that is unknown, published, or (to accept) not held, or held by a row rule: a usage error,
    and none is decided."""
    from datetime import UTC, datetime

    from pipelines.quality.settlement import Decision
    from pipelines.resources import duckdb_from_env
    from pipelines.warehouse.crawl_decisions import crawl_state, record_decisions
    from pipelines.warehouse.db import ensure_schema, transaction

    who = decided_by()
    with duckdb_from_env().get_connection() as con:
        ensure_schema(con)
        with transaction(con):
            decisions = []
            for crawl_id in crawl_ids:
                state = crawl_state(con, crawl_id)
                if state is None:
                    raise click.UsageError(f"no crawl {crawl_id!r} (see raw.crawls)")
                source, passed, normalized_at, status, row_rule = state
                if not passed or normalized_at is not None:
                    raise click.UsageError(f"crawl {crawl_id!r} is not pending: only a passing, "
                                           f"unpublished crawl can be {decision}")
                if decision == "accepted" and status != "held":
                    raise click.UsageError(f"crawl {crawl_id!r} is not held: nothing to accept")
                if decision == "accepted" and row_rule:
                    raise click.UsageError(
                        f"crawl {crawl_id!r} is held by a row rule ({row_rule}): its rows "
                        "cannot land as they are; reject it")
                decisions.append(Decision(crawl_id, source, decision, who, reason))
            record_decisions(con, decisions, datetime.now(UTC))
