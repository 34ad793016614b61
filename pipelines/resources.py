"""Resources: the DuckDB file and the crawler that runs spiders in subprocesses, several sources
per process (pipelines/crawler.py); declared for the code location in
pipelines/defs/resources.py."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource
from pydantic import Field

# CrawlResult is also imported from here (the steps, tests)
from pipelines.crawler import SETTINGS, Crawler, CrawlResult, settings_from_env
from pipelines.warehouse.db import DUCKDB_CONFIG
from spiders.layout import work_db_path


class CrawlerResource(dg.ConfigurableResource):
    """The crawler (pipelines/crawler.py `Crawler`: its settings, what each means, and how it
    crawls) as the resource the crawl steps ask for by name; each call is handed to a Crawler with
    these settings."""

    mode: str = Crawler.mode
    data_dir: str
    snapshot_dir: str = Crawler.snapshot_dir
    timeout_seconds: int = Crawler.timeout_seconds
    shared_grace_seconds: int = Crawler.shared_grace_seconds
    alone_concurrency: int = Crawler.alone_concurrency
    opt_in: list[str] = Field(default_factory=list)

    def crawler(self) -> Crawler:
        return Crawler(**{name: getattr(self, name) for name in SETTINGS})

    def items_path(self, source: str, crawl_id: str) -> Path:
        return self.crawler().items_path(source, crawl_id)

    def verdict_path(self, source: str, crawl_id: str) -> Path:
        return self.crawler().verdict_path(source, crawl_id)

    def replay(self) -> contextlib.AbstractContextManager[str | None]:
        return self.crawler().replay()

    def crawl(self, source: str, crawl_id: str,
              log: dg.DagsterLogManager | None = None) -> CrawlResult:
        return self.crawler().crawl(source, crawl_id, log)

    def crawl_many(self, jobs: dict[str, str], log: dg.DagsterLogManager | None = None,
                   settings: dict[str, dict] | None = None) -> dict[str, CrawlResult]:
        return self.crawler().crawl_many(jobs, log, settings)


def crawler_from_env() -> CrawlerResource:
    return CrawlerResource(**settings_from_env())


class WorkingDuckDB(DuckDBResource):
    """The working database, whose connection is closed however the step's block ends.

    dagster-duckdb's get_connection closes it only when the block succeeds; a step that failed
    kept its connection open for as long as its traceback lived, and the next step of the same
    process could not open the file ("Can't open a connection to same database file with a
    different configuration"): one failed step hid its own error behind the publish's."""

    @contextlib.contextmanager
    def get_connection(self):
        with super().get_connection() as con:
            try:
                yield con
            finally:
                if _held:   # still open for the run: checkpoint as the last close would have
                    with contextlib.suppress(duckdb.Error):
                        con.execute("checkpoint")
                con.close()


# The working database held open by a run in process (hold_working_database), until the publish
# releases it or the run ends.
_held: list[contextlib.ExitStack] = []


@contextlib.contextmanager
def hold_working_database() -> Iterator[None]:
    """Keep the working database open (one connection, as the steps' resource makes it) until
    the block ends or release_working_database: a run in process, whose steps then each join
    the open database instead of opening the file and reading its catalog again (20-50 ms a
    step of the 14). Each step still checkpoints as it closes, as the last close did: its
    writes reach the main file and the WAL goes, step by step, as before. A run that fails
    before its publish releases it as the block ends: nothing stays held in the process."""
    stack = contextlib.ExitStack()
    stack.enter_context(duckdb_from_env().get_connection())
    _held.append(stack)
    try:
        yield
    finally:
        release_working_database()


def release_working_database() -> None:
    """Close what hold_working_database holds: the publish reads the file closed (its comments
    written, then attached read-only or copied)."""
    while _held:
        _held.pop().close()


def duckdb_from_env() -> WorkingDuckDB:
    path = work_db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    return WorkingDuckDB(database=str(path), connection_config=DUCKDB_CONFIG)
