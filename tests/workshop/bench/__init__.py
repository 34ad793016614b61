"""`make bench`: figures for crawling, the SQL models at scale, publishing, CLI start-up, the
whole hourly run and the test suite.

    python -m tests.workshop.bench [--quick] [--year-offers 2000] [--skip-crawl]
                                    [--skip-growth] [--skip-run] [--skip-startup] [--suite]
                                    [--skip-backfill]
                                    [--days 7,30,365] [--hours 3] [--repeats 2]
                                    [--offers-from DB] [--work-dir DIR] [--out FILE]

It measures and prints; it asserts nothing. Timings on a shared machine are not pass/fail, so
each figure is printed next to its target with the gap, and everything lands in a JSON file
(`data/bench/bench-<UTC timestamp>.json`, or `--out`), whose `targets` list has one row per figure
of issue 14's table (`figure`, `unit`, `value`, `target`, `met`, `gap`). The figures:

  (a) crawl throughput over the replay server, in pages/s: plain HTTP pages (an HTML table, a
      JSON API) and Chromium-rendered pages, each with the polite default settings and with the
      engine's ceiling (no AutoThrottle, 16 requests in flight);
  (b) a simulated history (one year x 2,000 offers hourly, about 17.5 M observations): writing
      it, the full rebuild of every SQL model, the incremental one-hour update, the file size,
      the peak memory of each phase, and publishing it (checkpoint + `publish_database`);
  (c) the floor: the same model SQL in a bare DuckDB session on the same data (floor and full
      rebuild alternate, `--repeats` times each, and the fastest of each is compared);
  (d) growth: (b) at one week, one month and one year;
  (e) `gpuprices run` on the bundled snapshots, end to end;
  (f) CLI start-up: `gpuprices --help` and `gpuprices prices --limit 1` on a small published
      database, median of several subprocess runs, and whether either imports Dagster, Scrapy
      or Playwright;
  (g) `make test`'s pytest on a fresh clone of the committed repository: with `--suite` it is
      run and recorded in data/bench/suite-<UTC timestamp>.json; otherwise the last recorded
      figure is reported (or "not measured");
  (h) `gpuprices backfill` on a year of a SkyPilot-format catalog (made up, 1,251 commits):
      commits and rows per second, and the hourly run's cost (a crawl published, the models
      updated) before and after that year lands under two days of crawled history
      (`--skip-backfill`; `--quick`: 30 days).

Each measured phase of (b)-(d) runs in a fresh Python process (`--phase`, internal), so its peak
resident memory (`ru_maxrss`, DuckDB's included: it runs in-process) is that phase's alone, and
an hourly update starts cold, as an hourly Dagster run does. The simulated databases live in a
temporary directory (never prices.db) that is removed at the end.

One module per part: `config` (sizes, targets), `crawl` (a), `phases` and `history` (b)-(d),
`whole_run` (e), `startup` (f), `suite` (g), `backfill` (h), `targets` (figure against target),
`report` (machine, printed tables), `run` (the whole bench, the JSON report) and `command` (the
options; `__main__` runs it).
"""

from tests.workshop.bench.command import main, parse_args
from tests.workshop.bench.config import GIB, QUICK, Config
from tests.workshop.bench.crawl import crawl_bench
from tests.workshop.bench.history import bench_offers, best_run, history_bench, summarize_size
from tests.workshop.bench.report import print_report
from tests.workshop.bench.run import run_bench
from tests.workshop.bench.startup import startup_bench
from tests.workshop.bench.suite import last_suite_figure, suite_bench, summary_counts
from tests.workshop.bench.targets import gap, targets
from tests.workshop.bench.whole_run import whole_run_bench

__all__ = [
    "GIB",
    "QUICK",
    "Config",
    "bench_offers",
    "best_run",
    "crawl_bench",
    "gap",
    "history_bench",
    "last_suite_figure",
    "main",
    "parse_args",
    "print_report",
    "run_bench",
    "startup_bench",
    "suite_bench",
    "summarize_size",
    "summary_counts",
    "targets",
    "whole_run_bench",
]
