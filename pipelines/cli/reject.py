"""`gpuprices reject`: set aside pending crawls that a blocking check refused, so that the next
run publishes without them; their raw offers stay in raw.offers."""

from __future__ import annotations

import click

from pipelines.cli.options import TEXT
from pipelines.cli.output import console
from pipelines.warehouse.sql_files import sql_text


@click.command("reject")
@click.argument("crawl_ids", nargs=-1, required=True, type=TEXT)
@click.option("--reason", required=True, type=TEXT,
              help="Why the crawl is set aside (kept with it).")
def reject_command(crawl_ids: tuple[str, ...], reason: str) -> None:
    """Set aside pending crawls that a blocking check refused; their raw offers stay in
    raw.offers. Waits for a running run like `run` does (GPUPRICES_LOCK_WAIT; exit 5)."""
    import duckdb

    from pipelines.cli.output_paths import output_dir
    from pipelines.cli.run import hold_run_lock
    from spiders.layout import data_dir, work_db_path

    output_dir(data_dir(), "--data-dir")
    hold_run_lock("gpuprices reject")   # not between two steps of a running run
    try:
        reject_crawls(crawl_ids, reason)
    except duckdb.Error as exc:   # a locked, unwritable or broken working database
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "no reason given"
        raise click.ClickException(f"cannot write {work_db_path()}: {first}") from None
    console.print(f"rejected {len(crawl_ids)} crawl(s); the next run publishes without them")


def reject_crawls(crawl_ids: tuple[str, ...], reason: str) -> None:
    """Mark each pending crawl rejected (the pipeline's own connection settings: Dagster's DuckDB
    resource, imported when run), in one transaction (an unknown or published one: a usage
    error, and none is marked)."""
    from pipelines.resources import duckdb_from_env
    from pipelines.warehouse.db import ensure_schema, transaction

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
                con.execute(sql_text(__file__, "reject_crawl"),
                            {"reason": f"rejected: {reason}", "crawl_id": crawl_id})
