"""`gpuprices reject`: set aside pending crawls that a blocking check refused, so that the next
run publishes without them; their raw offers stay in raw.offers."""

from __future__ import annotations

import click

from pipelines.cli.output import console
from pipelines.warehouse.sql_files import sql_text


@click.command("reject")
@click.argument("crawl_ids", nargs=-1, required=True)
@click.option("--reason", required=True, help="Why the crawl is set aside (kept with it).")
def reject_command(crawl_ids: tuple[str, ...], reason: str) -> None:
    """Set aside pending crawls that a blocking check refused; their raw offers stay in
    raw.offers. Waits for a running run like `run` does (GPUPRICES_LOCK_WAIT; exit 5)."""
    # The pipeline's own connection settings (Dagster's DuckDB resource): imported when run.
    from pipelines.cli.run import hold_run_lock
    from pipelines.resources import duckdb_from_env
    from pipelines.warehouse.db import ensure_schema, transaction

    hold_run_lock("gpuprices reject")   # not between two steps of a running run
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
    console.print(f"rejected {len(crawl_ids)} crawl(s); the next run publishes without them")
