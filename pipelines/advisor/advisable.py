"""Which current offers the advisor may advise on: only real, counted, dated prices by default,
and each offer once.

* Counted: the project's one rule (docs/signals.md "Counted once", staging.stg_observations
  `counted`): a template's offer never counts, nor a non-direct copy of an offer a direct source
  listed the same day.
* Once: the latest rows of two paths to one offer can both be counted when their latest days
  differ (an archive version of a vendor's price list beside the vendor's own crawl). The same
  rule then applies across today's rows: a non-direct offer is left out when a direct source lists
  the like-for-like offer (the same key as `counted`: vendor, card, a variant one side does not
  state matching any, cards, fraction, offer kind, billing period, country).
* Real and dated: a price read live, captured or published (spiders/price_basis.py
  REAL_PRICE_BASES) with the date it held; a modeled (illustrative, mixed), simulated or undated
  one only with `--include-modeled`, and labelled so. A price whose basis no crawl states (a
  row from before bases were recorded, a test's) passes as staging.stg_shown_observations lets it
  pass, dated by its sighting and labelled "not stated".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pipelines.advisor.offers import Offer
from spiders.price_basis import is_real_price, price_from_word

NOT_COUNTED = "not counted (a template, or a second copy of an offer counted once elsewhere)"
SECOND_PATH = "a second path to an offer its vendor's own source lists (counted once)"
NOT_REAL = "not a real, dated price (modeled, simulated or undated: --include-modeled)"


def _like_for_like(offer: Offer) -> tuple:
    """The `counted` rule's key, but the variant (matched separately: unstated matches any)."""
    return (offer.vendor, offer.gpu_model, offer.gpu_count, round(offer.gpu_fraction, 6),
            offer.offer_kind, offer.billing_period, offer.country)


def is_direct(offer: Offer) -> bool:
    return (offer.reaches_via or "direct") == "direct"


def is_real_dated(offer: Offer) -> bool:
    stated = offer.price_basis is None or is_real_price(offer.price_basis)
    return stated and offer.price_as_of is not None


def basis_text(offer: Offer) -> str:
    """The price basis and as-of date every line shows: "published, as of 2026-11-30"."""
    word = price_from_word(offer.price_basis)
    date = f"as of {offer.price_as_of:%Y-%m-%d}" if offer.price_as_of else "undated"
    return f"{word}, {date}"


def advisable(offers: Iterable[Offer], include_modeled: bool = False,
              excluded: Counter | None = None) -> list[Offer]:
    """The offers the advisor may rank, each once; the others are counted in `excluded` by
    reason."""
    excluded = excluded if excluded is not None else Counter()
    kept: list[Offer] = []
    for offer in offers:
        if not offer.counted:
            excluded[NOT_COUNTED] += 1
        elif not include_modeled and not is_real_dated(offer):
            excluded[NOT_REAL] += 1
        else:
            kept.append(offer)
    direct: dict[tuple, set] = {}
    for offer in kept:
        if is_direct(offer):
            direct.setdefault(_like_for_like(offer), set()).add(offer.gpu_variant)
    out = []
    for offer in kept:
        variants = direct.get(_like_for_like(offer), set())
        twin = bool(variants) and (offer.gpu_variant is None or None in variants
                                   or offer.gpu_variant in variants)
        if not is_direct(offer) and twin:
            excluded[SECOND_PATH] += 1
        else:
            out.append(offer)
    return out
