"""No command ends in a traceback for an output path it cannot use, and none replaces a file that
is not its own (issue 30): every writing command (found through the click group,
tests/cli/output_walk.py) is walked through a regular file where its directory belongs, a path
under a file, /proc, a device, a read-only mount and a full file system (the mounts in a private
mount namespace, root only), by its own --out / --db / --data-dir and by the group's --data-dir.
Each ends with one "Error:" line and exit 2 (the path is wrong) or 1 (the machine refuses)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import click
import pytest

from pipelines.cli.output_paths import is_report_page, output_dir, output_file
from tests.cli.output_walk import READERS, WRITERS, command, invoke, main, output_options
from tests.helpers.published import gpuprices

FOREIGN = "not gpuprices' output: keep me\n"


def test_every_command_is_a_writer_or_a_reader():
    """A new command is walked from the day it is registered: it has to be put in one list."""
    assert set(main.commands) == set(WRITERS) | READERS, \
        "put the new command in tests/cli/output_walk.py's WRITERS (with its minimal arguments) "\
        "or READERS"
    assert not set(WRITERS) & READERS


def test_the_walk_finds_the_commands_own_output_options():
    assert output_options("report") == ["--out", "--data-dir"]
    assert output_options("export") == ["--out"]
    assert output_options("simulate") == ["--db"]


def is_directory_option(name: str, option: str) -> bool:
    param = next(p for p in command(name).params if p.opts and p.opts[0] == option)
    return not param.type.file_okay


def cases(bad_dir: str, bad_file: str, existing_dir: Path,
          group_dir: str | None = None) -> list[list[str]]:
    """Every writer with the group's --data-dir at `group_dir` (default `bad_dir`), and with each
    of its own output options at `bad_dir` (a directory option) or `bad_file` (a file
    option)."""
    walked = []
    for name, minimal in WRITERS.items():
        args = [a.replace("{dir}", str(existing_dir)) for a in minimal]
        walked.append(["--data-dir", group_dir or bad_dir, name, *args])
        for option in output_options(name):
            bad = bad_dir if is_directory_option(name, option) else bad_file
            walked.append([name, *args, option, bad])
    return walked


def assert_one_line_refusal(outcome, codes=(1, 2)) -> None:
    where = " ".join(outcome.args)
    assert not outcome.traceback, f"{where}:\n{outcome.traceback}"
    assert "Traceback" not in outcome.output, where
    assert outcome.exit_code in codes, f"{where}: exit {outcome.exit_code}\n{outcome.output}"
    errors = [line for line in outcome.output.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and len(errors[0]) < 1000, f"{where}:\n{outcome.output}"


@pytest.fixture
def foreign(tmp_path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text(FOREIGN, encoding="utf-8")
    return path


@pytest.mark.parametrize("case", ["a file", "under a file", "/proc", "a device"])
def test_no_writer_tracebacks_on_a_path_it_cannot_use(case, foreign, tmp_path):
    bad_dir, bad_file = {
        "a file": (foreign, foreign),
        "under a file": (foreign / "sub", foreign / "sub" / "out.html"),
        "/proc": (Path("/proc/gpuprices-nope"), Path("/proc/gpuprices-nope/out.html")),
        "a device": (Path("/dev/full"), Path("/dev/full")),
    }[case]
    data_dir, home = tmp_path / "data", tmp_path / "home"
    data_dir.mkdir()
    for args in cases(str(bad_dir), str(bad_file), tmp_path):
        outcome = invoke(args, data_dir, home)
        # a wrong path is the caller's mistake (2); /proc refuses the write (1)
        assert_one_line_refusal(outcome, (1,) if case == "/proc" else (1, 2))
    assert foreign.read_text(encoding="utf-8") == FOREIGN
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


MOUNTS = {
    "read-only": 'mount --bind "$DATA" "$DATA" && mount -o remount,ro,bind "$DATA"',
    # a small file system, filled: a published database fits, and not one block more
    "full": ('mount -t tmpfs -o size=24m tmpfs "$DATA" && cp -a "$SOURCE"/. "$DATA"/ && '
             '{ dd if=/dev/zero of="$DATA/.filler" bs=64k 2>/dev/null; true; }'),
}


@pytest.mark.skipif(not shutil.which("unshare") or os.geteuid() != 0,
                    reason="needs root and unshare for private mounts")
@pytest.mark.parametrize("mount", sorted(MOUNTS))
def test_no_writer_tracebacks_on_a_read_only_or_full_file_system(mount, data_dir, tmp_path):
    """Inside the mount, the data directory holds a published database (so export and report
    reach their writes); every writer refuses with exit 1 in one line."""
    target = tmp_path / "data"
    shutil.copytree(data_dir, target)
    source = tmp_path / "source"
    shutil.copytree(data_dir, source)
    spec = {"cwd": str(Path.cwd()), "data_dir": str(target), "home": str(tmp_path / "home"),
            "cases": cases(str(target / "sub"), str(target / "out.html"), tmp_path, str(target))
            + [[name, *opts] for name, opts in (("export", ["--out", str(target / "x")]),
                                                 ("report", ["--out", str(target / "r.html")]))]}
    script = (f"{MOUNTS[mount]} || exit 97; exec {sys.executable} -m tests.cli.output_walk "
              + "'" + json.dumps(spec).replace("'", "'\\''") + "'")
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                          env={**os.environ, "DATA": str(target), "SOURCE": str(source)},
                          capture_output=True, text=True, timeout=300)
    if proc.returncode == 97:
        pytest.skip(f"mounts are not allowed here: {proc.stderr.strip()}")
    outcomes = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(outcomes) == len(spec["cases"]), proc.stdout + proc.stderr
    for outcome in outcomes:
        assert_one_line_refusal(type("Outcome", (), outcome), (1,))
        reason = "read-only file system" if mount == "read-only" else "no space left"
        first_error = next(line for line in outcome["output"].splitlines()
                           if line.startswith("Error"))
        assert reason in first_error.lower() or (
            mount == "full" and "free on the filesystem" in first_error), outcome


# --- a file that is not ours is not replaced without --force -------------------------------------

def test_report_out_onto_a_foreign_file_refuses_without_force(data_dir, foreign):
    refused = gpuprices(data_dir, "report", "--out", str(foreign))
    assert refused.exit_code == 2 and "refusing to replace it (--force replaces it)" in \
        refused.output
    assert foreign.read_text(encoding="utf-8") == FOREIGN
    forced = gpuprices(data_dir, "report", "--out", str(foreign), "--force")
    assert forced.exit_code == 0, forced.output
    assert is_report_page(foreign)
    again = gpuprices(data_dir, "report", "--out", str(foreign))   # our page now: replaced
    assert again.exit_code == 0, again.output


def test_export_onto_foreign_files_refuses_without_force(data_dir, tmp_path):
    out = tmp_path / "export"
    first = gpuprices(data_dir, "export", "--format", "csv", "--out", str(out))
    assert first.exit_code == 0, first.output
    again = gpuprices(data_dir, "export", "--format", "csv", "--out", str(out))
    assert again.exit_code == 0, again.output                      # its own files: replaced
    victim = sorted(out.glob("*.csv"))[0]
    victim.write_text(FOREIGN, encoding="utf-8")
    victim.with_name(victim.name.replace(".csv", ".schema.json")).unlink()
    refused = gpuprices(data_dir, "export", "--format", "csv", "--out", str(out))
    assert refused.exit_code == 2 and victim.name in refused.output
    assert victim.read_text(encoding="utf-8") == FOREIGN
    forced = gpuprices(data_dir, "export", "--format", "csv", "--out", str(out), "--force")
    assert forced.exit_code == 0 and victim.read_text(encoding="utf-8") != FOREIGN


@pytest.mark.parametrize("head", [b"<!DOCTYPE html><title>My notes</title>", b"gpuprices report",
                                  b"", b"\xff\xfe<title>gpuprices report</title>"])
def test_only_a_page_titled_as_the_report_is_ours(tmp_path, head):
    page = tmp_path / "page.html"
    page.write_bytes(head)
    assert not is_report_page(page)
    page.write_bytes(b"<!DOCTYPE html>\n<html><head><title>GPU rental prices \xe2\x80\x94 "
                     b"gpuprices report 2026-12-02 06:09 UTC</title>")
    assert is_report_page(page)


# --- the helpers, case by case ----------------------------------------------------------------

def test_output_dir_creates_nothing_while_checking(tmp_path):
    target = tmp_path / "a" / "b"
    assert output_dir(target, "--out") == target
    assert not (tmp_path / "a").exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("errno_name", "code", "words"), [
    ("ENOSPC", 1, "no space left on the device"), ("EROFS", 1, "a read-only file system"),
    ("EACCES", 1, "permission denied"), ("EDQUOT", 1, "the disk quota is used up"),
    ("ENOTDIR", 2, "a part of the path is a file"),
])
def test_each_write_error_is_one_line_with_its_exit_code(tmp_path, monkeypatch, errno_name,
                                                         code, words):
    import builtins
    import errno

    real_open = builtins.open

    def refusing_open(path, mode="r", *args, **kwargs):
        if "w" in mode and ".gpuprices-probe." in str(path):
            raise OSError(getattr(errno, errno_name), os.strerror(getattr(errno, errno_name)))
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refusing_open)
    with pytest.raises(click.ClickException) as refused:
        output_file(tmp_path / "page.html", "--out", force=False, is_own=is_report_page,
                    kind="report page")
    assert refused.value.exit_code == code
    assert words in refused.value.format_message() and "\n" not in \
        refused.value.format_message()
