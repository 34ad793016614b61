"""Where prices come from, as the people who read them must be told: read live from the vendor,
or replayed from a snapshot whose manifest says what its prices are (DESIGN.md rule 9).

Each manifest entry (one recorded response) states its own `price_basis` and `prices_as_of`, and
for real prices the record they were copied from (`price_record`: repo, path, commit or url, and
its date); the replay server sends them with the response (spiders/replay_server.py), and every
offer read from it carries them (spiders/base/spider.py; an offer read live carries `live`). The
manifest's top-level `price_basis` is the summary of its entries' (summary_price_basis, kept equal
by tests/spiders/test_manifests.py): the source-level view `gpuprices sources` shows.

A basis is one of SNAPSHOT_BASES; a crawl's is that, or `live` (fetched from the vendor's URL) or
`simulated` (`gpuprices simulate` / `demo`). A crawl re-read from the raw archive (`--from-raw`)
records none of its own: its bytes are those of the crawl that fetched them, and its offers carry
that crawl's per-entry basis (the raw archive kept the headers).
"""

from __future__ import annotations

import json
from pathlib import Path

# captured: the bytes were fetched from the live URL; published: every price is a real, dated
# public price (prices_as_of, the record's date); undated: every price is a real public price
# whose date no one could read (a record without a date, e.g. a SkyPilot catalog row): never
# counted as dated, prices_as_of is null; illustrative: modeled numbers; mixed: some of each
# (prices_from says which)
SNAPSHOT_BASES = ("captured", "published", "undated", "illustrative", "mixed")
# The bases whose prices_as_of is a date a price held (the others' is null).
DATED_BASES = ("captured", "published", "mixed")
CRAWL_BASES = ("live", *SNAPSHOT_BASES, "simulated")
# The prices a buyer can act on; intermediate.int_source_price_basis.is_real_price says the same
# in SQL (tests/sql/test_price_basis.py keeps the two equal).
REAL_PRICE_BASES = ("live", "captured", "published")
# The modeled prices no page shows unless the run that crawled them opted in to their source
# (spiders/default_sources.py); the macro hidden_by_default(basis) says the same in SQL
# (pipelines/warehouse/sql/price_basis_macros.sql, read by staging.stg_shown_observations and
# intermediate.int_hiding_crawls; tests/sql/test_shown_observations.py keeps the two equal). A
# simulated database says so on every page instead.
MODELED_PRICE_BASES = ("illustrative", "mixed")
# What no default page shows: a modeled price, and an undated one (real, but nobody could read
# when it held: a page shows "a dated public price with its date and age, or nothing"). Opting in
# to the source shows them, labelled.
NOT_SHOWN_BY_DEFAULT = ("undated", *MODELED_PRICE_BASES)
# Each basis in one word, for a table cell (the full wording is price_basis_label).
PRICE_FROM_WORDS = {"live": "live", "captured": "capture", "published": "published",
                    "undated": "undated", "illustrative": "modeled", "mixed": "part modeled",
                    "simulated": "simulated"}


def price_from_word(basis: str | None) -> str:
    return PRICE_FROM_WORDS.get(basis or "", "not stated")


def is_real_price(basis: str | None) -> bool:
    return basis in REAL_PRICE_BASES


def snapshot_manifest(snapshot_dir: str | Path, source: str) -> dict | None:
    """`source`'s snapshot manifest, read; None when it has none."""
    path = Path(snapshot_dir) / source / "manifest.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def snapshot_price_basis(snapshot_dir: str | Path, source: str) -> tuple[str | None, str | None]:
    """(price_basis, prices_as_of) of `source`'s snapshot manifest; (None, None) when it has no
    manifest. A manifest that states no basis, or one not in SNAPSHOT_BASES, is read as
    illustrative: a price nobody vouched for is not passed off as real."""
    meta = snapshot_manifest(snapshot_dir, source)
    return (None, None) if meta is None else manifest_price_basis(meta)


def manifest_price_basis(meta: dict) -> tuple[str, str | None]:
    """(price_basis, prices_as_of) of a manifest already read (snapshot_price_basis)."""
    basis = meta.get("price_basis")
    if basis not in SNAPSHOT_BASES:
        return "illustrative", None
    as_of = meta.get("prices_as_of")
    return basis, (str(as_of)[:10] if as_of and basis in DATED_BASES else None)


def entry_price_basis(entry: dict, meta: dict) -> tuple[str, str | None]:
    """(price_basis, prices_as_of) of one manifest entry: its own when it states one; else, in a
    manifest whose summary is one basis for all (not mixed), the manifest's; else illustrative
    (a mixed manifest that does not say which entry is real vouches for none)."""
    if "price_basis" in entry:
        return manifest_price_basis(entry)
    basis, as_of = manifest_price_basis(meta)
    return (basis, as_of) if basis != "mixed" else ("illustrative", None)


def summary_price_basis(bases: list[tuple[str, str | None]]) -> tuple[str, str | None]:
    """The manifest-level (price_basis, prices_as_of) its entries' bases add up to: their one
    basis when they agree, else mixed; the as-of is the oldest date among the dated entries (the
    age a reader of the whole source must assume), null when none is dated."""
    kinds = {basis for basis, _ in bases}
    summary = kinds.pop() if len(kinds) == 1 else "mixed"
    dates = sorted(as_of for basis, as_of in bases if as_of and basis in DATED_BASES)
    return summary, (dates[0] if dates and summary in DATED_BASES else None)


def crawl_price_basis(mode: str, snapshot_dir: str | Path,
                      source: str) -> tuple[str | None, str | None]:
    """(price_basis, prices_as_of) of a crawl in `mode` (pipelines.resources.MODES)."""
    if mode == "live":
        return "live", None
    if mode == "replay":
        return snapshot_price_basis(snapshot_dir, source)
    return None, None          # raw: the basis of the crawl that fetched the bytes
