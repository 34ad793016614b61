"""Which versions of an archive's files a backfill reads: those committed in [since, until),
of the clouds asked for (by the archive's name or the source's), one per file and `every`
period (the period's last: what the file said when it ended), and for SkyPilot one schema
version per cloud and commit (the newest the commit wrote: the catalog's fetcher writes the same
prices into every schema it keeps). Pure."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from pipelines.backfill.archives import Archive
from pipelines.backfill.git_walk import Version
from pipelines.backfill.skypilot import catalog_file
from pipelines.backfill.vendors import vendor_of

EVERY = ("commit", "hour", "day", "week", "month")


def period(when: datetime, every: str) -> object:
    """The period of `every` a time falls in (each commit its own for 'commit')."""
    if every == "hour":
        return when.replace(minute=0, second=0, microsecond=0)
    if every == "day":
        return when.date()
    if every == "week":
        return when.isocalendar()[:2]
    if every == "month":
        return (when.year, when.month)
    if every == "commit":
        return None
    raise ValueError(f"every must be one of {', '.join(EVERY)}, not {every!r}")


def _wanted(cloud: str | None, wanted: set[str]) -> bool:
    """A file of this cloud is read (a file of every cloud is, its offers are filtered); a
    cloud is asked for by the archive's name ('vast') or the source's ('vastai')."""
    return cloud is None or bool({cloud, vendor_of(cloud).key} & wanted)


def _newest_schema(versions: Iterable[Version]) -> list[Version]:
    best: dict[tuple[str, str], tuple[int, Version]] = {}
    for v in versions:
        cloud, schema = catalog_file(v.path) or (v.path, 0)
        if (v.commit, cloud) not in best or schema > best[(v.commit, cloud)][0]:
            best[(v.commit, cloud)] = (schema, v)
    return [v for _, v in best.values()]


def choose_versions(archive: Archive, versions: Sequence[Version], *,
                    since: datetime | None = None, until: datetime | None = None,
                    clouds: Sequence[str] = (), every: str = "hour") -> list[Version]:
    """The versions to read, oldest first."""
    period(versions[0].committed_at if versions else datetime.now(), every)   # checks `every`
    wanted = {c.lower() for c in clouds}
    kept = [v for v in versions
            if (since is None or v.committed_at >= since)
            and (until is None or v.committed_at < until)
            and (not wanted or _wanted(archive.file_cloud(v.path), wanted))]
    if archive.name == "skypilot-catalog":
        kept = _newest_schema(kept)
    if every != "commit":
        last: dict[tuple, Version] = {}
        for v in sorted(kept, key=lambda v: v.committed_at):
            key = (archive.file_cloud(v.path) or v.path, period(v.committed_at, every))
            last[key] = v
        kept = list(last.values())
    return sorted(kept, key=lambda v: (v.committed_at, v.path))
