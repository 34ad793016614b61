"""The public price record: the parsed versions of public price archives, bundled in the
repository (data/records/) so that a run loads years of real dated prices without a clone.

One gzip'd JSON Lines file per archive, a row per offer a version's parser returned
(`commit`, `committed_at`, `path`, `line`, `cloud`, `fields`: exactly the ArchiveOffer), and
`manifest.json` naming per archive its repository, files, whether its dates are calendar
dates (`calendar_signal`), the builder's selection, and each version (commit, date, path,
the sha256 of the file's bytes, its offers): the counts the reader checks every row against.
Written by `pipelines.backfill.record_build`, read by `pipelines.backfill.record_load`.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from pipelines.backfill.git_walk import Version
from pipelines.backfill.offers import ArchiveOffer
from spiders.layout import REPO_ROOT

RECORD_DIR = REPO_ROOT / "data" / "records"
MANIFEST = "manifest.json"
FORMAT = 1


class RecordError(Exception):
    """The bundle cannot be read as written: a missing, truncated or corrupt file, a row of an
    archive or version the manifest does not name, counts that disagree."""


@dataclass(frozen=True)
class RecordVersion:
    """One version of an archive's file in the record."""

    commit: str
    committed_at: datetime
    path: str
    sha256: str          # of the file's bytes: the raw_ref a backfill from a clone gives
    offers: int

    def as_version(self) -> Version:
        """The git_walk Version the loader's crawl ids and provenance are made from (the blob is
        not needed once the file is parsed)."""
        return Version(self.commit, self.committed_at, self.path, blob="")


@dataclass
class RecordArchive:
    """One archive's part of the record, as the manifest names it."""

    name: str
    repository: str
    file: str                          # the bundle file, beside the manifest
    paths: list[str]                   # the archive's files in its repository
    calendar_signal: bool              # commit dates are days a price held, not edit days
    selection: dict                    # what the builder chose ({"every": "month"})
    head: str                          # the clone's commit the builder read
    rows: int
    versions: list[RecordVersion] = field(default_factory=list)


def version_key(commit: str, path: str) -> tuple[str, str]:
    return commit, path


def archive_entry(archive: RecordArchive) -> dict:
    return {"repository": archive.repository, "file": archive.file, "paths": archive.paths,
            "calendar_signal": archive.calendar_signal, "selection": archive.selection,
            "head": archive.head, "rows": archive.rows,
            "versions": [{"commit": v.commit, "committed_at": v.committed_at.isoformat(),
                          "path": v.path, "sha256": v.sha256, "offers": v.offers}
                         for v in archive.versions]}


def offer_row(version: RecordVersion, offer: ArchiveOffer) -> dict:
    return {"commit": version.commit, "committed_at": version.committed_at.isoformat(),
            "path": version.path, "line": offer.line, "cloud": offer.cloud,
            "fields": offer.fields}


def write_archive(directory: Path, archive: RecordArchive,
                  offers: dict[tuple[str, str], list[ArchiveOffer]]) -> int:
    """The archive's rows into its gzip'd file (mtime 0: the same offers make the same bytes);
    its size in bytes."""
    path = directory / archive.file
    with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0,
                                               filename="") as out:
        for version in archive.versions:
            for offer in offers[version_key(version.commit, version.path)]:
                out.write(json.dumps(offer_row(version, offer), ensure_ascii=False,
                                     sort_keys=True).encode() + b"\n")
    return path.stat().st_size


def write_manifest(directory: Path, archives: dict[str, RecordArchive]) -> None:
    text = json.dumps({"format": FORMAT, "archives": {name: archive_entry(a) for name, a in
                                                      sorted(archives.items())}},
                      ensure_ascii=False, indent=1)
    (directory / MANIFEST).write_text(text + "\n", encoding="utf-8")


def _archive(name: str, entry: dict) -> RecordArchive:
    try:
        return RecordArchive(
            name, entry["repository"], entry["file"], list(entry["paths"]),
            bool(entry["calendar_signal"]), dict(entry["selection"]), entry["head"],
            int(entry["rows"]),
            [RecordVersion(v["commit"], datetime.fromisoformat(v["committed_at"]), v["path"],
                           v["sha256"], int(v["offers"])) for v in entry["versions"]])
    except (KeyError, TypeError, ValueError) as exc:
        raise RecordError(f"manifest: archive {name!r} is malformed ({type(exc).__name__}: "
                          f"{exc})") from None


def read_manifest(directory: Path = RECORD_DIR) -> dict[str, RecordArchive]:
    """The archives the manifest names; RecordError when it is absent or malformed, or its
    counts disagree with themselves."""
    path = directory / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RecordError(f"{path}: no manifest") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RecordError(f"{path}: not JSON ({exc})") from None
    written = manifest.get("format") if isinstance(manifest, dict) else None
    if written != FORMAT or not isinstance(manifest.get("archives"), dict):
        raise RecordError(f"{path}: format {written!r}, this reader knows {FORMAT}")
    archives = {name: _archive(name, entry) for name, entry in manifest["archives"].items()}
    for a in archives.values():
        if sum(v.offers for v in a.versions) != a.rows:
            raise RecordError(f"manifest: archive {a.name!r} says {a.rows} rows but its "
                              f"versions add up to {sum(v.offers for v in a.versions)}")
    return archives


def _offer(archive: RecordArchive, number: int, row: object,
           versions: dict[tuple[str, str], RecordVersion]) -> tuple[RecordVersion, ArchiveOffer]:
    where = f"{archive.file}, row {number}"
    if not isinstance(row, dict) or not {"commit", "path", "line", "cloud", "fields"} <= set(row):
        raise RecordError(f"{where}: not an offer row")
    version = versions.get(version_key(row["commit"], row["path"]))
    if version is None:
        raise RecordError(f"{where}: version {row['commit'][:12]} of {row['path']} is not in "
                          f"the manifest's {archive.name!r}")
    if not isinstance(row["fields"], dict) or not isinstance(row["line"], int):
        raise RecordError(f"{where}: malformed line or fields")
    return version, ArchiveOffer(str(row["cloud"]), row["line"], row["fields"])


def read_offers(directory: Path, archive: RecordArchive
                ) -> Iterator[tuple[RecordVersion, list[ArchiveOffer]]]:
    """Each version of the archive with its offers, in the manifest's order; RecordError when
    the file is missing, truncated or corrupt, a row names a version the manifest does not, or
    a version's rows are not as many as the manifest says. The whole file is checked before
    the first version is returned, so a bad bundle loads nothing."""
    versions = {version_key(v.commit, v.path): v for v in archive.versions}
    found: dict[tuple[str, str], list[ArchiveOffer]] = {k: [] for k in versions}
    path = directory / archive.file
    try:
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise RecordError(f"{archive.file}, row {number}: not JSON ({exc})") from None
                version, offer = _offer(archive, number, row, versions)
                found[version_key(version.commit, version.path)].append(offer)
    except FileNotFoundError:
        raise RecordError(f"{path}: the manifest names it, but it is not there") from None
    except (EOFError, OSError, zlib.error, UnicodeDecodeError) as exc:
        raise RecordError(f"{path}: truncated or corrupt ({exc})") from None
    counts = Counter({k: len(v) for k, v in found.items()})
    for key, version in versions.items():
        if counts[key] != version.offers:
            raise RecordError(f"{archive.file}: version {version.commit[:12]} of "
                              f"{version.path} has {counts[key]} rows, the manifest says "
                              f"{version.offers}")
    for version in archive.versions:
        yield version, found[version_key(version.commit, version.path)]
