"""The bench's settings: what it measures at which sizes (`Config`, `QUICK`), the targets each
figure is compared with, and the small helpers every part shares."""

from __future__ import annotations

import resource
import sys
from dataclasses import dataclass, field
from pathlib import Path

# Targets of issue 7, section 5.
INCREMENTAL_TARGET_SECONDS = 5.0       # the hourly update at one year
INCREMENTAL_GROWTH_TARGET = 2.0        # incremental(year) / incremental(week)
FLOOR_RATIO_TARGET = 1.5               # full rebuild / bare-DuckDB floor
PEAK_MEMORY_TARGET_BYTES = 4 * 1024**3  # 4 GiB
WHOLE_RUN_TARGET_SECONDS = 60.0

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
    incremental_hours: int = 3                  # consecutive hourly updates measured per size
    repeats: int = 2                            # floor and full rebuild runs per size (best kept)
    crawl_pages: dict[str, int] = field(
        default_factory=lambda: {"html": 300, "json": 300, "playwright": 40})
    crawl_modes: tuple[str, ...] = ("polite", "ceiling")
    crawl: bool = True
    growth: bool = True
    whole_run: bool = True
    offers_from: Path | None = None             # a database's latest prices instead of the run's
    work_dir: Path | None = None                # where the simulated databases go (a temp dir)
    quick: bool = False

    @property
    def sizes(self) -> tuple[int, ...]:
        return self.days if self.growth else self.days[-1:]


QUICK = Config(offers=200, days=(7, 14, 30),
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
