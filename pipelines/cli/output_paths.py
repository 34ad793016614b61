"""Where a command writes (--out, --db, --data-dir, and their defaults under the data directory),
checked before anything is written, and write failures said in one line.

Every writing command calls `output_dir` or `output_file` on its target first: a file where a
directory belongs (or the reverse, or a path under a file) is a usage error (exit 2); a place the
command cannot write (permission, a read-only file system, no space left, a file system that
takes no files such as /proc) fails it (exit 1). Nothing is created by the check: a real write
of a small probe file in the target, or in its nearest existing ancestor, tells what the write
would meet (root passes any permission check; a read-only mount or a full disk do not).

An existing file that is not gpuprices' own output (`is_own` says what is) is never replaced
without --force; a file that is not a regular file (a device such as /dev/full, a FIFO) never.
`write_errors` turns an OSError or a DuckDB I/O error raised while writing (the disk filled up
meanwhile) into the same one-line failure."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from pipelines.cli.exit_codes import EXIT_RUN_FAILED

# What a failed write meets, in words; the errno's own text otherwise.
REASONS = {errno.EROFS: "a read-only file system", errno.ENOSPC: "no space left on the device",
           errno.EDQUOT: "the disk quota is used up", errno.EACCES: "permission denied",
           errno.EPERM: "not permitted", errno.ENOENT: "the file system takes no new files there",
           errno.ENOTDIR: "a part of the path is a file, not a directory"}
# Errors that are the path's fault (the user named a wrong one), not the machine's.
USAGE_ERRNOS = frozenset({errno.ENOTDIR, errno.EISDIR, errno.EEXIST})
PROBE_BYTES = 4096   # one block: a full disk refuses it where an empty file would still fit


class OutputFailed(click.ClickException):
    """The command could not write where it was asked to (exit 1); one line, no traceback."""

    exit_code = EXIT_RUN_FAILED


def reason(exc: OSError) -> str:
    return REASONS.get(exc.errno, exc.strerror or str(exc))


def refuse(path: Path, exc: OSError, option: str) -> click.ClickException:
    """The one-line error for `exc` met writing `path`: usage (2) or failed (1)."""
    if exc.errno in USAGE_ERRNOS:
        return click.BadParameter(f"cannot write {path}: {reason(exc)}", param_hint=option)
    return OutputFailed(f"{option}: cannot write {path}: {reason(exc)}")


def nearest_existing(path: Path) -> Path:
    """`path` or its closest ancestor that exists."""
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            return candidate
    return Path(path.anchor or ".")


def probe_writable(directory: Path, target: Path, option: str) -> None:
    """Write (and remove) a small file in `directory`, the place `target` would be made in."""
    probe = directory / f".gpuprices-probe.{os.getpid()}.tmp"
    try:
        with open(probe, "wb") as fh:
            fh.write(b"\0" * PROBE_BYTES)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        raise refuse(target, exc, option) from None
    finally:
        # a read-only file system refuses the unlink of what it never made
        with contextlib.suppress(OSError):
            probe.unlink(missing_ok=True)


def output_dir(path: Path, option: str, for_file: Path | None = None) -> Path:
    """`path` as a directory to write files in: an existing directory, or one that can be made
    (its nearest existing ancestor is a directory that takes files). Returns it absolute. The
    messages name `for_file` when the directory is that file's."""
    path = Path(path).expanduser().absolute()
    named = for_file or path
    existing = nearest_existing(path)
    if not existing.is_dir():
        what = "is a file" if existing == named else f"is under {existing}, a file"
        raise click.BadParameter(f"{named} {what}, not a directory", param_hint=option)
    probe_writable(existing, named, option)
    return path


def output_file(path: Path, option: str, *, force: bool, is_own: Callable[[Path], bool],
                kind: str, force_option: str | None = "--force") -> Path:
    """`path` as a file to (re)write: not a directory, not a device, and when it exists, either
    gpuprices' own `kind` (`is_own`) or `force` (`force_option`, None for a command that never
    replaces a foreign file). Returns it absolute."""
    path = Path(path).expanduser().absolute()
    if path.is_dir():
        raise click.BadParameter(f"{path} is a directory; give a file name", param_hint=option)
    if os.path.lexists(path):
        if not path.is_file():
            raise click.BadParameter(f"{path} exists and is not a regular file (a device, a "
                                     "FIFO or a broken link); gpuprices never replaces one",
                                     param_hint=option)
        if not force and not is_own(path):
            hint = f" ({force_option} replaces it)" if force_option else ""
            raise click.BadParameter(f"{path} exists and is not a {kind} gpuprices wrote; "
                                     f"refusing to replace it{hint}", param_hint=option)
    output_dir(path.parent, option, for_file=path)
    return path


def foreign_files(paths: list[Path], is_own: Callable[[Path], bool]) -> list[Path]:
    """The files of `paths` that exist and are not gpuprices' own (or are no regular file)."""
    return [p for p in paths if os.path.lexists(p) and (not p.is_file() or not is_own(p))]


def refuse_foreign(paths: list[Path], option: str, force: bool, kind: str) -> None:
    """A usage error naming the first foreign file of `paths` (and how many more), unless
    `force` (which still never replaces a file that is not a regular file)."""
    devices = [p for p in paths if not p.is_file()]
    shown = devices or ([] if force else paths)
    if shown:
        more = f" and {len(shown) - 1} more" if len(shown) > 1 else ""
        raise click.BadParameter(f"{shown[0]}{more} exists and is not a {kind} gpuprices wrote; "
                                 "refusing to replace it"
                                 + ("" if devices else " (--force replaces it)"),
                                 param_hint=option)


def first_line(path: Path, limit: int = 64 * 1024) -> str:
    """The first line of a text file (a UTF-8 BOM dropped); '' when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(limit)
    except OSError:
        return ""
    return head.split(b"\n", 1)[0].rstrip(b"\r").decode("utf-8", "replace").lstrip("\ufeff")


# The report page's title names it (pipelines/report/templates/page.html.j2):
# "<title>GPU rental prices — gpuprices report 2026-12-02 06:09 UTC</title>"
REPORT_MARK = b"gpuprices report"


def is_report_page(path: Path) -> bool:
    """Whether `path` is a page `gpuprices report` (or the run) wrote: an HTML document whose
    title, within its first 2 KB, names the gpuprices report."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(2048)
    except OSError:
        return False
    title = head.partition(b"<title>")[2].partition(b"</title>")[0]
    return head.lstrip().lower().startswith(b"<!doctype html") and REPORT_MARK in title


@contextmanager
def write_errors(path: Path, option: str) -> Iterator[None]:
    """An OSError or a DuckDB I/O error of the block (the disk filled up while writing) becomes
    the one-line failure naming `path`."""
    import duckdb

    try:
        yield
    except OSError as exc:
        raise refuse(path, exc, option) from None
    except duckdb.IOException as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "I/O error"
        raise OutputFailed(f"{option}: cannot write {path}: {first}") from None
