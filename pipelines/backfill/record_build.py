"""Builds the public price record (data/records/) from clones of the public price archives: each
archive's versions read from git (git_walk, never a work tree), chosen as SELECTIONS says, parsed
by the archive's own parser, written as record.py lays them out.

    python -m pipelines.backfill.record_build --clones /work/.mirror
    python -m pipelines.backfill.record_build --clone cloud-gpus=~/src/cloud-gpus.github.io

`--clones DIR` finds each archive's clone at DIR/<owner>+<name>/repo; `--clone NAME=PATH` names
one. An archive with no clone, or not (yet) among ARCHIVES, is skipped with a line and keeps
what the manifest already holds for it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from pipelines.backfill.archives import ARCHIVES, Archive
from pipelines.backfill.git_walk import ArchiveError, blob_reader, file_versions
from pipelines.backfill.offers import ArchiveOffer
from pipelines.backfill.record import (
    RECORD_DIR,
    RecordArchive,
    RecordError,
    RecordVersion,
    read_manifest,
    version_key,
    write_archive,
    write_manifest,
)
from pipelines.backfill.selection import choose_versions
from spiders.middlewares.raw_archive import body_sha256


@dataclass(frozen=True)
class RecordSelection:
    """Which versions of an archive the record keeps (selection.py's `every`) and why."""

    every: str
    why: str


# The one table of what the record holds. Curated tables change a few times a year: every
# commit. A catalog a fetcher rewrites often keeps one version a month (its last), which keeps
# the bundle to a few MB and still draws the month's price.
SELECTIONS = {
    "cloud-gpus": RecordSelection("commit", "a curated table: every edit"),
    "full-stack": RecordSelection("commit", "a curated table: every edit"),
    "gcp-pricing": RecordSelection("month", "~290 versions of ~1000 GPU rows: a month's last"),
    "alibaba-priceserver": RecordSelection("commit", "a few dated versions: every one"),
    "featurize-doc": RecordSelection("commit", "a documented price table: every edit"),
    "ustc-saids": RecordSelection("commit", "a documented tariff: every edit"),
    "ikkem": RecordSelection("commit", "a documented tariff: every edit"),
}


def clone_path(archive: Archive, clones: Path | None, named: dict[str, Path]) -> Path | None:
    if archive.name in named:
        return named[archive.name]
    if clones is None:
        return None
    return clones / archive.repository.replace("/", "+") / "repo"


def _head(repo: Path) -> str:
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise ArchiveError(f"git rev-parse failed in {repo}: {done.stderr.strip()}")
    return done.stdout.strip()


def build_archive(archive: Archive, repo: Path, selection: RecordSelection
                  ) -> tuple[RecordArchive, dict[tuple[str, str], list[ArchiveOffer]], str]:
    """The archive's record part read from the clone: (its manifest entry, offers by version,
    a line saying what was left out)."""
    history = file_versions(repo, archive.pathspecs)
    chosen = choose_versions(archive, history, every=selection.every)
    versions: list[RecordVersion] = []
    offers: dict[tuple[str, str], list[ArchiveOffer]] = {}
    missing = refused = 0
    with blob_reader(repo) as blobs:
        for version in chosen:
            data = blobs.read(version.blob)
            if data is None:
                missing += 1
                continue
            try:
                parsed = archive.parse(data.decode("utf-8-sig"), version.path)
            except (ValueError, UnicodeDecodeError):
                refused += 1
                continue
            kept = sorted(parsed.offers, key=lambda o: o.line)
            versions.append(RecordVersion(version.commit, version.committed_at, version.path,
                                          body_sha256(data), len(kept)))
            offers[version_key(version.commit, version.path)] = kept
    entry = RecordArchive(archive.name, archive.repository, f"{archive.name}.jsonl.gz",
                          list(archive.pathspecs), archive.calendar_signal,
                          {"every": selection.every, "why": selection.why}, _head(repo),
                          sum(v.offers for v in versions), versions)
    note = (f"{len(history)} versions in the history, {len(chosen)} chosen, {missing} absent "
            f"from the clone, {refused} refused by the parser")
    return entry, offers, note


def build(clones: Path | None, named: dict[str, Path], out: Path = RECORD_DIR,
          say=print) -> dict[str, RecordArchive]:
    """Every archive of SELECTIONS that has a clone, written into `out`; the manifest keeps
    the entries of the others as they were."""
    out.mkdir(parents=True, exist_ok=True)
    try:
        kept = read_manifest(out)
    except RecordError:
        kept = {}
    for name, selection in SELECTIONS.items():
        archive = ARCHIVES.get(name)
        if archive is None:
            say(f"{name}: skipped, not an archive this code knows (pipelines/backfill/archives.py)")
            continue
        repo = clone_path(archive, clones, named)
        if repo is None or not repo.exists():
            say(f"{name}: skipped, no clone of {archive.repository}"
                + (f" at {repo}" if repo else ""))
            continue
        entry, offers, note = build_archive(archive, repo, selection)
        size = write_archive(out, entry, offers)
        kept[name] = entry
        span = (f"{entry.versions[0].committed_at:%Y-%m-%d} to "
                f"{entry.versions[-1].committed_at:%Y-%m-%d}" if entry.versions else "no dates")
        say(f"{name}: {len(entry.versions)} versions ({span}), {entry.rows:,} offers, "
            f"{size:,} bytes in {out / entry.file} ({note}; head {entry.head[:12]})")
    write_manifest(out, kept)
    return kept


def _named(values: list[str]) -> dict[str, Path]:
    named = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise SystemExit(f"--clone takes NAME=PATH, not {value!r}")
        named[name] = Path(path).expanduser()
    return named


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipelines.backfill.record_build",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--clones", type=Path, help="a directory of <owner>+<name>/repo clones")
    parser.add_argument("--clone", action="append", default=[], metavar="NAME=PATH",
                        help="one archive's clone (repeatable)")
    parser.add_argument("--out", type=Path, default=RECORD_DIR, help="the record's directory")
    args = parser.parse_args(argv)
    if args.clones is None and not args.clone:
        parser.error("name the clones: --clones DIR or --clone NAME=PATH")
    try:
        build(args.clones, _named(args.clone), args.out)
    except ArchiveError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
