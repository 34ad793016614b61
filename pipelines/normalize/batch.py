"""A batch of pending raw offers -> batch rows and quarantine rows, with the stages that need
more than one offer: "dedupe" (an offer twice in one crawl's hour), "consistency"
(consistency.py) and "error" (a parser bug, kept with its message). Pure: no I/O.
"""

import json
from collections import Counter
from datetime import UTC, datetime

import pandas as pd

from pipelines.normalize.consistency import inconsistent_rows
from pipelines.normalize.offer import normalize_offer
from pipelines.normalize.provenance import provenance
from pipelines.normalize.quarantine import Quarantined

OfferKey = tuple[str, int]   # (crawl_id, item_no): one pending offer


def normalize_each(pending: list[tuple]) -> dict[OfferKey, tuple[dict, dict] | Quarantined]:
    """Each pending offer normalized on its own, by (crawl_id, item_no): its row and its
    provenance, or the refusal. Nothing here depends on the other offers
    (normalize_offer reads one item), so a caller that makes several batches of the same offers
    normalizes each once and passes this to normalize_pending."""
    each: dict[OfferKey, tuple[dict, dict] | Quarantined] = {}
    for crawl_id, item_no, _source, item_json in pending:
        item = json.loads(item_json)
        try:
            each[(crawl_id, item_no)] = (normalize_offer(item), provenance(item))
        except Quarantined as exc:
            each[(crawl_id, item_no)] = exc
        except Exception as exc:  # a parser bug must not stop the run: quarantine it, say what
            each[(crawl_id, item_no)] = Quarantined("error", f"{type(exc).__name__}: {exc}")
    return each


def normalize_pending(pending: list[tuple], each: dict[OfferKey, tuple[dict, dict] | Quarantined]
                      | None = None) -> tuple[pd.DataFrame, list[dict]]:
    """Normalize (crawl_id, item_no, source, item_json) rows, in crawl order, into batch rows and
    quarantine rows; rows out of line with their vendor's single card are quarantined at stage
    "consistency". `each`: normalize_each of these offers (or of more), made once by a caller
    that batches the same offers more than once.

    An offer twice in one crawl's hour is quarantined ("dedupe"). An offer and hour an earlier
    crawl of the batch already has (an hour crawled again after a crash or by an overlapping run)
    is not a problem: the earlier crawl's row is kept and the later one dropped, unless the earlier
    row is refused for consistency, when the later one is refused with it. So every pending row
    ends in the batch, in quarantine, or dropped as re-crawled."""
    each = normalize_each(pending) if each is None else each
    rows, origins, quarantined = [], [], []
    kept_row: dict[tuple, int] = {}          # natural key -> index in rows of the kept row
    seen_in_crawl: set[tuple] = set()        # (crawl_id, natural key)
    recrawled: list[tuple[int, dict]] = []   # (index of the kept row, the later crawl's refusal)
    now = datetime.now(UTC)
    for crawl_id, item_no, source, item_json in pending:
        refusal = {"source": source, "crawl_id": crawl_id, "item_no": item_no,
                   "raw_item": item_json, "quarantined_at": now}
        normalized = each[(crawl_id, item_no)]
        if isinstance(normalized, Quarantined):
            quarantined.append({**refusal, "stage": normalized.stage,
                                "reason": normalized.reason})
            continue
        row, offer_provenance = normalized
        natural_key = (row["offer_id"], row["observed_hour"])
        if (crawl_id, natural_key) in seen_in_crawl:
            quarantined.append({**refusal, "stage": "dedupe",
                                "reason": "the same offer appears twice in one crawl hour"})
            continue
        seen_in_crawl.add((crawl_id, natural_key))
        if natural_key in kept_row:
            recrawled.append((kept_row[natural_key], refusal))
            continue
        kept_row[natural_key] = len(rows)
        rows.append({**row, "crawl_id": crawl_id, **offer_provenance})
        origins.append((item_no, item_json))
    out_of_line = inconsistent_rows(rows)
    for i, reason in out_of_line.items():
        item_no, item_json = origins[i]
        quarantined.append({"source": rows[i]["source"], "crawl_id": rows[i]["crawl_id"],
                            "item_no": item_no, "stage": "consistency", "reason": reason,
                            "raw_item": item_json, "quarantined_at": now})
    quarantined += [{**refusal, "stage": "consistency", "reason": out_of_line[kept]}
                    for kept, refusal in recrawled if kept in out_of_line]
    rows = [row for i, row in enumerate(rows) if i not in out_of_line]
    return pd.DataFrame(rows), quarantined


def crawl_counts(pending: list[tuple], quarantined: list[dict]) -> pd.DataFrame:
    """Per crawl of the batch: its offers that became observations (in the batch, or dropped as
    re-crawled: an earlier crawl's equal row stands for them) and those refused."""
    read = Counter(crawl_id for crawl_id, *_ in pending)
    refused = Counter(q["crawl_id"] for q in quarantined)
    return pd.DataFrame([{"crawl_id": crawl_id, "normalized_rows": offers - refused[crawl_id],
                          "quarantined_rows": refused[crawl_id]}
                         for crawl_id, offers in read.items()],
                        columns=["crawl_id", "normalized_rows", "quarantined_rows"])
