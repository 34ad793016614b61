"""`gpuprices signals`, `claims`, `export`, `report` and `alerts` on the small published database
of tests/cli/conftest.py."""

from __future__ import annotations

import json

import duckdb
import pytest

from pipelines.cli.output import console
from pipelines.verdicts import DOES_NOT_HOLD, HOLDS, NOT_ENOUGH_EVIDENCE, VERDICTS, tally
from tests.helpers.published import gpuprices, published

# --- signals and claims -------------------------------------------------------------------------

def test_signals_show_the_latest_day_and_the_scorecard(data_dir, monkeypatch):
    monkeypatch.setattr(console, "width", 200)
    result = gpuprices(data_dir, "signals", "--format", "table")
    assert result.exit_code == 0, result.output
    assert "slice_to_whole_ratio:" in result.stdout and "2026-11-30" in result.stdout
    assert "spot_discount:" in result.stdout and "multi_gpu_discount:" in result.stdout
    assert "market claims" in result.stdout
    assert "A100 80 GB whole card costs 50-80 CNY/h in Beijing" in result.stdout
    [(verdict, lacking, needed, reason)] = published(
        data_dir, "select verdict, evidence_lacking, distinct_offers_needed, reason "
                  "from marts.market_claims where claim_id = 'a100_80gb_beijing_hourly'")
    # 62 CNY/h is inside 50-80, but one offer is no evidence: a verdict needs 5 distinct offers
    assert (verdict, lacking, needed, reason.split(" (")[0]) == (
        NOT_ENOUGH_EVIDENCE, "too few offers", 5, "only 1 distinct offer")
    assert NOT_ENOUGH_EVIDENCE in result.stdout and "only 1 distinct offer" in result.stdout
    assert "needs 5 distinct offers" in result.stdout


def test_signals_narrowed_by_region(data_dir, monkeypatch):
    monkeypatch.setattr(console, "width", 200)
    result = gpuprices(data_dir, "signals", "--region", "Virginia", "--format", "table")
    assert result.exit_code == 0, result.output
    assert "spot_discount:" in result.stdout and "eastus" in result.stdout
    assert "slice_to_whole_ratio:" not in result.stdout     # the slice is in Beijing
    assert "market claims" in result.stdout                # the scorecard covers everything
    nothing = gpuprices(data_dir, "signals", "--card", "4090", "--region", "北京")
    assert nothing.exit_code == 3 and "no signal rows match" in nothing.stderr
    # the true reason: no offer matches at all, not "signals need comparable offers"
    assert "no counted latest offer matches" in " ".join(nothing.stderr.split())


def test_claims_scorecard(data_dir, monkeypatch):
    monkeypatch.setattr(console, "width", 260)      # each claim on one line
    result = gpuprices(data_dir, "claims", "--format", "table")
    assert result.exit_code == 0, result.output
    claims = published(data_dir, "select claim, verdict from marts.market_claims")
    assert claims
    for claim, _ in claims:
        assert claim in result.stdout
    counts = {v: sum(verdict == v for _, verdict in claims) for v in VERDICTS}
    assert sum(counts.values()) == len(claims)                  # no verdict outside the three
    assert (f"{counts[HOLDS]} hold{'s' if counts[HOLDS] == 1 else ''}, "
            f"{counts[DOES_NOT_HOLD]} do{'es' if counts[DOES_NOT_HOLD] == 1 else ''} not hold, "
            f"{counts[NOT_ENOUGH_EVIDENCE]} not enough evidence") in result.stdout
    for word in ("inconclusive", "not enough data", "illustrative only"):
        assert word not in result.stdout
    rows = json.loads(gpuprices(data_dir, "claims", "--format", "json").stdout)
    assert len(rows) == len(claims)
    assert {r["verdict"] for r in rows} <= set(VERDICTS)
    assert {"claim_id", "median_value", "ci_low", "ci_high", "distinct_offers", "vendors",
            "expected_low", "verdict", "evidence_lacking", "distinct_offers_needed", "reason",
            "source_doc"} <= set(rows[0])
    assert all(r["source_doc"].startswith("docs/market-claims.md#") for r in rows)


@pytest.mark.parametrize("verdicts, line", [
    ([], "0 hold, 0 do not hold, 0 not enough evidence"),
    ([HOLDS] * 3 + [DOES_NOT_HOLD] + [NOT_ENOUGH_EVIDENCE] * 15,
     "3 hold, 1 does not hold, 15 not enough evidence"),
    ([HOLDS, DOES_NOT_HOLD, DOES_NOT_HOLD], "1 holds, 2 do not hold, 0 not enough evidence"),
])
def test_the_tally_counts_each_of_the_three_verdicts(verdicts, line):
    assert tally(verdicts) == line


# --- export -------------------------------------------------------------------------------------

def test_export_writes_every_mart_with_a_bom(data_dir, tmp_path, observations):
    out = tmp_path / "export"
    result = gpuprices(data_dir, "export", "--out", str(out), "--bom")
    assert result.exit_code == 0, result.output
    marts = [t for (t,) in published(data_dir, "select table_name from information_schema.tables "
                                               "where table_schema = 'marts'")]
    assert "market_claims" in marts and "latest_prices" in marts
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"{m}.{ext}" for m in marts for ext in ("csv", "parquet", "schema.json"))
    for mart in marts:
        body = (out / f"{mart}.csv").read_bytes()
        assert body.startswith(b"\xef\xbb\xbf")
        [(rows,)] = published(data_dir, f"select count(*) from marts.{mart}")
        assert len(body.decode("utf-8-sig").splitlines()) == rows + 1
        parquet = out / f"{mart}.parquet"
        assert duckdb.sql(f"select count(*) from '{parquet}'").fetchall() == [(rows,)]
    assert "latest_prices.csv" in result.stdout and str(len(observations)) in result.stdout


def test_export_csv_only_without_bom(data_dir, tmp_path):
    out = tmp_path / "export"
    result = gpuprices(data_dir, "export", "--out", str(out), "--format", "csv")
    assert result.exit_code == 0, result.output
    files = list(out.iterdir())
    # the CSVs and their column types; no scratch files left either
    assert files and all(p.suffix == ".csv" or p.name.endswith(".schema.json") for p in files)
    assert (out / "latest_prices.schema.json").exists()
    assert (out / "latest_prices.csv").read_bytes().startswith(b"offer_id,")


# --- report and alerts ----------------------------------------------------------------------------

def test_report_command_writes_the_page(data_dir, tmp_path):
    out = tmp_path / "report.html"
    result = gpuprices(data_dir, "report", "--out", str(out))
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert "report:" in result.output and "market" in page.lower()
    assert "\x1b[2J" not in page          # the hostile vendor name is escaped on the page too


def test_alerts_command_without_an_outbox_says_no_data(data_dir):
    result = gpuprices(data_dir, "alerts")
    assert result.exit_code == 3
    assert "alerts.outbox" in result.output and "make run" in result.output


def test_alerts_command_lists_the_outbox(tmp_path):
    root = tmp_path / "data"
    root.mkdir()
    with duckdb.connect(str(root / "prices.db")) as con:
        from pipelines.alerts import OUTBOX_SQL

        con.execute(OUTBOX_SQL)
        con.execute("""insert into alerts.outbox (alert_key, rule, title, body, payload, created_at,
                       status, attempts, last_error) values
                       ('k1', 'drop', 'A100-80GB \x1b[2J 12 % cheaper', 'b', '{}', now(),
                        'failed', 3, 'json://127.0.0.1: refused')""")
    result = gpuprices(root, "alerts", "--status", "failed")
    assert result.exit_code == 0, result.output
    assert "drop" in result.output and "12 % cheaper" in result.output
    assert "refused" in result.output
    assert "\x1b[2J" not in result.output
    assert gpuprices(root, "alerts", "--status", "sent").exit_code == 3
