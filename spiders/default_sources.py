"""Which sources the default run crawls, and why the others wait to be named (issue 38: nothing
illustrative in the default).

A source is opt-in when its snapshot's manifest says its prices could mislead a reader who did
not ask for them: provenance `modeled-unverified` (a template with no real operator behind it, or
an endpoint nobody has seen answer), or, when replaying, a `price_basis` of `illustrative`
(spiders/price_basis.py). Live, a vendor's terms may refuse automated access too
(terms_refusal). The rule reads the manifest, not a list of names, so a snapshot rebased on dated
public prices is crawled by default again without an edit here.

Opting in: naming a source (`gpuprices run --source S`) or GPUPRICES_OPT_IN (comma-separated
names, or `all`) for scheduled runs. A run records which crawls it opted in (raw.crawls.opted_in):
only those crawls' modeled prices reach the pages (staging.stg_shown_observations).
"""

from __future__ import annotations

import os
from pathlib import Path

from spiders.layout import SNAPSHOT_DIR
from spiders.price_basis import manifest_price_basis, snapshot_manifest

OPT_IN_ENV = "GPUPRICES_OPT_IN"
OPT_IN_ALL = "all"
# How every reason starts, and how a skipped source's line ends: what the reader can do about it.
OPT_IN = "opt-in"
HOW_TO_OPT_IN = f"name it with --source, or set {OPT_IN_ENV}"


def opt_in_reason(source: str, mode: str = "replay",
                  snapshot_dir: str | Path = SNAPSHOT_DIR) -> str | None:
    """Why `source` is not crawled by default in `mode` (one line), or None when it is."""
    meta = snapshot_manifest(snapshot_dir, source)
    if meta is not None and meta.get("provenance") == "modeled-unverified":
        if meta.get("template"):
            return f"{OPT_IN}: template source (no real operator)"
        return f"{OPT_IN}: guessed endpoint"
    if mode == "live":
        return terms_refusal(source)
    # replay serves the snapshot and raw re-reads what an earlier crawl fetched from it
    if meta is not None and manifest_price_basis(meta)[0] == "illustrative":
        return f"{OPT_IN}: illustrative prices"
    return None


def terms_refusal(source: str) -> str | None:
    """The second rule (issue 38 item 7): a vendor whose terms forbid automated access is opt-in
    live (spiders/terms.py says which, and why)."""
    from spiders.terms import live_access_refusal

    refusal = live_access_refusal(source)
    return f"{OPT_IN}: {refusal}" if refusal else None


def opt_in_from_env(value: str | None = None) -> list[str]:
    """The sources a run opts in to: GPUPRICES_OPT_IN (or `value`) split on commas; ["all"] opts
    in every source."""
    raw = os.environ.get(OPT_IN_ENV, "") if value is None else value
    return sorted({name.strip() for name in raw.split(",") if name.strip()})


def is_opted_in(source: str, opt_in: list[str] | tuple[str, ...]) -> bool:
    return OPT_IN_ALL in opt_in or source in opt_in


def crawl_refusal(source: str, opt_in: list[str] | tuple[str, ...], mode: str = "replay",
                  snapshot_dir: str | Path = SNAPSHOT_DIR) -> str | None:
    """The skip line of a source this run does not crawl (not opted in, and opt-in), or None."""
    if is_opted_in(source, opt_in):
        return None
    reason = opt_in_reason(source, mode, snapshot_dir)
    return f"{reason}; not crawled by default ({HOW_TO_OPT_IN})" if reason else None


def is_opt_in_skip(failures: list[str]) -> bool:
    """Whether a skipped crawl's reasons are crawl_refusal's (not selected, rather than failed)."""
    return bool(failures) and failures[0].startswith(f"{OPT_IN}: ")
