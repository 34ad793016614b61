"""The advisor's efficiency figures and decision-rule thresholds, read from efficiency.toml (their
one home, cited there), and the guides' price claims they cite, read from where the market-claims
scorecard defines them (dbt_like_sql/marts/market_claims.sql)."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_TOML = Path(__file__).with_name("efficiency.toml")
_CLAIMS_SQL = Path(__file__).resolve().parents[2] / "dbt_like_sql" / "marts" / "market_claims.sql"


def _steps(table: dict) -> dict[int, float]:
    """A {"2": 1.9, "4": 3.6} table as {2: 1.9, 4: 3.6}, sorted by count."""
    return {int(k): float(v) for k, v in sorted(table.items(), key=lambda kv: int(kv[0]))}


def step_value(table: dict[int, float], count: int) -> float:
    """The entry for `count`, else for the next count up (the last beyond the table)."""
    size = next((n for n in table if n >= count), max(table))
    return table[size]


@dataclass(frozen=True)
class Efficiency:
    """Every figure of efficiency.toml, named."""

    reference_model: str
    training_compute_share: float
    inference_compute_share: float
    slice_speed: float
    slice_guides: tuple[float, float]
    data_parallel_speedup: dict[int, float]
    data_parallel_guides: dict[int, tuple[float, ...]]
    model_parallel_per_card: dict[int, float]
    model_parallel_guides_8: tuple[float, float]
    fast_link_gbs: float
    slow_link_factor: float
    link_loss_guides: tuple[float, float]
    across_servers_per_card: dict[int, float]
    max_cards: int
    spot_time_overhead: float
    rules: dict
    price_claims: dict[str, str]
    sources: dict[str, str]


def parse_efficiency(text: str) -> Efficiency:
    """efficiency.toml's text as an Efficiency; a missing or out-of-range figure raises."""
    d = tomllib.loads(text)
    eff = Efficiency(
        reference_model=d["throughput_model"]["reference"],
        training_compute_share=float(d["throughput_model"]["training_compute_share"]),
        inference_compute_share=float(d["throughput_model"]["inference_compute_share"]),
        slice_speed=float(d["slice"]["speed_share"]),
        slice_guides=tuple(d["slice"]["guides"]),
        data_parallel_speedup=_steps(d["data_parallel"]["speedup"]),
        data_parallel_guides={int(k): tuple(v) for k, v in d["data_parallel"]["guides"].items()},
        model_parallel_per_card=_steps(d["model_parallel"]["per_card"]),
        model_parallel_guides_8=tuple(d["model_parallel"]["guides_8_cards"]),
        fast_link_gbs=float(d["links"]["fast_link_gbs"]),
        slow_link_factor=float(d["links"]["slow_link_factor"]),
        link_loss_guides=tuple(d["links"]["guides_loss"]),
        across_servers_per_card=_steps(d["across_servers"]["per_card"]),
        max_cards=int(d["across_servers"]["max_cards"]),
        spot_time_overhead=float(d["spot"]["time_overhead"]),
        rules=dict(d["rules"]),
        price_claims=dict(d["price_claims"]),
        sources={name: table["source"] for name, table in d.items()
                 if isinstance(table, dict) and "source" in table})
    shares = (eff.training_compute_share, eff.inference_compute_share, eff.slice_speed,
              eff.slow_link_factor, *eff.model_parallel_per_card.values(),
              *eff.across_servers_per_card.values())
    if not all(0 < s <= 1 for s in shares) or eff.spot_time_overhead < 1:
        raise ValueError("efficiency.toml: a share outside (0, 1] or a spot overhead below 1")
    if any(v > n or v < 1 for n, v in eff.data_parallel_speedup.items()):
        raise ValueError("efficiency.toml: a data-parallel speed-up above its card count")
    return eff


@cache
def efficiency() -> Efficiency:
    return parse_efficiency(_TOML.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class ClaimRange:
    """A price claim as the scorecard defines it: its words and expected range."""

    claim_id: str
    claim: str
    expected_low: float | None
    expected_high: float | None    # None: open-ended ("20-40 %+")

    def text(self) -> str:
        high = f"{self.expected_high:g}" if self.expected_high is not None else ""
        return f"{self.claim_id}: {self.expected_low:g}-{high}" if high else \
            f"{self.claim_id}: at least {self.expected_low:g}"


def parse_claim_ranges(sql: str) -> dict[str, ClaimRange]:
    """The `claims` CTE of market_claims.sql evaluated by DuckDB: claim_id -> its range."""
    import duckdb

    match = re.search(r"\nclaims as \(\n(.*?)\n\),\n", sql, re.DOTALL)
    if not match:
        raise ValueError("market_claims.sql: no `claims as (...)` CTE")
    con = duckdb.connect(":memory:")
    try:
        rows = con.execute(f"select claim_id, claim, expected_low, expected_high "
                           f"from ({match.group(1)})").fetchall()
    finally:
        con.close()
    def num(value) -> float | None:
        return None if value is None else float(value)

    return {r[0]: ClaimRange(r[0], r[1], num(r[2]), num(r[3])) for r in rows}


@cache
def claim_ranges() -> dict[str, ClaimRange]:
    return parse_claim_ranges(_CLAIMS_SQL.read_text(encoding="utf-8"))


def cited_claims() -> dict[str, ClaimRange]:
    """The price claims efficiency.toml names, by their role there (spot_share, ...)."""
    ranges = claim_ranges()
    missing = [c for c in efficiency().price_claims.values() if c not in ranges]
    if missing:
        raise ValueError(f"efficiency.toml cites claims the scorecard does not define: {missing}")
    return {role: ranges[claim] for role, claim in efficiency().price_claims.items()}


def explain_lines() -> list[str]:
    """Every figure with its source, as `gpuprices advise --explain` prints them."""
    e = efficiency()
    r = e.rules

    def table(t: dict[int, float], unit: str = "") -> str:
        return ", ".join(f"{n} cards {v:g}{unit}" for n, v in t.items())

    lines = [
        f"throughput model: 1 / (w / compute ratio + (1 - w) / bandwidth ratio) against the "
        f"{e.reference_model}; w = {e.training_compute_share:g} training (compute-bound), "
        f"{e.inference_compute_share:g} inference (bandwidth-bound) "
        f"[{e.sources['throughput_model']}]",
        f"slice / shared card: fraction × {e.slice_speed:g} (guides {e.slice_guides[0]:g}-"
        f"{e.slice_guides[1]:g}) [{e.sources['slice']}]",
        f"data parallel speed-up: {table(e.data_parallel_speedup, '×')} (guides: 4 cards 2-3.6×, "
        f"8 cards ≥ 7×) [{e.sources['data_parallel']}]",
        f"model parallel per card, fast link: {table(e.model_parallel_per_card)} (guides "
        f"{e.model_parallel_guides_8[0]:.0%}-{e.model_parallel_guides_8[1]:.0%} on 8 cards) "
        f"[{e.sources['model_parallel']}]",
        f"links: NVLink ≥ {e.fast_link_gbs:g} GB/s is fast; PCIe, a cut or unknown link keeps "
        f"× {e.slow_link_factor:g} (guides: 20-40 % slower) [{e.sources['links']}]",
        f"across servers (stated cluster interconnect only): {table(e.across_servers_per_card)}, "
        f"at most {e.max_cards} cards [{e.sources['across_servers']}]",
        f"spot: +{e.spot_time_overhead - 1:.0%} time for checkpoints and restarts "
        f"[{e.sources['spot']}]",
        f"rules: a card = {r['card_gb']:g} GB; whole card above {r['whole_card_memory_share']:.0%}"
        f" of it (> {r['whole_card_min_params'] / 1e6:g}M params), slice below "
        f"{r['slice_memory_share']:.0%}; long run > {r['long_run_hours']:g} h; exclusive when "
        f"{r['exclusive_min_conditions']} of: run > {r['exclusive_run_hours']:g} h, memory > "
        f"{r['exclusive_memory_share']:.0%} of a card, model parallel ≥ "
        f"{r['exclusive_model_parallel_cards']} cards, no tolerance for interruption "
        f"[{e.sources['rules']}]",
    ]
    lines += [f"price claim ({role}), measured by the scorecard: {claim.text()} — {claim.claim}"
              for role, claim in cited_claims().items()]
    return lines
