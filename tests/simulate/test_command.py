"""`gpuprices simulate`: help, every effect flag, truth tables, refusals and usage errors (moved
from test_simulate.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import pytest
from click.testing import CliRunner

from pipelines.cli.simulate import simulate_command
from pipelines.simulate import load_offers, simulate
from tests.helpers.simulated import query

SOURCES = ["idc_sinnet_bj", "idc_ulanqab", "idc_nanjing"]
START = datetime(2026, 6, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def offers() -> pd.DataFrame:
    return load_offers(sources=SOURCES)


def test_command_line(offers, tmp_path):
    source_db = tmp_path / "source.db"     # any database with marts.latest_prices will do
    simulate(source_db, offers=offers, start=START, days=1, every_hours=6)
    runner = CliRunner()
    result = runner.invoke(simulate_command, ["--help"])
    assert result.exit_code == 0
    assert "--dip SIZE" in result.output and "--regional-gap" in result.output
    for flag in ("--trend", "--churn", "--fx-move", "--region-copy", "--slice-ratio",
                 "--server-ratio", "--spot-ratio", "--monthly-ratio"):
        assert flag in result.output
    target = tmp_path / "cli.db"
    result = runner.invoke(simulate_command, [
        "--db", str(target), "--offers-from", str(source_db), "--sources", "idc_ulanqab",
        "--start", "2026-06-01", "--days", "3", "--every-hours", "6", "--seed", "4",
        "--dip", "8:idc_ulanqab:5", "--drop", "idc_ulanqab:10:2026-06-02T00:00",
        "--trend", "-9:idc_ulanqab", "--churn", "vanish:idc_ulanqab:5:0.5"])
    assert result.exit_code == 0, result.output
    assert "rows/s" in result.output and "models" in result.output
    n = (offers["source"] == "idc_ulanqab").sum()
    assert query(target, "select count(*) as n from observations")["n"][0] == n * 12
    assert query(target, "select count(*) as n from marts.latest_prices")["n"][0] == n
    truth = query(target, "select effect, count(*) as n from truth.offer_effects group by 1")
    rows = dict(zip(truth["effect"], truth["n"], strict=True))
    vanished = rows.pop("churn_vanish", 0)                 # a seeded half of the offers
    assert rows == {"dip": n, "drop": n, "trend": n} and 0 < vanished < n
    assert "truth" in result.output
    refused = runner.invoke(simulate_command, ["--db", str(tmp_path / "prices.db")])
    assert refused.exit_code == 2 and "refusing" in refused.output
    for spec in (["--dip", "oops"], ["--trend", "x"], ["--churn", "gone"],
                 ["--fx-move", "CNY:5:2026-06-02T00:00"]):
        bad = runner.invoke(simulate_command, ["--db", str(target), *spec])
        assert bad.exit_code == 2, spec
