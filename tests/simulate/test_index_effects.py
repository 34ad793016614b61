"""The simulator's effects for the price index's truth (pipelines/simulate/index_effects.py):
a source gone dark, a mistyped price, cheap listings that come and go (none moves the market),
a spike that reverts across a stale close, a vendor whose prices move daily."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import duckdb
import pandas as pd
import pytest

from pipelines.simulate import SimulationError, append_hour, simulate
from pipelines.simulate.effects import OFFER_CHURN_SUFFIX, Jitter, OfferChurn, Outage, Spike, Typo
from tests.helpers.simulated import make_offer, query

START = datetime(2026, 6, 1, tzinfo=UTC)


def offers() -> pd.DataFrame:
    return pd.DataFrame([
        make_offer("a-1", "alpha_cn", amount="12.00"),
        make_offer("a-2", "alpha_cn", amount="20.00"),
        make_offer("b-1", "bravo", country="US", currency="USD", amount="2.50",
                   province="California", tier1=False),
        make_offer("c-1", "charlie_cn", amount="9.00"),
    ])


def test_an_outage_removes_every_observation_of_its_source_in_its_window(tmp_path):
    path = tmp_path / "s.db"
    at = START + timedelta(days=2)
    simulate(path, offers=offers(), start=START, days=6, seed=1, noise_pct=0, build_models=False,
             effects=[Outage("alpha_cn", 1.5, at)])
    seen = query(path, "select source, observed_at from observations")
    alpha = seen[seen["source"] == "alpha_cn"]["observed_at"]
    dark = (alpha >= pd.Timestamp(at)) & (alpha < pd.Timestamp(at + timedelta(hours=36)))
    assert not dark.any()
    assert (alpha >= pd.Timestamp(at + timedelta(hours=36))).any()      # back after it
    others = seen[seen["source"] != "alpha_cn"]["observed_at"]
    assert ((others >= pd.Timestamp(at)) & (others < pd.Timestamp(at + timedelta(hours=36)))
            ).sum() == 2 * 36


def test_a_typo_multiplies_one_offer_for_its_hours_only(tmp_path):
    path = tmp_path / "s.db"
    at = START + timedelta(days=1, hours=5)
    simulate(path, offers=offers(), start=START, days=3, seed=2, noise_pct=0, build_models=False,
             effects=[Typo("alpha_cn", 10, at, hours=6)])
    rows = query(path, "select offer_id, observed_hour, price_amount::double as p "
                       "from observations where source = 'alpha_cn'")
    typo = rows[rows["p"] > 100]
    assert set(typo["offer_id"]) == {"a-1"}                  # the source's first offer only
    assert sorted(typo["observed_hour"]) == [pd.Timestamp(at + timedelta(hours=h))
                                             for h in range(6)]
    assert set(typo["p"]) == {120.0}
    truth = query(path, "select effect, offer_id from truth.offer_effects where effect = 'typo'")
    assert list(truth["offer_id"]) == ["a-1"]


def test_offer_churn_lists_cheaper_clones_in_cycles(tmp_path):
    path = tmp_path / "s.db"
    simulate(path, offers=offers(), start=START, days=12, seed=3, noise_pct=0,
             build_models=False, effects=[OfferChurn(25, None, days=2, share=1.0)])
    rows = query(path, "select offer_id, observed_hour, price_amount::double as p "
                       "from observations")
    clones = rows[rows["offer_id"].str.endswith(OFFER_CHURN_SUFFIX)]
    assert set(clones["offer_id"]) == {f"{o}{OFFER_CHURN_SUFFIX}"
                                       for o in ("a-1", "a-2", "b-1", "c-1")}
    for offer_id, own in clones.groupby("offer_id"):
        original = rows[rows["offer_id"] == offer_id.removesuffix(OFFER_CHURN_SUFFIX)]
        assert set(own["p"]) == {round(original["p"].iloc[0] * 0.75, 6)}
        days = sorted({h.date() for h in own["observed_hour"]})
        assert 4 <= len(days) <= 8                         # listed about half of 12 days
        assert len(original) == 12 * 24                    # the original never leaves
    truth = query(path, "select count(*) as n from truth.offer_effects "
                        "where effect = 'offer_churn'")
    assert truth["n"].iloc[0] == 4


def test_append_hour_continues_the_index_effects(tmp_path):
    effects = [Outage("alpha_cn", 1, START + timedelta(hours=20)),
               Typo("bravo", 10, START + timedelta(hours=26), hours=3),
               OfferChurn(20, ("charlie_cn",), days=1, share=1.0)]
    longer, shorter = tmp_path / "longer.db", tmp_path / "shorter.db"
    simulate(longer, offers=offers(), start=START, days=3, seed=4, effects=effects,
             build_models=False)
    simulate(shorter, offers=offers(), start=START, days=1, seed=4, effects=effects,
             build_models=False)
    for h in range(24, 48):
        append_hour(shorter, START + timedelta(hours=h), offers(), effects, 4)
    con = duckdb.connect()
    con.execute(f"attach '{longer}' as a (read_only)")
    con.execute(f"attach '{shorter}' as b (read_only)")
    window = "observed_hour < timestamptz '2026-06-03 00:00:00+00'"
    for x, y in (("a", "b"), ("b", "a")):
        assert con.execute(f"select count(*) from (select * exclude (crawl_id) from "
                           f"{x}.observations where {window} except all select * exclude "
                           f"(crawl_id) from {y}.observations where {window})").fetchone()[0] == 0


@pytest.mark.parametrize(("spec", "kind", "message"), [
    ("alpha_cn:0:2026-06-01T00:00", Outage, "days must be"),
    ("alpha_cn:7", Outage, "expected SOURCE"),
    ("alpha_cn:1:2026-06-01T00:00", Typo, "not 1"),
    ("alpha_cn:-3:2026-06-01T00:00", Typo, "factor must be"),
    ("100", OfferChurn, "discount must be"),
    ("20::0", OfferChurn, "days must be"),
    ("20:::2", OfferChurn, "share must be"),
    ("x", OfferChurn, "could not convert"),
])
def test_index_effect_specs_refuse_nonsense(spec, kind, message):
    with pytest.raises(SimulationError, match=message):
        kind.parse(spec)


def test_index_effects_refuse_an_unknown_source(tmp_path):
    for effect in (Outage("nobody", 1, START), Typo("nobody", 10, START),
                   OfferChurn(20, ("nobody",))):
        with pytest.raises(SimulationError, match="nobody"):
            simulate(tmp_path / "x.db", offers=offers(), start=START, days=1,
                     effects=[effect], build_models=False)


def test_index_effect_specs_parse():
    assert Outage.parse("alpha_cn:7:2026-06-10T00:00") == Outage(
        "alpha_cn", 7, datetime(2026, 6, 10, tzinfo=UTC))
    assert Typo.parse("bravo:10:2026-06-10T09:00").hours == 24
    assert OfferChurn.parse("30:alpha_cn,bravo:2:0.25") == OfferChurn(
        30, ("alpha_cn", "bravo"), 2, 0.25)


def test_a_spike_lifts_its_source_for_its_hours_then_darkens_it(tmp_path):
    path = tmp_path / "s.db"
    at = START + timedelta(days=1, hours=18)
    simulate(path, offers=offers(), start=START, days=4, seed=1, noise_pct=0, build_models=False,
             effects=[Spike("alpha_cn", 80, at, hours=6, dark_hours=10)])
    rows = query(path, "select observed_hour, price_amount::double as p from observations "
                       "where offer_id = 'a-1' order by 1")
    high = rows[rows["p"] > 12]
    assert sorted(high["observed_hour"]) == [pd.Timestamp(at + timedelta(hours=h))
                                             for h in range(6)]
    assert set(high["p"]) == {21.6}
    back = at + timedelta(hours=6)
    hours = set(rows["observed_hour"])
    assert pd.Timestamp(back) in hours                       # the back-move is seen once
    assert not any(pd.Timestamp(back + timedelta(hours=h)) in hours for h in range(1, 11))
    assert pd.Timestamp(back + timedelta(hours=11)) in hours
    truth = query(path, "select effect, size_pct from truth.offer_effects where effect = 'spike'")
    assert len(truth) == 2 and set(truth["size_pct"]) == {80}


def test_a_jitter_moves_its_source_once_a_day_within_its_bound(tmp_path):
    path = tmp_path / "s.db"
    simulate(path, offers=offers(), start=START, days=5, seed=1, noise_pct=0, build_models=False,
             effects=[Jitter("alpha_cn", 20, START + timedelta(days=1))])
    rows = query(path, "select observed_hour, price_amount::double as p from observations "
                       "where offer_id = 'a-1' order by 1")
    rows["day"] = rows["observed_hour"].dt.date
    per_day = rows.groupby("day")["p"].agg(["min", "max"])
    assert (per_day["min"] == per_day["max"]).all()          # one price a day
    assert per_day["min"].iloc[0] == 12                       # before it starts
    later = per_day["min"].iloc[1:]
    assert later.nunique() == len(later)                      # a new draw each day
    assert later.between(12 / 1.2 - 0.01, 12 * 1.2 + 0.01).all()
    others = query(path, "select distinct price_amount::double as p from observations "
                         "where offer_id = 'c-1'")
    assert list(others["p"]) == [9.0]
