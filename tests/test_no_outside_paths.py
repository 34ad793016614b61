"""No file of the repository cites a path outside it: a reader of a clone cannot follow
`../shared/DESIGN.md`. A relative path (`../x/y`) is outside when it leaves the repository from its
root, unless it names a file or folder of the repository from the citing file's own folder
(docs/deploy/README.md's `../../pipelines/deploy/`). The captured snapshots under data/ are the
vendors' bytes (their relative links are the vendors'), not ours, and are not read.

STILL_CITED lists the files allowed to cite an outside path while their evidence moves into the
repository (docs/sources.md, "Evidence kept here") or to the public documents it came from. It is
empty: every citation of the session's research notes was replaced. The list only shrinks: a file
that no longer cites one must leave it, and no other file may start."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
THIS = Path(__file__).resolve().relative_to(REPO).as_posix()
RELATIVE_PATH = re.compile(r"(?<![\w./])((?:\.\./)+[\w.-]+(?:/[\w.-]+)*)")
STILL_CITED: frozenset[str] = frozenset()


def _inside(path: Path) -> bool:
    return path.resolve().is_relative_to(REPO)


def _names_a_repository_file(path: Path) -> bool:
    return _inside(path) and path.exists()


def outside_paths(relative: str, text: str) -> list[str]:
    """The relative paths `text` (the file `relative` of the repository) cites outside it."""
    folder = (REPO / relative).parent
    return [cited for cited in RELATIVE_PATH.findall(text)
            if not _inside(REPO / cited) and not _names_a_repository_file(folder / cited)]


def _tracked_text_files() -> dict[str, str]:
    names = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True,
                           text=True).stdout.split("\0")
    files = {}
    for name in filter(None, names):
        # this file's own examples are not citations
        if name.startswith("data/") or name == THIS or not (REPO / name).is_file():
            continue
        try:
            files[name] = (REPO / name).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue     # a binary file cites nothing
    return files


def test_no_file_cites_a_path_outside_the_repository():
    citing = {name: found for name, text in _tracked_text_files().items()
              if (found := outside_paths(name, text))}
    assert not {n: f for n, f in citing.items() if n not in STILL_CITED}
    assert not STILL_CITED - set(citing), "cites nothing outside any more: leave STILL_CITED"


@pytest.mark.parametrize("relative, text, found", [
    ("pipelines/advisor/efficiency.toml", "that ../shared/DESIGN.md §1 collects",
     ["../shared/DESIGN.md"]),
    ("docs/deploy/README.md", "| `../../pipelines/deploy/` |", []),     # inside, from its folder
    ("docs/advisor.md", "see ../README.md", []),
    ("docs/sources.md", "in ../shared/research/x.md", ["../shared/research/x.md"]),
    ("README.md", "clone it to ../elsewhere/x", ["../elsewhere/x"]),
    ("docs/advisor.md", "https://example.test/../shared/x", []),        # a URL's path
])
def test_a_path_is_outside_when_it_leaves_the_repository(relative, text, found):
    assert outside_paths(relative, text) == found
