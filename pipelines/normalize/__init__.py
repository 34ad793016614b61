"""Normalization: raw offer -> typed `observations` row, or a quarantine row whose `stage` says
which rule refused it. Every stage lives in this package ("why was this price quarantined?"):

* offer.py: one offer alone: offer_kind, card, count, region, price, range, currency,
  effective_at, and bounds (the card's plausible CNY per GPU-hour, from the card catalog).
* consistency.py: consistency, a row out of line with its vendor's single card in the batch.
* batch.py: a batch of pending offers: dedupe (twice in one crawl's hour), error (a parser bug),
  and the consistency refusals applied; `normalize_pending` is what the pipeline runs.
* provenance.py: a backfilled offer's archive, commit, file and line, carried onto its row.

Pure, no I/O and no Dagster: pipelines/defs/normalize.py reads the pending offers and writes the
results. The batch functions (pandas) are imported from pipelines.normalize.batch; the names
below are the row-level ones most readers want.
"""

from pipelines.normalize.consistency import CONSISTENCY_FACTOR, inconsistent_rows
from pipelines.normalize.offer import (
    MAX_PRICE_AMOUNT,
    OFFER_KINDS,
    PRICE_BOUNDS_CNY_PER_GPU_HOUR,
    checked_amount,
    normalize_offer,
    observation_time,
    offer_id,
)
from pipelines.normalize.quarantine import Quarantined

__all__ = [
    "CONSISTENCY_FACTOR",
    "MAX_PRICE_AMOUNT",
    "OFFER_KINDS",
    "PRICE_BOUNDS_CNY_PER_GPU_HOUR",
    "Quarantined",
    "checked_amount",
    "inconsistent_rows",
    "normalize_offer",
    "observation_time",
    "offer_id",
]
