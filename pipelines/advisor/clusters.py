"""What a vendor sells beyond one card: the largest server it lists for a card (n single cards
run in one server of at most that size), and the offers whose vendor states a cluster
interconnect between servers (clusters.toml: InfiniBand, RoCE, a cluster product), the only ones
run across servers."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pipelines.advisor.offers import Offer

_TOML = Path(__file__).with_name("clusters.toml")


@dataclass(frozen=True)
class ClusterStatement:
    """A vendor's statement that servers of some of its offers are linked for cluster jobs."""

    vendor: str
    sku: re.Pattern
    interconnect: str
    source: str
    consumer_cards: bool = False

    def covers(self, offer: Offer) -> bool:
        return offer.vendor == self.vendor and bool(self.sku.search(offer.sku or ""))


def parse_clusters(text: str, origin: str = "clusters.toml") -> tuple[ClusterStatement, ...]:
    """The [[cluster]] entries of a clusters.toml text; an entry without a vendor, SKU pattern,
    interconnect or source (or with a pattern that is not one) raises ValueError."""
    entries = tomllib.loads(text).get("cluster", [])
    out = []
    for number, entry in enumerate(entries, start=1):
        missing = [k for k in ("vendor", "sku", "interconnect", "source") if not entry.get(k)]
        if missing:
            raise ValueError(f"{origin}: cluster #{number} lacks {', '.join(missing)}")
        try:
            pattern = re.compile(entry["sku"])
        except re.error as exc:
            raise ValueError(f"{origin}: cluster #{number}: bad sku pattern: {exc}") from None
        out.append(ClusterStatement(entry["vendor"], pattern, entry["interconnect"],
                                    entry["source"], bool(entry.get("consumer_cards", False))))
    return tuple(out)


@cache
def cluster_statements() -> tuple[ClusterStatement, ...]:
    return parse_clusters(_TOML.read_text(encoding="utf-8"))


def stated_cluster(offer: Offer,
                   statements: Iterable[ClusterStatement] | None = None) -> ClusterStatement | None:
    """The statement that the offer's servers can be linked into a cluster, if its vendor makes
    one for this SKU."""
    pool = cluster_statements() if statements is None else statements
    return next((s for s in pool if s.covers(offer)), None)


def server_key(offer: Offer) -> tuple:
    return (offer.vendor, offer.gpu_model, (offer.gpu_variant or "").upper())


def server_sizes(offers: Iterable[Offer]) -> dict[tuple, int]:
    """The largest server (cards of one rental) each vendor lists per card model and board:
    n single cards of that vendor run together in one server of at most that many cards."""
    sizes: dict[tuple, int] = {}
    for offer in offers:
        if not offer.is_slice:
            key = server_key(offer)
            sizes[key] = max(sizes.get(key, 1), offer.gpu_count)
    return sizes
