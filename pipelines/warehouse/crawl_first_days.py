"""The first UTC day of each crawl's observations (raw.crawl_first_days), from which the model
runner finds the first new day of an hour: the earliest day with observations loaded since a
model's last build. A writer of observations records its crawls' days as it writes them
(record_crawl_first_days), reading only what it wrote; the runner scans `observations` only for
a crawl nobody recorded (a database written before this, a test's hand-made rows), once. The
publish (pipelines/generations.py) takes a model's first new day by the same rule, from the same
rows (first_new_day_since over crawls_since), to copy a generation only the days the runner
rebuilt."""

from __future__ import annotations

from datetime import date, datetime

from pipelines.warehouse.sql_files import sql_text

# The bounds that leave a scan open at one end.
BEGINNING = datetime.fromisoformat("0001-01-01T00:00:00+00:00")
END = datetime.fromisoformat("9999-12-31T00:00:00+00:00")


def _cache(con, normalized_from, normalized_to, first_hour) -> None:
    """Cache the first day of the crawls normalized between the two times that are not cached
    (or were normalized again since), reading the observations from `first_hour` on."""
    con.execute(sql_text(__file__, "uncache_crawl_first_days"), {"built_at": normalized_from})
    con.execute(sql_text(__file__, "cache_crawl_first_days"),
                {"normalized_from": normalized_from, "normalized_to": normalized_to,
                 "first_hour": first_hour})


def record_crawl_first_days(con, first_hour: datetime | None, normalized_at=None) -> None:
    """Record the first day of the crawls one write marked normalized at `normalized_at` (None:
    now(), the time of the write's transaction), all of whose rows it wrote at `first_hour` or
    later (None: it wrote no row), so the model runner need not scan the history for them. Call
    it in the write's transaction, after its rows and its crawls' normalized_at are in."""
    if normalized_at is None:
        normalized_at = con.execute("select now()").fetchone()[0]
    _cache(con, normalized_at, normalized_at, first_hour or END)


def crawls_since(con, built_at) -> list[tuple]:
    """(normalized_at, first_day, cached) of every crawl normalized since `built_at` (a datetime or
    an ISO string), in the session's default catalog (sql/crawls_since.sql)."""
    return con.execute(sql_text(__file__, "crawls_since"), {"built_at": built_at}).fetchall()


def first_new_day_since(crawls: list[tuple], built_at) -> tuple[date | None, bool]:
    """The one rule for "the first new day since a build", the runner's and the publish's: (the
    earliest first day of the crawls normalized since `built_at` (a datetime or an ISO string),
    None when none has one; whether one of them has no cached first day) from crawls_since rows,
    which may start earlier (the publish reads them once, from its earliest build)."""
    since = built_at if isinstance(built_at, datetime) else datetime.fromisoformat(built_at)
    after = [(day, cached) for normalized_at, day, cached in crawls if normalized_at >= since]
    return (min((day for day, _ in after if day is not None), default=None),
            not all(cached for _, cached in after))


def first_new_day(con, built_at) -> str | None:
    """The earliest UTC day (ISO) with observations loaded since `built_at` (None: nothing new),
    from the crawls normalized since; one nobody recorded has its day found by a scan of the
    whole of `observations` first, once."""
    since, uncached = first_new_day_since(crawls_since(con, built_at), built_at)
    if uncached:
        _cache(con, built_at, END, BEGINNING)
        since, _ = first_new_day_since(crawls_since(con, built_at), built_at)
    return since.isoformat() if since else None
