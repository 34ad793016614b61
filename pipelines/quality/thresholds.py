"""Every number a data-quality check judges by, each with why it is where it is. The checks
(pipelines/defs/quality.py) pass them to their SQL and their expectation suites (suites.py);
the rules that refuse a single offer are normalization's (pipelines/normalize/)."""

import os

# A slice's price per whole-GPU equivalent below this share of the same vendor's whole card (same
# card, region, kind, period) is implausible: slices sell at or above pro-rata, not at half.
MIN_SLICE_TO_WHOLE_PER_GPU = 0.5
# A source's batch may not shrink below this share of its median volume over its last crawls ...
MIN_VOLUME_RATIO = 0.5
TRAILING_CRAWLS = 7
# ... and its median price per card may not move by more than this factor from its last crawl
# (a misread currency moves it ~7x, a 厘/元 slip 1000x; real market moves are far smaller).
MAX_PRICE_LEVEL_FACTOR = 3.0
# An observation may be this far ahead of the checking clock (the crawler's clock and the
# checker's may differ a little); further ahead it is a misread date.
FUTURE_SKEW_MINUTES = 5
# A source without a passing crawl for longer is reported stale (a warning, not a block).
FRESHNESS_HOURS = float(os.environ.get("GPUPRICES_FRESHNESS_HOURS", "3"))
# How far back the uniqueness check looks: the hours a run writes, with room for a late crawl.
UNIQUE_WINDOW_HOURS = 72
# A crawl a blocking rule holds back is settled by the crawls of its source that follow it
# (pipelines/quality/settlement.py): its new level is real when this many of them confirm it
# (each within the bounds of the held crawl's level, still outside those of the level before);
# an hourly schedule lands a lasting move two hours late, a one-hour spike never.
CONFIRMING_CRAWLS = 2
# A hold neither confirmed nor reverted after this many hours raises an alert naming the source,
# the crawl and the command that settles it (gpuprices accept / reject).
HOLD_ALERT_HOURS = float(os.environ.get("GPUPRICES_HOLD_ALERT_HOURS", "6"))
