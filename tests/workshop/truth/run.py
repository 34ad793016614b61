"""`make truth`: simulate a grid of histories with known effects, at every history length users
have (1, 2, 3, 4 and 6 complete months, each with the first week of the next month that completes
its last month), build every SQL model on each, and score the signals against what was injected.
It prints figures per length next to their targets and writes them to
`data/truth/truth-<UTC time>.json` and `data/truth/latest.json`; it asserts nothing (the figures
are the result).

    python -m tests.workshop.truth [--seeds 1,2,3] [--noises 1,3] [--lengths 1,2,3,4,6]
                              [--every-hours 4] [--start DATE] [--sources a,b] [--keep DIR]
                              [--out-dir DIR] [--quick]
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import pandas as pd

from tests.workshop.truth import grid, index_truth, metrics


@dataclass(frozen=True)
class Target:
    """A figure `make truth` prints against its target: never a test threshold."""
    label: str
    length: int | None        # complete months of history; None: any length (or structural)
    comparison: str           # ">=" or "<="
    bound: float
    read: Callable[[dict, int | None], float | None]   # (result, length) -> the figure

    def met(self, value: float | None) -> bool:
        return value is not None and (value >= self.bound if self.comparison == ">="
                                      else value <= self.bound)


def _recall(noise: str, smallest: float, largest: float = math.inf):
    """The lowest recall over the dip sizes in [smallest, largest] at `noise`."""
    def read(result: dict, length: int | None) -> float | None:
        recall = result["by_length"].get(str(length), {}).get("dip_recall", {}).get(noise, {})
        values = [v for k, v in recall.items() if smallest <= float(k) <= largest
                  and v is not None]
        return min(values) if values else None
    return read


def _regional(stat: str):
    """A regional error figure at noise 1 % of the histories of the target's length."""
    def read(result: dict, length: int | None) -> float | None:
        by_noise = result["by_length"].get(str(length), {}).get("regional_error_pp_by_noise", {})
        return by_noise.get("1", {}).get(stat)
    return read


def _overall(key: str):
    """A figure of the whole grid (the largest rate over every length; the ratio history)."""
    return lambda result, length: result.get(key)


TARGETS = (
    Target("dip_recall >=5 % at noise 1", 2, ">=", 0.90, _recall("1", 5)),
    Target("dip_recall 3 % at noise 1", 2, ">=", 0.70, _recall("1", 3, 3)),
    Target("dip_recall >=3 % at noise 1", 3, ">=", 0.95, _recall("1", 3)),
    Target("dip_recall >=3 % at noise 1", 6, ">=", 0.95, _recall("1", 3)),
    Target("dip_recall >=3 % at noise 3", 6, ">=", 0.80, _recall("3", 3)),
    Target("dip_fpr_max", None, "<=", 0.05, _overall("dip_fpr_max")),
    Target("month_fpr_max", None, "<=", 0.05, _overall("month_fpr_max")),
    Target("regional_error_pp_median", 6, "<=", 0.5, _regional("median")),
    # one vendor's daily ratio carries two independent walks (up to ~2 pp at noise 1): the mart
    # states the error to expect on every row, so the targets are the rows of two or more
    # vendors and the share of rows within their stated error
    Target("regional_error_pp_max_two_or_more_vendors", 6, "<=", 1.5,
           _regional("max_two_or_more_vendors")),
    Target("regional_share_within_stated_bound", 6, ">=", 0.95,
           _regional("share_within_stated_bound")),
    Target("slice_ratio_max_rel_error_noise0", None, "<=", 1e-6,
           _overall("slice_ratio_max_rel_error_noise0")),
    # the price index's daily level against the true market path, in every scenario
    Target("index_error_pp_median (worst scenario)", None, "<=", 0.5,
           lambda result, length: (result.get("index") or {}).get("index_error_pp_median_max")),
    Target("index_error_pp_max", None, "<=", 2.0,
           lambda result, length: (result.get("index") or {}).get("index_error_pp_max")),
)
LENGTHS = (1, 2, 3, 4, 6)


def _csv(kind):
    def parse(text: str):
        try:
            return tuple(kind(x) for x in text.split(",") if x.strip())
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from exc
    return parse


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m tests.workshop.truth",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=_csv(int), default=(1, 2, 3))
    p.add_argument("--noises", type=_csv(float), default=(1.0, 3.0), help="noise bounds, %%")
    p.add_argument("--lengths", type=_csv(int), default=LENGTHS,
                   help="history lengths: complete calendar months (+ the next month's first week)")
    p.add_argument("--every-hours", type=int, default=4, help="one crawl every K hours")
    p.add_argument("--start", type=date.fromisoformat, default=date(2026, 1, 1))
    p.add_argument("--sources", type=_csv(str), default=None, help="only these sources' offers")
    p.add_argument("--keep", type=Path, default=None, help="keep the simulated databases here")
    p.add_argument("--out-dir", type=Path, default=None, help="[default: <data dir>/truth]")
    p.add_argument("--quick", action="store_true",
                   help="one seed, a crawl every 8 hours: a fast look")
    p.add_argument("--index-only", action="store_true",
                   help="only the price index's histories (index_truth.py)")
    args = p.parse_args(argv)
    if any(length < 1 for length in args.lengths):
        p.error(f"--lengths: a history needs at least 1 complete month, got {args.lengths}")
    if args.quick:
        args.seeds, args.every_hours = args.seeds[:1], max(args.every_hours, 8)
    return args


def _say(text: str) -> None:
    print(text, flush=True)


def score_database(path: Path) -> dict[str, pd.DataFrame]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {name: metrics.query(con, name)
                for name in ("dip_groups", "regional_errors", "ratio_errors", "claims")}
    finally:
        con.close()


def run_grid(args: argparse.Namespace, work: Path) -> dict:
    from pipelines.simulate import load_offers, months_to_days, simulate

    started = time.perf_counter()
    _say("offers: crawling the bundled snapshots offline ...")
    offers = load_offers(sources=list(args.sources) if args.sources else None)
    sources = sorted(set(offers["source"]))
    _say(f"  {len(offers)} offers of {len(sources)} sources")
    index = index_truth.run_index_truth(offers, args.start, work, keep=bool(args.keep),
                                        every_hours=args.every_hours, say=_say)
    if args.index_only:
        return {"created_at": datetime.now(UTC).isoformat(timespec="seconds"), "by_length": {},
                "index": index, "ratio_errors_noise0": {}, "claims_total": 0,
                "claims_with_interval": 0, "claims_verdicts": {},
                "grid": {"index_only": True, "sources": sources,
                         "seconds": round(time.perf_counter() - started, 1)}}
    scenarios = []
    for length in args.lengths:
        days = months_to_days(args.start, length) + grid.NEXT_START_DAYS
        scenarios += grid.dip_scenarios(sources, seeds=args.seeds, noises=args.noises,
                                        start=args.start, days=days,
                                        every_hours=args.every_hours, length=length)
    scenarios.append(grid.ratio_scenario(sources, start=args.start, days=31,
                                         every_hours=max(args.every_hours, 6)))
    scored: list[tuple[grid.Scenario, dict[str, pd.DataFrame]]] = []
    for i, sc in enumerate(scenarios, 1):
        t0 = time.perf_counter()
        path = work / f"{sc.name}.db"
        result = simulate(path, start=sc.start, days=sc.days, offers=offers, effects=sc.effects,
                          seed=sc.seed, every_hours=sc.every_hours, noise_pct=sc.noise_pct)
        scored.append((sc, score_database(path)))
        if not args.keep:
            path.unlink(missing_ok=True)
        _say(f"[{i}/{len(scenarios)}] {sc.name}: {result.rows:,} rows, "
             f"{time.perf_counter() - t0:.0f} s")
    return {**summarize(scored, args, sources, time.perf_counter() - started), "index": index}


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def summarize_length(runs) -> dict:
    """The dip and regional figures of the histories of one length, per noise."""
    dips_by_noise: dict[str, list[pd.DataFrame]] = {}
    regional_by_noise: dict[str, list[pd.DataFrame]] = {}
    for sc, frames in runs:
        dips_by_noise.setdefault(f"{sc.noise_pct:g}", []).append(frames["dip_groups"])
        regional_by_noise.setdefault(f"{sc.noise_pct:g}", []).append(frames["regional_errors"])
    dips = {noise: _concat(parts) for noise, parts in dips_by_noise.items()}
    all_dips = _concat(list(dips.values()))
    fpr = metrics.false_positive_rates(all_dips) if not all_dips.empty else {}
    month_fpr = metrics.month_false_positive_rates(all_dips) if not all_dips.empty else {}
    return {
        "dip_recall": {noise: metrics.dip_recall(frame) for noise, frame in dips.items()},
        "month_recall": {noise: metrics.month_recall(frame) for noise, frame in dips.items()},
        "dip_groups": {noise: metrics.group_counts(frame) for noise, frame in dips.items()},
        "verdicts": {noise: metrics.verdict_shares(frame) for noise, frame in dips.items()},
        # Chinese vendors' month ends start at 16:00 UTC the day before: recall per calendar
        "dip_recall_by_time_zone": {
            noise: {zone: metrics.dip_recall(part)
                    for zone, part in frame.groupby("local_time_zone")}
            for noise, frame in dips.items() if "local_time_zone" in frame},
        **{f"dip_fpr_{category}": fpr.get(category) for category in
           metrics.FALSE_POSITIVE_CATEGORIES},
        "dip_fpr_by_noise": {noise: metrics.false_positive_rates(frame)
                             for noise, frame in dips.items()},
        "month_fpr": month_fpr,
        "regional_error_pp_by_noise": {noise: metrics.regional_summary(_concat(parts))
                                       for noise, parts in regional_by_noise.items()},
    }


def summarize(scored, args, sources, seconds) -> dict:
    # the dip histories deal roles to sources; the noise-0 ratio history deals none
    dip_runs = [(sc, frames) for sc, frames in scored if sc.roles]
    ratio_runs = [(sc, frames) for sc, frames in scored if not sc.roles]
    by_length = {}
    for length in sorted({sc.length for sc, _ in dip_runs}):
        by_length[str(length)] = summarize_length(
            [(sc, frames) for sc, frames in dip_runs if sc.length == length])
    ratio_rows = _concat([frames["ratio_errors"] for _, frames in ratio_runs])
    ratios = metrics.ratio_errors(ratio_rows) if not ratio_rows.empty else {}
    longest = max((sc.length for sc, _ in dip_runs), default=None)
    first_noise = min((sc.noise_pct for sc, _ in dip_runs), default=None)
    claims = next((frames["claims"] for sc, frames in dip_runs
                   if sc.length == longest and sc.noise_pct == first_noise),
                  pd.DataFrame(columns=["ci_low", "ci_high", "verdict"]))
    claim_figures = metrics.claims_summary(claims)
    headline = by_length.get(str(longest), {})
    main_regional = (headline.get("regional_error_pp_by_noise", {}).get("1")
                     or next(iter(headline.get("regional_error_pp_by_noise", {}).values()), {}))
    return {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "grid": {"seeds": list(args.seeds), "noises": list(args.noises),
                 "lengths": list(args.lengths), "every_hours": args.every_hours,
                 "start": args.start.isoformat(), "sources": sources, "histories": len(scored),
                 "seconds": round(seconds, 1)},
        "by_length": by_length,
        # the longest history's figures, as before lengths existed
        **{k: v for k, v in headline.items() if k != "regional_error_pp_by_noise"},
        "dip_fpr_max": _max_over_lengths(by_length, recurring=True),
        "month_fpr_max": _max_over_lengths(by_length, recurring=False),
        "regional_error_pp_median": main_regional.get("median"),
        "regional_error_pp_max": main_regional.get("max"),
        "regional_error_pp_max_two_or_more_vendors": main_regional.get("max_two_or_more_vendors"),
        "regional_share_within_stated_bound": main_regional.get("share_within_stated_bound"),
        "regional_error_pp_by_noise": headline.get("regional_error_pp_by_noise", {}),
        "slice_ratio_max_rel_error_noise0": (ratios.get("slice") or {}).get("max"),
        "ratio_errors_noise0": ratios,
        "claims_total": claim_figures["claims_total"],
        "claims_with_interval": claim_figures["claims_with_interval"],
        "claims_verdicts": claim_figures["verdicts"],
    }


def _max_over_lengths(by_length: dict, recurring: bool) -> float | None:
    """The largest false-positive rate over every length and category, of the recurring verdict
    or of the single month's (None: none measured)."""
    values = []
    for figures in by_length.values():
        rates = ({c: figures.get(f"dip_fpr_{c}") for c in metrics.FALSE_POSITIVE_CATEGORIES}
                 if recurring else figures.get("month_fpr", {}))
        values += [v for v in rates.values() if v is not None]
    return max(values) if values else None


def _shown(values: dict) -> str:
    return ", ".join(f"{k} %: {v:.2f}" if v is not None else f"{k} %: -" for k, v in values.items())


def print_report(result: dict) -> None:
    _say("\nsignal truth (simulated histories scored against what was injected)")
    for length, figures in result["by_length"].items():
        _say(f"  {length} complete month{'s' if length != '1' else ''} of history")
        for noise, recall in figures["dip_recall"].items():
            _say(f"    noise {noise} %  recurring dip recall {_shown(recall)}   "
                 f"groups {figures['dip_groups'][noise]}")
            _say(f"               this month's verdict recall "
                 f"{_shown(figures['month_recall'][noise])}")
            _say(f"               verdicts {figures['verdicts'][noise]}")
        fprs = {c: figures.get(f"dip_fpr_{c}") for c in metrics.FALSE_POSITIVE_CATEGORIES}
        _say(f"    false positives: recurring {fprs}, this month {figures['month_fpr']}")
        _say(f"    regional error by noise: {figures['regional_error_pp_by_noise']}")
    index = result.get("index") or {}
    if index:
        _say(f"  price index ({index['days']} days, noise {index['noise_pct']:g} %): error of "
             "the daily level against the true path, pp (median / max), beside the listing "
             "median's")
        for name, figures in index["scenarios"].items():
            _say(f"    {name:<28} index {figures.get('index_error_pp_median', '-')} / "
                 f"{figures.get('index_error_pp_max', '-')}   listing median "
                 f"{figures.get('median_error_pp_median', '-')} / "
                 f"{figures.get('median_error_pp_max', '-')}   ({figures.get('rows', 0)} "
                 f"series-days, {figures.get('series', 0)} series)")
    for target in TARGETS:
        value = target.read(result, target.length)
        shown = "-" if value is None else f"{value:.4g}"
        where = "any length" if target.length is None else f"{target.length} months"
        _say(f"  {target.label:<34} {where:>10} {shown:>10}   target {target.comparison} "
             f"{target.bound:g}   "
             f"{'met' if target.met(value) else 'not measured' if value is None else 'NOT MET'}")
    _say(f"  ratio errors at noise 0: {result['ratio_errors_noise0']}")
    _say(f"  claims: {result['claims_total']} rows, {result['claims_with_interval']} with an "
         f"interval, verdicts {result['claims_verdicts']}")


def write(result: dict, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = out_dir / f"truth-{stamp}.json"
    text = json.dumps(result, indent=2, ensure_ascii=False, default=str)
    path.write_text(text, encoding="utf-8")
    (out_dir / "latest.json").write_text(text, encoding="utf-8")
    return path


def main(argv: Sequence[str] | None = None) -> None:
    from spiders.layout import truth_dir

    args = parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="gpuprices-truth-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        result = run_grid(args, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print_report(result)
    path = write(result, args.out_dir or truth_dir())
    _say(f"\nwritten: {path} (and latest.json)")
