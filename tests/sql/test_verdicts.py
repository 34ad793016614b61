"""The three verdicts (pipelines/verdicts.py) on a simulated history of two complete months: every
verdict column of every mart holds only those words, a clear dip holds where it was injected and
nowhere else, and the report, `gpuprices signals` and the API show them as the marts wrote them.

Three configured IDCs in CNY, an 8 % month-end dip at Ulanqab, 1 % noise, a crawl every 12 hours.
"""

from __future__ import annotations

import shutil
from datetime import date

import duckdb
import pytest

from pipelines.api import signals
from pipelines.cli.output import console
from pipelines.report.signals import month_end_dips
from pipelines.simulate import MonthEndDip, load_offers, months_to_days, simulate
from pipelines.verdicts import DOES_NOT_HOLD, HOLDS, NOT_ENOUGH_EVIDENCE, VERDICTS
from tests.helpers.published import gpuprices
from tests.workshop.truth import grid

START = date(2026, 1, 1)
DIPPED = "idc_ulanqab"
# Every verdict column of the marts; test_every_verdict_column_is_listed finds new ones.
VERDICT_COLUMNS = {("month_end_dip", "month_verdict"), ("month_end_dip", "dip_verdict"),
                   ("month_end_capacity", "release_verdict"), ("market_claims", "verdict")}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    # simulated elsewhere (the simulator never writes a prices.db), then published as one
    folder = tmp_path_factory.mktemp("verdicts")
    simulated = folder / "simulated.db"
    simulate(simulated, start=START, days=months_to_days(START, 2) + grid.NEXT_START_DAYS,
             offers=load_offers(sources=["idc_sinnet_bj", DIPPED, "idc_nanjing"]),
             effects=[MonthEndDip(8, (DIPPED,))], seed=5, every_hours=12, noise_pct=1.0)
    shutil.copyfile(simulated, folder / "prices.db")
    return folder


@pytest.fixture
def con(data_dir):
    with duckdb.connect(str(data_dir / "prices.db"), read_only=True) as connection:
        yield connection


def test_every_verdict_column_is_listed(con):
    found = set(con.execute("""select table_name, column_name from information_schema.columns
        where table_schema = 'marts' and column_name like '%verdict'""").fetchall())
    assert found == VERDICT_COLUMNS


@pytest.mark.parametrize(("mart", "column"), sorted(VERDICT_COLUMNS))
def test_verdict_columns_hold_only_the_three_verdicts(con, mart, column):
    values = {v for (v,) in con.execute(f"select distinct {column} from marts.{mart}").fetchall()}
    assert values and values <= set(VERDICTS), values


def test_the_injected_dip_holds_in_two_months_and_nowhere_else(con):
    groups = con.execute("""select source, any_value(dip_verdict), max(months_observed),
            max(months_needed)
        from marts.month_end_dip group by source, vendor, gpu_model, gpu_variant, region_code,
            offer_kind""").fetchall()
    dipped = [g for g in groups if g[0] == DIPPED]
    calm = [g for g in groups if g[0] != DIPPED]
    assert dipped and all(g[1] == HOLDS and g[2] == 2 and g[3] == 0 for g in dipped), dipped
    assert calm and not any(g[1] == HOLDS for g in calm), calm
    # a calm group is either judged "no" or says how many more months it needs: never a bare no
    for _, verdict, _, needed in calm:
        assert verdict == DOES_NOT_HOLD or (verdict == NOT_ENOUGH_EVIDENCE and needed != 0)


def test_the_report_shows_each_groups_verdicts(con):
    section = month_end_dips(con)
    shown = {k: int(section[k].replace(",", "")) for k in
             ("dip_groups", "dips_holding", "dips_not_holding", "dips_undecided")}
    assert shown["dips_holding"] > 0
    assert shown["dips_holding"] + shown["dips_not_holding"] + shown["dips_undecided"] \
        == shown["dip_groups"]
    table = section["table"]
    at = [c.header for c in table.columns].index("recurring dip")
    verdicts = {row[at].text.split(" (")[0] for row in table.rows}
    assert HOLDS in verdicts and verdicts <= set(VERDICTS)
    waiting = [row[at].text for row in table.rows if row[at].text.startswith(NOT_ENOUGH_EVIDENCE)]
    assert all(" mo)" in text for text in waiting), waiting    # how many more months it needs


def test_gpuprices_signals_and_the_api_show_the_verdicts(data_dir, monkeypatch):
    monkeypatch.setattr(console, "width", 240)
    result = gpuprices(data_dir, "signals", "--limit", "0", "--format", "table")
    assert result.exit_code == 0, result.output
    assert "month_end_dip:" in result.stdout and "recurring" in result.stdout
    assert HOLDS in result.stdout
    frame = signals("month_end_dip", data_dir=data_dir)
    assert set(frame["dip_verdict"]) <= set(VERDICTS)
    assert (frame.loc[frame["source"] == DIPPED, "dip_verdict"] == HOLDS).all()
    assert {"month_verdict", "months_needed", "noise_pct"} <= set(frame.columns)
