"""The history of an archive's files, read from git (never the working tree): every version a
commit of the first-parent line left of a file, oldest first, and the bytes of each version.

`git log --raw` lists, per commit, the blob each changed file now has, so one command walks the
whole history; `git cat-file --batch` streams the blobs. A clone may lack a blob (a partial
clone, a mirror that left large objects out): reading it says so instead of failing the walk.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

COMMIT_MARK = "@@commit "
NO_BLOB = "0" * 40


class ArchiveError(Exception):
    """The path is not a git repository, or git failed reading it."""


@dataclass(frozen=True)
class Version:
    """One file as one commit left it."""

    commit: str
    committed_at: datetime      # the commit's committer time, UTC
    path: str
    blob: str


def _git(repo: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              check=False)
    except FileNotFoundError as exc:
        raise ArchiveError("git is not installed") from exc
    if done.returncode != 0:
        raise ArchiveError(f"git {' '.join(args[:2])} failed in {repo}: {done.stderr.strip()}")
    return done.stdout


def parse_log(text: str) -> list[Version]:
    """`git log --raw --format=@@commit %H %ct` output -> the versions it lists (a deleted file
    has no version)."""
    versions: list[Version] = []
    commit, when = None, None
    for line in text.splitlines():
        if line.startswith(COMMIT_MARK):
            sha, stamp = line[len(COMMIT_MARK):].split()
            commit, when = sha, datetime.fromtimestamp(int(stamp), UTC)
        elif line.startswith(":") and commit is not None:
            meta, _, path = line.partition("\t")
            blob = meta.split()[3]
            if blob != NO_BLOB:
                versions.append(Version(commit, when, path, blob))
    return versions


def file_versions(repo: str | Path, pathspecs: Sequence[str], rev: str = "HEAD") -> list[Version]:
    """Every version of the files matching `pathspecs` (git glob pathspecs) along `rev`'s
    first-parent history, oldest first."""
    repo = Path(repo)
    if not (repo / ".git").exists() and _git(repo, "rev-parse", "--is-bare-repository"
                                            ).strip() != "true":
        raise ArchiveError(f"{repo} is not a git repository")
    text = _git(repo, "log", "--reverse", "--first-parent", "--diff-merges=first-parent",
                "--no-renames", "--raw", "--no-abbrev", f"--format={COMMIT_MARK}%H %ct", rev,
                "--", *(f":(glob){p}" for p in pathspecs))
    return parse_log(text)


class BlobReader:
    """Reads blobs through one `git cat-file --batch` process."""

    def __init__(self, repo: str | Path) -> None:
        self._proc = subprocess.Popen(["git", "-C", str(repo), "cat-file", "--batch"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def read(self, blob: str) -> bytes | None:
        """The blob's bytes; None when the clone does not hold it."""
        assert self._proc.stdin and self._proc.stdout
        self._proc.stdin.write(f"{blob}\n".encode())
        self._proc.stdin.flush()
        header = self._proc.stdout.readline().decode().split()
        if len(header) < 3 or header[1] == "missing":
            return None
        size = int(header[2])
        data = self._proc.stdout.read(size)
        self._proc.stdout.read(1)           # the newline after the object
        return data

    def close(self) -> None:
        if self._proc.stdin:
            self._proc.stdin.close()
        self._proc.wait(timeout=10)


@contextmanager
def blob_reader(repo: str | Path) -> Iterator[BlobReader]:
    reader = BlobReader(repo)
    try:
        yield reader
    finally:
        reader.close()
