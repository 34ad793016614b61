"""Whether a run loads the public price record: `GPUPRICES_RECORD=off` (or `gpuprices run
--no-record`) leaves it out. Its own module because `gpuprices run` asks before every run, and
the loader (record_load.py) imports Scrapy and pandas with it: 0.7-1.1 s of a replayed run's
start-up for a run that loads nothing."""

from __future__ import annotations

import os

RECORD_ENV = "GPUPRICES_RECORD"
OFF_VALUES = frozenset({"off", "0", "false", "no"})


def record_enabled(environ=os.environ) -> bool:
    """Whether a run loads the record: yes unless GPUPRICES_RECORD says off."""
    return environ.get(RECORD_ENV, "on").strip().lower() not in OFF_VALUES
