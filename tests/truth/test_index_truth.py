"""make truth's price-index histories (tests/workshop/truth/index_truth.py): the true path of a
series from the injected market effects, and the whole loop on a small market: without noise the
index follows the true path in every scenario, and under churn the listing median does not."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta

import pandas as pd
import pytest

from pipelines.simulate import PriceDrop, Trend
from pipelines.simulate.effects import Jitter, Spike
from tests.helpers.simulated import make_offer
from tests.workshop.truth.index_truth import run_index_truth, true_log_factor

AT = datetime(2026, 3, 1, 3, tzinfo=UTC)


def test_the_true_factor_counts_cuts_and_trends_only_from_their_start():
    sources = pd.Series(["a", "b", "a"])
    effects = (PriceDrop("a", 5, AT), Trend(-10, ("b",), since=AT))
    assert list(true_log_factor(effects, sources, AT - timedelta(hours=1))) == [0, 0, 0]
    later = true_log_factor(effects, sources, AT + timedelta(hours=720))
    assert later == pytest.approx([math.log(0.95), math.log(0.9), math.log(0.95)])


def test_the_true_factor_counts_a_spike_until_a_fresh_close_shows_it_gone():
    spike = Spike("a", 80, AT, hours=6, dark_hours=23)
    sources = pd.Series(["a", "b"])
    assert list(true_log_factor((spike,), sources, AT - timedelta(minutes=1))) == [0, 0]
    # back after 6 hours, but the source is dark: its close still shows the spike
    unseen = true_log_factor((spike,), sources, AT + timedelta(hours=20))
    assert unseen == pytest.approx([math.log(1.8), 0])
    assert list(true_log_factor((spike,), sources, spike.seen_until)) == [0, 0]


def test_the_true_factor_follows_a_jitter_day_by_day():
    jitter = Jitter("a", 20, AT)
    sources = pd.Series(["a", "b"])
    assert list(true_log_factor((jitter,), sources, AT - timedelta(hours=1))) == [0, 0]
    first = true_log_factor((jitter,), sources, AT + timedelta(hours=1))
    again = true_log_factor((jitter,), sources, AT + timedelta(hours=2))     # the same UTC day
    later = [true_log_factor((jitter,), sources, AT + timedelta(days=d))[0] for d in range(1, 6)]
    assert first[1] == 0 and abs(first[0]) <= math.log(1.2)
    assert list(first) == list(again)
    assert len({first[0], *later}) == 6 and all(abs(x) <= math.log(1.2) for x in later)


def market() -> pd.DataFrame:
    """Three Chinese and three world vendors, two offers each, one card."""
    rows = []
    for vendor, currency, base in (("alpha_cn", "CNY", 10), ("bravo_cn", "CNY", 12),
                                   ("charlie_cn", "CNY", 11), ("delta", "USD", 2),
                                   ("echo", "USD", 2.4), ("foxtrot", "USD", 2.2)):
        world = currency == "USD"
        for i in range(2):
            rows.append(make_offer(f"{vendor}-{i}", vendor, currency=currency,
                                   amount=f"{base + i:.2f}", country="US" if world else "CN",
                                   province="California" if world else "Beijing",
                                   tier1=not world))
    return pd.DataFrame(rows)


def test_without_noise_the_index_follows_the_true_path_in_every_scenario(tmp_path):
    result = run_index_truth(market(), date(2026, 3, 1), tmp_path, noise_pct=0, every_hours=6,
                             days=24, say=lambda _: None)
    assert len(result["scenarios"]) == 8
    for name, figures in result["scenarios"].items():
        assert figures["rows"] > 20, name
        if name == "volatile newcomer":
            continue
        # listed prices keep their resolution (0.01 on 2.00 USD: 0.5 %), so not exactly 0
        assert figures["index_error_pp_max"] < 0.3, (name, figures)
    # the spike and its reversal across the stale close cancel (gpi-2 kept the spike for good)
    assert result["scenarios"]["spike 80 % reverting across a stale close"][
        "median_error_pp_max"] > 1
    # the newcomer moves the true path by its share while its entry closes are collected;
    # it enters at their mean, so what stays in the level is far below its daily swings
    joined = result["scenarios"]["volatile newcomer"]
    assert joined["index_error_pp_median"] < 1.5, joined
    assert joined["index_error_pp_max"] < 100 * (1.2 ** (1 / 3) - 1), joined   # its share
    churn = result["scenarios"]["cheap offers come and go"]
    assert churn["median_error_pp_max"] > 5        # the listing median swings with the mix
    cut = result["scenarios"]["vendor cut 5 % in one day"]
    assert cut["median_error_pp_max"] > cut["index_error_pp_max"]
