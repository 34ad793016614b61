"""The bench's settings: what it measures at which sizes (`Config`, `QUICK`), the targets each
figure is compared with, and the small helpers every part shares."""

from __future__ import annotations

import resource
import sys
from dataclasses import dataclass, field
from pathlib import Path

# Targets of issue 45 (issue 14's, tightened: the hour stays flat), each an upper bound.
INCREMENTAL_TARGET_SECONDS = 1.5       # the hourly update at one year x 2,000 (load + models)
INCREMENTAL_GROWTH_TARGET = 1.2        # incremental(year) / incremental(week)
FLOOR_RATIO_TARGET = 1.2               # full rebuild / bare-DuckDB floor
PEAK_MEMORY_TARGET_BYTES = 3 * 1024**3  # 3 GiB
WHOLE_RUN_TARGET_SECONDS = 10.0        # `gpuprices run` on the bundled snapshots, start-up included
# ... or at most this many times its floor: the crawl alone plus the models alone (no Dagster)
WHOLE_RUN_FLOOR_RATIO_TARGET = 1.5
# Start-up is part of every command: --help must stay instant and a read-only command must not
# pay for Dagster, Scrapy or Playwright (about 0.3 s of Python, click and DuckDB is the floor here).
STARTUP_HELP_TARGET_SECONDS = 0.5      # `gpuprices --help`, median
STARTUP_READ_TARGET_SECONDS = 1.0      # `gpuprices prices --limit 1` on a small database, median
PUBLISH_TARGET_SECONDS = 1.0           # checkpoint + publish_database at one year
PUBLISH_GROWTH_TARGET = 1.2            # publish(year) / publish(week): cost follows the hour
LARGE_OFFERS = 20_000                  # --year-offers at which the next target applies
LARGE_UPDATE_PUBLISH_TARGET_SECONDS = 3.0  # hourly update + publish at one year x 20,000
SUITE_TARGET_SECONDS = 8 * 60.0        # `make test`'s pytest on a fresh clone, quiet machine
STARTUP_HEAVY_MODULES = ("dagster", "scrapy", "playwright")

GIB = 1024**3
PIPELINE_PHASES = ("full", "incremental", "publish")   # what the hourly pipeline itself runs
HISTORY_START = "2025-01-01T12:00"     # a noon start: the hourly updates measured after the
                                       # history rebuild a half-full day, as mid-day runs do
SEED = 0


@dataclass(frozen=True)
class Config:
    """What the bench measures, and at which sizes (`--quick` starts from QUICK)."""

    offers: int = 2000                          # offers in the simulated history
    days: tuple[int, ...] = (7, 30, 365)        # history sizes; the last one is "the year"
    incremental_hours: int = 4                  # consecutive hourly updates measured per size
    repeats: int = 2                            # floor and full rebuild runs per size (best kept)
    crawl_pages: dict[str, int] = field(
        default_factory=lambda: {"html": 300, "json": 300, "playwright": 40})
    crawl_modes: tuple[str, ...] = ("polite", "ceiling")
    crawl: bool = True
    growth: bool = True
    floor: bool = True                          # (c): at 20,000 offers it costs a full rebuild
    whole_run: bool = True
    startup: bool = True
    # (h) the backfill's rate and the hourly run around it: on from the command line
    # (--skip-backfill turns it off), off for a Config built in code
    backfill: bool = False
    backfill_days: int = 365                    # days of catalog history backfilled
    startup_runs: int = 5                       # subprocess runs per command (median reported)
    suite: bool = False                         # time the test suite on a fresh clone (--suite)
    offers_from: Path | None = None             # a database's latest prices instead of the run's
    work_dir: Path | None = None                # where the simulated databases go (a temp dir)
    quick: bool = False

    @property
    def sizes(self) -> tuple[int, ...]:
        return self.days if self.growth else self.days[-1:]


QUICK = Config(offers=200, days=(7, 14, 30), startup_runs=3, backfill_days=30,
               crawl_pages={"html": 60, "json": 60, "playwright": 8}, quick=True)


def say(text: str) -> None:
    """Progress on stderr, so stdout carries only the report."""
    print(f"[bench] {text}", file=sys.stderr, flush=True)


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024   # KiB on Linux


def file_bytes(path: Path) -> int:
    """A DuckDB database's size on disk, its write-ahead log included."""
    wal = Path(f"{path}.wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
