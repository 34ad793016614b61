"""`make bench`: figures for crawling, the SQL models at scale and the whole hourly run.

    python -m pipelines.tools.bench [--quick] [--year-offers 2000] [--skip-crawl]
                                    [--skip-growth] [--skip-run] [--days 7,30,365] [--hours 3]
                                    [--repeats 2] [--offers-from DB] [--work-dir DIR] [--out FILE]

It measures and prints; it asserts nothing. Timings on a shared machine are not pass/fail, so
each figure is printed next to its target with the gap, and everything lands in a JSON file
(`data/bench/bench-<UTC timestamp>.json`, or `--out`). The figures (issue 7, section 5):

  (a) crawl throughput over the replay server, in pages/s: plain HTTP pages (an HTML table, a
      JSON API) and Chromium-rendered pages, each with the polite default settings and with the
      engine's ceiling (no AutoThrottle, 16 requests in flight);
  (b) a simulated history (one year x 2,000 offers hourly, about 17.5 M observations): writing
      it, the full rebuild of every SQL model, the incremental one-hour update, the file size,
      the peak memory of each phase;
  (c) the floor: the same model SQL in a bare DuckDB session on the same data (floor and full
      rebuild alternate, `--repeats` times each, and the fastest of each is compared);
  (d) growth: (b) at one week, one month and one year;
  (e) `gpuprices run` on the bundled snapshots, end to end.

Each measured phase of (b)-(d) runs in a fresh Python process (`--phase`, internal), so its peak
resident memory (`ru_maxrss`, DuckDB's included: it runs in-process) is that phase's alone, and
an hourly update starts cold, as an hourly Dagster run does. The simulated databases live in a
temporary directory (never prices.db) that is removed at the end.

One module per part: `config` (sizes, targets), `crawl` (a), `phases` and `history` (b)-(d),
`whole_run` (e), `targets` (figure against target), `report` (machine, printed tables), `run`
(the whole bench, the JSON report) and `command` (the options; `__main__` runs it).
"""

from pipelines.tools.bench.command import main, parse_args
from pipelines.tools.bench.config import GIB, QUICK, Config
from pipelines.tools.bench.crawl import crawl_bench
from pipelines.tools.bench.history import bench_offers, best_run, history_bench, summarize_size
from pipelines.tools.bench.report import print_report
from pipelines.tools.bench.run import run_bench
from pipelines.tools.bench.targets import gap, targets
from pipelines.tools.bench.whole_run import whole_run_bench

__all__ = [
    "GIB",
    "QUICK",
    "Config",
    "bench_offers",
    "best_run",
    "crawl_bench",
    "gap",
    "history_bench",
    "main",
    "parse_args",
    "print_report",
    "run_bench",
    "summarize_size",
    "targets",
    "whole_run_bench",
]
