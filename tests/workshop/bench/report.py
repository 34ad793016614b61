"""The report: the machine the figures were taken on, and the tables printed at the end."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from spiders.layout import REPO_ROOT
from tests.workshop.bench.backfill import print_backfill
from tests.workshop.bench.config import GIB
from tests.workshop.bench.history import steady_updates


def machine() -> dict[str, Any]:
    import duckdb

    mem_total = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_total = int(line.split()[1]) * 1024
    except OSError:
        pass

    def git(*args: str) -> str | None:   # read-only: which models were measured
        try:
            return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None

    from pipelines.warehouse.db import DUCKDB_CONFIG

    status = git("status", "--porcelain", "--", "dbt_like_sql", "pipelines/warehouse/sql_models.py")
    return {"cpus": os.cpu_count(), "memory_bytes": mem_total, "platform": platform.platform(),
            "python": platform.python_version(), "duckdb": duckdb.__version__,
            "duckdb_config": dict(DUCKDB_CONFIG),
            "load_average_start": os.getloadavg(), "git_commit": git("rev-parse", "HEAD"),
            "models_uncommitted_changes": bool(status)}


def _fmt_s(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def _fmt_runs(phase: dict[str, Any] | None) -> str:
    """The fastest run, and the others in brackets ("-": not run, --skip-floor)."""
    if phase is None:
        return "-"
    others = sorted(phase.get("all_seconds", []))[1:]
    return _fmt_s(phase["seconds"]) + (f" ({', '.join(f'{x:.1f}' for x in others)})"
                                       if others else "")


def print_report(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 160)
    m = report["machine"]
    console.print(f"[bold]gpuprices bench[/] {report['started_at']} on {m['cpus']} CPUs, "
                  f"{(m['memory_bytes'] or 0) / GIB:.0f} GiB, load average "
                  f"{' '.join(f'{x:.1f}' for x in m['load_average_start'])} at start"
                  + (" (quick sizes)" if report["config"]["quick"] else ""))
    console.print(f"DuckDB {m['duckdb']} {m['duckdb_config']}; commit "
                  f"{(m['git_commit'] or '?')[:7]}"
                  + (" with uncommitted model changes" if m["models_uncommitted_changes"] else "")
                  + f"; models {', '.join(report.get('models_sha256') or ['-'])}")
    if report.get("crawl"):
        table = Table(title="(a) crawl throughput over the replay server")
        for col in ("crawl", "settings", "pages", "elapsed", "pages/s", "steady pages/s", "ok"):
            table.add_column(col, justify="left" if col in ("crawl", "settings", "ok") else "right")
        for r in report["crawl"]:
            table.add_row(r["label"], r["mode"], str(r.get("pages", 0)),
                          _fmt_s(r.get("elapsed_seconds")),
                          f"{r['pages_per_second']:.1f}" if r.get("pages_per_second") else "-",
                          f"{r['steady_pages_per_second']:.1f}"
                          if r.get("steady_pages_per_second") else "-",
                          "yes" if r.get("passed")
                          else "NO: " + "; ".join(r.get("failures", []))[:80])
        console.print(table)
    if report.get("history"):
        table = Table(title="(b)-(d) simulated history: SQL models (each phase a fresh process; "
                            "floor and full: fastest run, the others in brackets)")
        for col in ("history", "rows", "write", "rows/s", "file", "floor", "full", "full/floor",
                    "first update", "update (median)", "of it models", "publish",
                    "pipeline peak RSS"):
            table.add_column(col, justify="right")
        for s in report["history"]:
            table.add_row(f"{s['days']} d x {s['offers']}", f"{s['rows']:,}",
                          _fmt_s(s["generate"]["seconds"]),
                          f"{s['generate']['rows_per_second']:,.0f}",
                          f"{s['file_bytes'] / GIB:.2f} GiB", _fmt_runs(s["floor"]),
                          _fmt_runs(s["full"]),
                          "-" if s["full_over_floor"] is None else f"{s['full_over_floor']:.2f}x",
                          _fmt_s(s.get("incremental_first_seconds")),
                          _fmt_s(s["incremental_median_seconds"]),
                          _fmt_s(s["incremental_models_median_seconds"]),
                          _fmt_publish(s["publish"]),
                          f"{s['peak_rss_bytes'] / GIB:.2f} GiB")
        console.print(table)
        largest = report["history"][-1]
        table = Table(title=f"per model at {largest['days']} days x {largest['offers']} offers")
        for col in ("model", "floor", "full", "update (median)", "update how"):
            table.add_column(col, justify="left" if col in ("model", "update how") else "right")
        floor = {b["model"]: b["seconds"] for b in (largest["floor"] or {}).get("models", [])}
        inc: dict[str, list[float]] = {}
        how: dict[str, str] = {}
        for update in steady_updates(largest["incremental"]):
            for b in update["models"]:
                inc.setdefault(b["model"], []).append(b["seconds"])
                how[b["model"]] = b["how"]
        for b in largest["full"]["models"]:
            table.add_row(b["model"], _fmt_s(floor.get(b["model"])), _fmt_s(b["seconds"]),
                          _fmt_s(statistics.median(inc[b["model"]]) if inc.get(b["model"])
                                 else None), how.get(b["model"], "-"))
        console.print(table)
        table = Table(title="peak resident memory by phase, GiB (pipeline: full, update, "
                            "publish; write and floor for reference)")
        phases = ("generate", "floor", "full", "incremental", "publish")
        for col in ("history", "write", "floor", "full", "update", "publish"):
            table.add_column(col, justify="right")
        for s in report["history"]:
            p = s["peak_rss_bytes_by_phase"]
            table.add_row(f"{s['days']} d", *(f"{p[k] / GIB:.2f}" if k in p else "-"
                                              for k in phases))
        console.print(table)
    if report.get("whole_run"):
        r = report["whole_run"]
        runs = ", ".join(f"{s:.1f}" for s in r.get("hourly_runs_seconds") or [])
        console.print(f"(e) gpuprices run, the hourly run: {r['seconds']:.1f} s (median of "
                      f"{runs} s), exit code {r['exit_code']}, "
                      f"{r['sources_passed']}/{r['sources']} sources passed, "
                      f"{r.get('requests', 0)} requests")
        first = r.get("first_run")
        if first:
            console.print(f"    the first run before it (empty data directory and Dagster home): "
                          f"{first['seconds']:.1f} s, exit code {first['exit_code']}")
        steps = r.get("step_seconds") or {}
        if steps:
            crawl = steps.get("raw_offers", 0.0)
            rest = sum(steps.values()) - crawl
            console.print(f"    Dagster run {r.get('dagster_run_seconds') or 0:.1f} s: crawl step "
                          f"(raw_offers, every source) {crawl:.1f} s, the {len(steps) - 1} other "
                          f"steps {rest:.1f} s; the rest of the wall time is start-up")
            if r.get("crawl_span_seconds") is not None:
                console.print(f"    the crawl itself (first start to last finish, 1 s "
                              f"resolution) {r['crawl_span_seconds']:.0f} s: gpuprices run starts "
                              "it before the Dagster run, so the crawl step waits only for what "
                              "is left of it")
            slow = sorted(((v, k) for k, v in (r.get("crawl_seconds_by_source") or {}).items()
                           if v is not None), reverse=True)[:4]
            if slow:
                console.print("    slowest crawls: " + ", ".join(f"{k} {v:.0f} s" for v, k in slow))
        floor = r.get("floor")
        if floor:
            console.print(f"    floor {floor['seconds']:.1f} s: the crawl alone "
                          f"{floor['crawl_alone_seconds']:.1f} s, the models alone "
                          f"{floor['models_alone_seconds']:.1f} s (no Dagster; "
                          f"{r.get('record', '')})")
    _print_startup_and_suite(console, report)
    if report.get("backfill"):
        print_backfill(console, report["backfill"])
    table = Table(title="targets (issue 14): figure, target, gap")
    for col in ("figure", "value", "target", "gap"):
        table.add_column(col)
    for t in report["targets"]:
        if t["unit"] == "bytes":
            value = "-" if t["value"] is None else f"{t['value'] / GIB:.2f} GiB"
            target = f"<= {t['target'] / GIB:.0f} GiB"
        else:
            value = "-" if t["value"] is None else f"{t['value']:.2f} {t['unit']}"
            target = f"<= {t['target']:g} {t['unit']}"
        style = "green" if t["met"] else "red" if t["met"] is False else ""
        text = escape(t["gap"])
        table.add_row(escape(t["figure"]), value, target, f"[{style}]{text}[/]" if style else text)
    console.print(table)
    if len(report.get("models_sha256") or []) > 1:
        console.print("[yellow]the model SQL changed during this run (digests "
                      f"{', '.join(report['models_sha256'])}): figures mix versions[/]")
    console.print(f"figures: {report['out']}")


def _print_startup_and_suite(console, report: dict[str, Any]) -> None:
    from rich.markup import escape

    startup = report.get("startup")
    if startup:
        for name in ("help", "prices"):
            f = startup[name]
            runs = ", ".join(f"{x:.2f}" for x in f["all_seconds"][1:])
            console.print(escape(
                f"(f) gpuprices {' '.join(f['args'])}: median {_fmt_s(f['median_seconds'])} "
                f"(cold {f['cold_seconds']:.2f} s; warm runs {runs}); imports "
                f"{', '.join(f['heavy_imports']) or 'no Dagster, Scrapy or Playwright'}"))
    suite = report.get("suite")
    if suite:
        counts = ", ".join(f"{n} {k}" for k, n in (suite.get("counts") or {}).items())
        cpu = suite.get("cpu_share_of_one_core")
        console.print(escape(
            f"(g) {suite.get('command')} on a fresh clone of {str(suite.get('commit'))[:7]}: "
            f"{suite['seconds']:.0f} s, exit code {suite.get('exit_code')} ({counts or '?'}), "
            + (f"{cpu:.0%} of one core, " if cpu is not None else "")
            + f"recorded {suite.get('finished_at')} in {suite.get('recorded_in')}"))
    else:
        console.print("(g) the test suite: not measured (python -m tests.workshop.bench --suite)")


def _fmt_publish(publish: dict) -> str:
    """The hourly publish and how it was done; with the whole copy's time beside it when the
    generations were updated in place (phase_publish times both)."""
    method = publish.get("method", "copy")
    feeds = (f"; feeds {_fmt_s(publish['feeds_seconds'])}"
             if publish.get("feeds_seconds") is not None else "")
    if method == "generations" and publish.get("copy_seconds") is not None:
        return (f"{_fmt_s(publish['seconds'])} (generations; copy "
                f"{_fmt_s(publish['copy_seconds'])}{feeds})")
    return f"{_fmt_s(publish['seconds'])} ({method}{feeds})"
