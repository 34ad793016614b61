"""A backfill: read the chosen versions of an archive's files, load each as the crawls a spider
would have left (raw.crawls, raw.offers; the bytes into the raw archive), and have them
normalized, checked and published by the pipeline's own steps (`publish`), a chunk at a time.

Idempotent and resumable: a version's crawls (one per source it lists; their ids name the
source, the commit time and the commit) are loaded in one transaction, and a crawl already in
raw.crawls is never loaded again, so a version is read once however often the backfill runs (a
file per cloud is not even read: its crawl's id is known from the commit); crawls loaded but not
yet published (a kill between the two) are published first when the backfill starts again, and
publishing skips an offer and hour already there. A chunk whose checks fail stays pending, as a
crawl's batch does (`gpuprices reject <crawl_id>` sets a bad crawl aside), and the backfill stops.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pandas as pd

from pipelines.backfill.archives import ARCHIVES, Archive
from pipelines.backfill.git_walk import Version, blob_reader, file_versions
from pipelines.backfill.items import (
    ARCHIVE_PRICE_BASIS,
    REACHES_VIA,
    Crawl,
    crawl_id,
    source_name,
    version_crawls,
)
from pipelines.backfill.selection import choose_versions
from pipelines.warehouse.db import DUCKDB_CONFIG, ensure_schema, transaction
from pipelines.warehouse.sql_files import sql_text
from spiders.layout import work_db_path
from spiders.middlewares.raw_archive import RawArchive

# Raw offers loaded before the pipeline normalizes them: a chunk is a batch, and the batch's
# consistency stage compares each offer with every other of its source, card and kind
# (pipelines/normalize/consistency.py, quadratic in the group): a year in one batch took ten
# times as long as in chunks of this size.
CHUNK_OFFERS = 20_000


class BackfillBlocked(Exception):
    """The pipeline's checks refused a chunk: its crawls stay pending."""


@dataclass
class Stats:
    versions: int = 0            # versions chosen
    read: int = 0                # versions read by this run
    already_read: int = 0        # read by an earlier run
    unreadable: int = 0          # blob absent from the clone, or a version its parser refused
    crawls: int = 0
    offers: int = 0              # raw offers loaded
    rows_added: int = 0          # observations this run added
    quarantined: int = 0         # of this run's offers, refused by normalization
    seconds: float = 0.0
    left_out: dict[str, int] = field(default_factory=dict)   # rows that are not offers, by why


Publish = Callable[[], tuple[bool, str]]          # normalize, check, publish pending crawls
Progress = Callable[[int, int, int], None]        # (versions done, versions total, offers)


def connect(root: str | Path | None) -> duckdb.DuckDBPyConnection:
    path = work_db_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path), config=dict(DUCKDB_CONFIG))
    ensure_schema(con)
    return con


def _frame(con: duckdb.DuckDBPyConnection, name: str, rows: list[dict], sql: str) -> None:
    con.register(name, pd.DataFrame(rows))
    try:
        con.execute(sql_text(__file__, sql))
    finally:
        con.unregister(name)


def _crawl_row(archive: Archive, version: Version, crawl: Crawl, run_id: str,
               failure: str | None = None) -> dict:
    return {"crawl_id": crawl.crawl_id, "run_id": run_id, "source": crawl.source,
            "mode": REACHES_VIA, "started_at": version.committed_at,
            "finished_at": version.committed_at, "passed": failure is None,
            "offers": len(crawl.items), "requests": 1, "failures": [failure] if failure else [],
            "status": "passed" if failure is None else "failed",
            # the archive published these prices, dated by the commit
            "price_basis": ARCHIVE_PRICE_BASIS, "prices_as_of": version.committed_at.date(),
            "calendar_signal": archive.calendar_signal}


def load_version(con: duckdb.DuckDBPyConnection, archive: Archive, version: Version,
                 crawls: list[Crawl], run_id: str, failure: str | None = None) -> None:
    """One version's crawls and their offers, in one transaction."""
    if failure:      # a version that cannot be read is a failed crawl of its file's source
        cloud = archive.file_cloud(version.path)
        source = source_name(archive, cloud) if cloud else archive.prefix
        crawls = [Crawl(crawl_id(source, version), source)]
    with transaction(con):
        _frame(con, "archive_crawls",
               [_crawl_row(archive, version, c, run_id, failure) for c in crawls],
               "insert_archive_crawls")
        offers = [{"crawl_id": c.crawl_id, "item_no": n, "source": c.source,
                   "item": json.dumps(item, ensure_ascii=False)}
                  for c in crawls for n, item in enumerate(c.items)]
        if offers and not failure:
            _frame(con, "archive_offers", offers, "insert_archive_offers")


def pending_crawls(con: duckdb.DuckDBPyConnection) -> int:
    return con.execute(sql_text(__file__, "backfill_pending")).fetchone()[0]


def observation_count(con: duckdb.DuckDBPyConnection) -> int:
    return con.execute("select count(*) from observations").fetchone()[0]


def backfill(archive_name: str, repo: str | Path, publish: Publish, *,
             root: str | Path | None = None, since: datetime | None = None,
             until: datetime | None = None, clouds: Sequence[str] = (), every: str = "hour",
             chunk_offers: int = CHUNK_OFFERS, progress: Progress | None = None) -> Stats:
    """Backfill `archive_name` from the clone at `repo` into the working database of `root`."""
    archive = ARCHIVES[archive_name]
    started = time.perf_counter()
    stats = Stats()
    versions = choose_versions(archive, file_versions(repo, archive.pathspecs), since=since,
                               until=until, clouds=clouds, every=every)
    stats.versions = len(versions)
    run_id = f"backfill-{archive.name}-{datetime.now(UTC):%Y%m%dT%H%M%S}"
    raw = RawArchive(root, f"backfill-{archive.name}", run_id)  # type: ignore[arg-type]
    con = connect(root)
    try:
        before = table_counts(con)
        loaded = {c for c, in con.execute(sql_text(__file__, "archive_crawl_ids"),
                                          {"prefix": archive.prefix}).fetchall()}
        if pending_crawls(con):
            con = publish_chunk(con, root, publish)
        waiting = 0
        with blob_reader(repo) as blobs:
            for n, version in enumerate(versions, 1):
                if (cloud := archive.file_cloud(version.path)) and \
                        crawl_id(source_name(archive, cloud), version) in loaded:
                    stats.already_read += 1        # known without reading it
                else:
                    waiting += _read_version(con, archive, version, blobs, raw, run_id, clouds,
                                             loaded, stats)
                    if waiting >= chunk_offers:
                        con, waiting = publish_chunk(con, root, publish), 0
                if progress:
                    progress(n, len(versions), stats.offers)
        if pending_crawls(con):
            con = publish_chunk(con, root, publish)
        count_added(con, stats, before)
    finally:
        con.close()
    stats.seconds = time.perf_counter() - started
    return stats


def _read_version(con, archive: Archive, version: Version, blobs, raw: RawArchive, run_id: str,
                  clouds: Sequence[str], loaded: set[str], stats: Stats) -> int:
    """Read, archive and load one version (those of its crawls not loaded before); the raw
    offers it loaded."""
    data = blobs.read(version.blob)
    if data is None:
        stats.unreadable += 1
        load_version(con, archive, version, [], run_id,
                     failure=f"the clone does not hold blob {version.blob}")
        return 0
    sha = raw.store(url=f"git:{archive.repository}@{version.commit}:{version.path}",
                    method="GIT", status=200, headers={}, body=data)
    try:
        parsed = archive.parse(data.decode("utf-8-sig"), version.path)
    except (ValueError, UnicodeDecodeError) as exc:
        stats.unreadable += 1
        load_version(con, archive, version, [], run_id, failure=f"{type(exc).__name__}: {exc}")
        return 0
    crawls = version_crawls(archive, version, parsed.offers, sha, clouds)
    new = [c for c in crawls if c.crawl_id not in loaded]
    if crawls and not new:
        stats.already_read += 1
        return 0
    for why, count in parsed.left_out.items():
        stats.left_out[why] = stats.left_out.get(why, 0) + count
    if new:     # a version that lists no offer (a page before its prices) leaves no crawl
        load_version(con, archive, version, new, run_id)
    return tally(stats, new)


def tally(stats: Stats, crawls: list[Crawl]) -> int:
    """A version's crawls loaded, counted in `stats`; their raw offers."""
    offers = sum(len(c.items) for c in crawls)
    stats.read += 1
    stats.crawls += len(crawls)
    stats.offers += offers
    return offers


def table_counts(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    """(observations, quarantined rows), to count what a load added."""
    return observation_count(con), quarantine_count(con)


def count_added(con: duckdb.DuckDBPyConnection, stats: Stats, before: tuple[int, int]) -> None:
    stats.rows_added = observation_count(con) - before[0]
    stats.quarantined = quarantine_count(con) - before[1]


def quarantine_count(con: duckdb.DuckDBPyConnection) -> int:
    return con.execute("select count(*) from quarantine").fetchone()[0]


def publish_chunk(con: duckdb.DuckDBPyConnection, root, publish: Publish
             ) -> duckdb.DuckDBPyConnection:
    """The pending crawls normalized, checked and published by the pipeline (which opens the
    database itself: this connection is closed meanwhile); a fresh connection after."""
    con.close()
    ok, message = publish()
    con = connect(root)
    if not ok or pending_crawls(con):
        con.close()
        raise BackfillBlocked(message or "the pipeline left crawls pending")
    return con
