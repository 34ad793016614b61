"""`python -m tests.workshop.bench`: the command-line options, and the entry point that either
runs the bench or, with the internal `--phase`, one measured phase in this process."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from tests.workshop.bench.config import QUICK, Config
from tests.workshop.bench.phases import phase_main
from tests.workshop.bench.report import print_report
from tests.workshop.bench.run import run_bench


def _days(text: str) -> tuple[int, ...]:
    days = tuple(sorted(int(d) for d in text.split(",") if d.strip()))
    if not days or days[0] < 1:
        raise argparse.ArgumentTypeError("days: comma-separated positive integers, e.g. 7,30,365")
    return days


def parse_args(argv: Sequence[str] | None = None) -> tuple[argparse.Namespace, Config]:
    parser = argparse.ArgumentParser(
        prog="python -m tests.workshop.bench",
        description="Figures for crawling, the SQL models at scale, publishing, CLI start-up, the "
                    "whole hourly run and the test suite, each with its gap to the target. "
                    "Measures only: never fails on a slow figure.")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes (200 offers; 7, 14 and 30 days; fewer crawl pages)")
    parser.add_argument("--year-offers", type=int, default=None, metavar="N",
                        help="offers in the simulated history (default 2000; --quick 200)")
    parser.add_argument("--days", type=_days, default=None, metavar="A,B,C",
                        help="history sizes in days, the largest last (default 7,30,365)")
    parser.add_argument("--hours", type=int, default=4, metavar="N",
                        help="consecutive hourly updates measured per size (the first after "
                             "the full rebuild reported alone, the median of the others)")
    parser.add_argument("--repeats", type=int, default=2, metavar="N",
                        help="floor and full-rebuild runs per size, alternating (fastest kept)")
    parser.add_argument("--skip-crawl", action="store_true", help="skip (a), crawl throughput")
    parser.add_argument("--skip-growth", action="store_true",
                        help="only the largest history size (skip (d))")
    parser.add_argument("--skip-floor", action="store_true",
                        help="skip (c), the bare-DuckDB floor (as long as a full rebuild: at "
                             "20,000 offers x a year, minutes)")
    parser.add_argument("--skip-run", action="store_true", help="skip (e), the whole run")
    parser.add_argument("--skip-startup", action="store_true", help="skip (f), CLI start-up")
    parser.add_argument("--skip-backfill", action="store_true",
                        help="skip (h), the backfill's rate and the hourly run around it")
    parser.add_argument("--suite", action="store_true",
                        help="(g) also time make test's pytest on a fresh clone of the committed "
                             "repository (minutes) and record it in data/bench/suite-*.json; "
                             "without it the last recorded figure is reported")
    parser.add_argument("--offers-from", type=Path, default=None, metavar="DB",
                        help="take the offers from this database's latest prices (read-only)")
    parser.add_argument("--work-dir", type=Path, default=None, metavar="DIR",
                        help="where the simulated databases go (default: a temporary directory)")
    parser.add_argument("--out", type=Path, default=None, metavar="FILE",
                        help="the JSON report (default data/bench/bench-<UTC timestamp>.json)")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("--phase-args", help=argparse.SUPPRESS)
    parser.add_argument("--phase-out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    config = QUICK if args.quick else Config()
    config = replace(config, offers=args.year_offers or config.offers,
                     days=args.days or config.days, incremental_hours=max(1, args.hours),
                     repeats=max(1, args.repeats),
                     crawl=not args.skip_crawl, growth=not args.skip_growth,
                     floor=not args.skip_floor,
                     whole_run=not args.skip_run, startup=not args.skip_startup,
                     backfill=not args.skip_backfill,
                     suite=args.suite, offers_from=args.offers_from,
                     work_dir=args.work_dir)
    if config.offers < 1:
        parser.error("--year-offers must be at least 1")
    if config.offers_from is not None and not config.offers_from.is_file():
        parser.error(f"--offers-from {config.offers_from}: no such database")
    return args, config


def main(argv: Sequence[str] | None = None) -> None:
    args, config = parse_args(argv)
    if args.phase:
        phase_main(args.phase, args.phase_args, args.phase_out)
        return
    report = run_bench(config, args.out)
    print_report(report)
