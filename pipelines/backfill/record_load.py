"""The public price record (record.py) loaded into the working database as a backfill from a
clone would load it: the same crawls (ids, sources, provenance, raw_ref), through load.py's
transaction per version and its chunked publish by the pipeline's own steps.

Idempotent: a version whose crawls are all in raw.crawls is not loaded again, so a second load
reads the bundle and adds nothing; a version already loaded by `gpuprices backfill` from a
clone is the same crawl and is not loaded twice. `GPUPRICES_RECORD=off` (or `gpuprices run
--no-record`) leaves the record out of a run (record_switch.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from pipelines.backfill.archives import ARCHIVES, Archive
from pipelines.backfill.items import version_crawls
from pipelines.backfill.load import (
    CHUNK_OFFERS,
    Progress,
    Publish,
    Stats,
    connect,
    count_added,
    load_version,
    pending_crawls,
    publish_chunk,
    table_counts,
    tally,
)
from pipelines.backfill.record import (
    RECORD_DIR,
    RecordArchive,
    RecordError,
    read_manifest,
    read_offers,
)
from pipelines.warehouse.sql_files import sql_text


def known_archive(part: RecordArchive) -> Archive:
    """The archive a part of the record belongs to, as this code defines it; RecordError when
    the code does not know it or dates it otherwise."""
    archive = ARCHIVES.get(part.name)
    if archive is None:
        raise RecordError(f"the record holds archive {part.name!r}, which this code does not "
                          f"know (known: {', '.join(sorted(ARCHIVES))})")
    if archive.calendar_signal != part.calendar_signal or \
            archive.repository != part.repository:
        raise RecordError(f"the record's {part.name!r} ({part.repository}, calendar_signal "
                          f"{part.calendar_signal}) is not the archive this code defines "
                          f"({archive.repository}, calendar_signal {archive.calendar_signal})")
    return archive


def load_record(publish: Publish, *, root: str | Path | None = None,
                directory: Path = RECORD_DIR, chunk_offers: int = CHUNK_OFFERS,
                progress: Progress | None = None,
                on_start: Callable[[int], None] | None = None) -> Stats:
    """Every version of the record not yet in the working database of `root`, loaded and
    published; `on_start(versions to load)` is told before the first is loaded."""
    started = time.perf_counter()
    parts = read_manifest(directory)
    archives = {name: known_archive(part) for name, part in parts.items()}
    stats = Stats(versions=sum(len(p.versions) for p in parts.values()))
    run_id = f"record-{datetime.now(UTC):%Y%m%dT%H%M%S}"
    con = connect(root)
    try:
        before = table_counts(con)
        loaded = {c for name in parts for c, in con.execute(
            sql_text(__file__, "archive_crawl_ids"),
            {"prefix": archives[name].prefix}).fetchall()}
        todo = []
        for name, part in parts.items():
            for version, offers in read_offers(directory, part):
                crawls = version_crawls(archives[name], version.as_version(), offers,
                                        version.sha256)
                new = [c for c in crawls if c.crawl_id not in loaded]
                if new:
                    todo.append((archives[name], version, new))
                else:
                    stats.already_read += 1
        if on_start:
            on_start(len(todo))
        if todo and pending_crawls(con):
            con = publish_chunk(con, root, publish)
        waiting = 0
        for n, (archive, version, new) in enumerate(todo, 1):
            load_version(con, archive, version.as_version(), new, run_id)
            waiting += tally(stats, new)
            if waiting >= chunk_offers:
                con, waiting = publish_chunk(con, root, publish), 0
            if progress:
                progress(n, len(todo), stats.offers)
        if waiting:
            con = publish_chunk(con, root, publish)
        count_added(con, stats, before)
    finally:
        con.close()
    stats.seconds = time.perf_counter() - started
    return stats
