"""The advisor over a database built with the real SQL models: offers read from
marts.latest_prices, `gpuprices advise` (table, JSON, exit codes) and the asset writing advice for
the saved workloads and its history."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from click.testing import CliRunner
from dagster_duckdb import DuckDBResource
from rich.cells import cell_len

from pipelines.advisor import Workload, offers_from_db
from pipelines.cli.advise import advise_command
from pipelines.defs.advisor import workload_advice
from pipelines.warehouse.db import DUCKDB_CONFIG, ensure_schema
from tests.helpers.advisor_offers import SEEN, row
from tests.helpers.observations import BEIJING, NANJING, ULANQAB, build, obs


def observation(price: float, period: str = "hour", **overrides) -> dict:
    """An `observations` row for the offer `row(price, period, **overrides)` describes."""
    r = row(price, period, **overrides)
    r.pop("last_seen_at")
    for key in ("gpu_fraction", "vram_gb", "price_amount", "price_per_gpu_hour_cny",
                "price_per_gpu_hour_usd"):
        r[key] = Decimal(str(round(r[key], 6)))
    for key in ("price_as_of", "counted"):   # the marts' own columns, not an observation's
        r.pop(key)
    r.setdefault("price_basis", "live")
    return obs(r.pop("price_amount"), observed_at=SEEN, raw_ref="raw/x", **r)


def build_db(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path), config=DUCKDB_CONFIG)
    try:
        ensure_schema(con)
        build(con, rows)
        con.execute("checkpoint")
    finally:
        con.close()


@pytest.fixture(scope="module")
def price_table() -> list[dict]:
    return [
        observation(400, "day", sku="A100 80G 整卡", **NANJING),
        observation(15, "hour", gpu_fraction=0.5, sku="A100 80G 1/2", **NANJING),
        observation(30, "hour", sku="A100 80G 按量", **BEIJING),
        observation(6, "hour", offer_kind="spot", sku="A100 80G 竞价", **ULANQAB),
    ]


@pytest.fixture
def published(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, price_table) -> Path:
    """<tmp>/data/prices.db published as the pipeline does: built in .work, then copied."""
    data = tmp_path / "data"
    build_db(data / ".work" / "prices.db", price_table)
    shutil.copyfile(data / ".work" / "prices.db", data / "prices.db")
    monkeypatch.setenv("GPUPRICES_DATA_DIR", str(data))
    return data


def test_offers_are_read_from_latest_prices(published):
    con = duckdb.connect(str(published / "prices.db"), read_only=True)
    try:
        table = offers_from_db(con)
    finally:
        con.close()
    assert len(table) == 4
    day = next(o for o in table if o.billing_period == "day")
    assert day.instance_price_cny == pytest.approx(400)
    assert day.region_group == "Jiangsu"


def test_advise_command_table(published):
    result = CliRunner().invoke(advise_command, ["--params", "13B", "--task", "lora",
                                                 "--hours-per-day", "4", "--days", "14",
                                                 "--format", "table"],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Memory: 33.7 GB" in result.output
    assert "memory estimated from parameters: measure it first" in result.output
    # the cost of finishing 56 A100-hours: the whole Beijing card at 30 CNY/h (56 h) beats the
    # half at 15 CNY/h, which delivers 0.375 of an A100 (149.3 h, 2,240 CNY)
    assert "Answer: 1 × A100-80GB SXM, Test IDC" in result.output and "1,680" in result.output
    assert "1/2 A100-80GB SXM (40 GB)" in result.output and "2,240" in result.output
    assert result.output.count("published, as of 2026-11-30 (1 d)") == 3   # on every line
    assert "spot: not for work that cannot be interrupted" in result.output
    assert "no --deadline" in result.output


def test_advise_command_json_and_region_in_both_languages(published):
    outputs = {}
    for region in ("江苏", "Jiangsu"):
        result = CliRunner().invoke(advise_command, [
            "--params", "13B", "--task", "lora", "--hours-per-day", "4", "--days", "14",
            "--region", region, "--format", "json"])
        assert result.exit_code == 0, result.output
        outputs[region] = json.loads(result.output)
    answer = outputs["江苏"]
    assert answer["options"] == outputs["Jiangsu"]["options"]
    assert answer["workload"]["region_read_as"] == "province/state Jiangsu"
    assert answer["estimate"]["total_gb"] == pytest.approx(33.7, abs=0.01)
    costs = [(o["kind"], o["total_cost_cny"], o["billing_period"]) for o in answer["options"]]
    assert costs == [("slice", 2240.0, "hour"), ("whole card", 5600.0, "day")]
    assert answer["best_per_kind"] == {"slice": 1, "whole card": 2}
    assert answer["options"][1]["last_seen_at"] == "2026-11-30T09:00:00Z"
    assert answer["options"][1]["region_group"] == "Jiangsu"


def test_advise_command_chooses_spot_when_interruptible(published):
    args = ["--params", "13B", "--task", "lora", "--hours-per-day", "4", "--days", "14",
            "--format", "json"]
    strict = json.loads(CliRunner().invoke(advise_command, args).output)
    relaxed = json.loads(CliRunner().invoke(advise_command, [*args, "--interruptible"]).output)
    assert "spot" not in {o["kind"] for o in strict["options"]}
    assert relaxed["options"][0]["kind"] == "spot"
    assert relaxed["options"][0]["total_cost_cny"] == pytest.approx(6 * 56 * 1.1)


def test_advise_command_shows_the_guides_verdicts_and_explains_its_figures(published):
    args = ["--params", "13B", "--task", "lora", "--hours-per-day", "4", "--days", "14"]
    table = CliRunner().invoke(advise_command, [*args, "--explain", "--format", "table"],
                                env={"COLUMNS": "250"})
    assert table.exit_code == 0, table.output
    assert "The answer's verdicts" in table.output
    for rule, verdict in (("whole card vs slice", "whole card"),
                          ("exclusive vs shared", "exclusive"),
                          ("single vs multi-GPU", "single card"),
                          ("spot", "not allowed"), ("monthly vs hourly", "hourly (or daily)")):
        assert any(rule in line and verdict in line for line in table.output.splitlines()), rule
    assert "Figures used" in table.output
    assert "model parallel per card, fast link: 2 cards 0.8, 4 cards 0.75, 8 cards 0.7" in \
        table.output
    answer = json.loads(CliRunner().invoke(advise_command, [*args, "--format", "json",
                                                            "--explain"]).output)
    assert [v["rule"] for v in answer["verdicts"]] == [
        "whole card vs slice", "exclusive vs shared", "single vs multi-GPU", "spot",
        "monthly vs hourly"]
    exclusive = answer["verdicts"][1]
    # the rule allows shared; the answer (a whole card, cheaper to finish) is exclusive
    assert exclusive["verdict"] == "exclusive" and exclusive["holds"] == [
        "cannot tolerate interruption"]
    assert exclusive["figures"]["rule_verdict"] == "shared"
    assert exclusive["because"].startswith("shared would do")
    assert exclusive["figures"]["conditions_held"] == 1
    # the scorecard's measure of the spot claim, read from the published marts.market_claims
    assert "spot_share_of_regular: " in answer["verdicts"][3]["because"]
    assert any("price claim (spot_share)" in line for line in answer["explain"])
    assert all(o["interconnect"] == "" and o["across_servers"] is False
               for o in answer["options"])                    # one card or a slice each
    assert "verdicts" not in answer["options"][0]


def test_advise_command_exit_codes(published, tmp_path, monkeypatch):
    runner = CliRunner()
    base = ["--hours-per-day", "4", "--days", "14"]
    no_fit = runner.invoke(advise_command, ["--params", "400B", "--task", "full-finetune", *base])
    assert no_fit.exit_code == 3 and "no current offer fits" in no_fit.output
    assert "needs more than 64 cards" in no_fit.output
    bad_task = runner.invoke(advise_command, ["--params", "13B", "--task", "distill", *base])
    assert bad_task.exit_code == 2 and "unknown task" in bad_task.output
    bad_region = runner.invoke(advise_command, ["--params", "13B", "--task", "lora", *base,
                                                "--region", "Atlantis"])
    assert bad_region.exit_code == 2 and "unknown region" in bad_region.output
    monkeypatch.setenv("GPUPRICES_DATA_DIR", str(tmp_path / "empty"))
    missing = runner.invoke(advise_command, ["--params", "13B", "--task", "lora", *base])
    assert missing.exit_code == 3 and "run `make run` first" in missing.output


def test_the_asset_writes_advice_for_every_saved_profile(published, tmp_path, monkeypatch):
    profiles = tmp_path / "workloads.yaml"
    profiles.write_text("""
workloads:
  - {name: small-lora, params: 13B, task: lora, hours_per_day: 4, days: 14}
  - {name: needs-spot, params: 13B, task: lora, hours_per_day: 4, days: 14, interruptible: true}
  - {name: broken, params: 13B, task: loar, hours_per_day: 4, days: 14}
""", encoding="utf-8")
    monkeypatch.setenv("GPUPRICES_WORKLOADS", str(profiles))
    work_db = published / ".work" / "prices.db"
    result = dg.materialize([workload_advice], resources={
        "duckdb": DuckDBResource(database=str(work_db), connection_config=DUCKDB_CONFIG)})
    assert result.success
    metadata = result.asset_materializations_for_node("advisor__workload_advice")[0].metadata
    assert len(metadata["invalid_profiles"].value) == 1
    con = duckdb.connect(str(work_db), read_only=True)
    try:
        rows = con.execute("""select workload, rank, kind, best_of_kind, total_cost_cny
                              from advisor.workload_advice order by workload, rank""").fetchall()
    finally:
        con.close()
    assert rows == [("needs-spot", 1, "spot", True, Decimal("369.60")),
                    ("needs-spot", 2, "whole card", True, Decimal("1680.00")),
                    ("needs-spot", 3, "slice", True, Decimal("2240.00")),
                    ("needs-spot", 4, "whole card", False, Decimal("5600.00")),
                    ("small-lora", 1, "whole card", True, Decimal("1680.00")),
                    ("small-lora", 2, "slice", True, Decimal("2240.00")),
                    ("small-lora", 3, "whole card", False, Decimal("5600.00"))]


def test_each_run_appends_the_best_option_per_workload_to_the_history(published, tmp_path):
    from pipelines.defs.advisor import write_advice

    work_db = published / ".work" / "prices.db"
    small = Workload.from_mapping({"name": "small-lora", "params": "13B", "task": "lora",
                                   "hours_per_day": 4, "days": 14})
    too_big = Workload.from_mapping({"name": "too-big", "params": "400B",
                                     "task": "full-finetune", "hours_per_day": 4, "days": 14})
    first, second = datetime(2026, 11, 30, 10, tzinfo=UTC), datetime(2026, 12, 1, 10, tzinfo=UTC)
    con = duckdb.connect(str(work_db), config=DUCKDB_CONFIG)
    try:
        write_advice(con, [small, too_big], first)
        write_advice(con, [small, too_big], second)
        history = con.execute("""select workload, computed_at, total_cost_cny, configuration,
                                        vendor, sku, offer_id is not null, region_group
                                 from advisor.workload_advice_history
                                 order by computed_at""").fetchall()
        # The advice table is replaced each run; the history keeps both runs.
        runs = con.execute("select count(distinct computed_at) "
                           "from advisor.workload_advice").fetchone()[0]
    finally:
        con.close()
    assert runs == 1
    # One row per run for the workload that fits (its rank-1 option, the whole card in Beijing),
    # none for the one no offer fits.
    assert [(w, t, cost, region) for w, t, cost, _, _, _, _, region in history] == [
        ("small-lora", first, Decimal("1680.00"), "Beijing"),
        ("small-lora", second, Decimal("1680.00"), "Beijing")]
    assert history[0][3] == "1 × A100-80GB SXM" and history[0][5] == "A100 80G 按量"
    assert history[0][6] is True


def test_the_asset_writes_the_verdicts_beside_each_option(published, tmp_path):
    from pipelines.defs.advisor import write_advice

    work_db = published / ".work" / "prices.db"
    small = Workload.from_mapping({"name": "small-lora", "params": "13B", "task": "lora",
                                   "hours_per_day": 4, "days": 14})
    con = duckdb.connect(str(work_db), config=DUCKDB_CONFIG)
    try:
        write_advice(con, [small], datetime(2026, 12, 1, 10, tzinfo=UTC))
        rows = con.execute("select verdicts, interconnect from advisor.workload_advice "
                           "order by rank").fetchall()
    finally:
        con.close()
    assert rows and all(v == rows[0][0] for v, _ in rows)      # the workload's, on every row
    assert rows[0][0].splitlines()[1].startswith(
        "exclusive vs shared: exclusive — shared would do (1 of 4 hold")


def test_the_cited_claims_are_the_ones_the_scorecard_measures(published):
    """efficiency.toml names claims; their ranges come from market_claims.sql, the very figures
    the built marts.market_claims scores against the data."""
    from pipelines.advisor import measured_claims_from_db
    from pipelines.advisor.efficiency import cited_claims

    con = duckdb.connect(str(published / "prices.db"), read_only=True)
    try:
        measured = measured_claims_from_db(con)
    finally:
        con.close()
    for claim in cited_claims().values():
        row = measured[claim.claim_id]
        assert (row["expected_low"], row["expected_high"]) == (claim.expected_low,
                                                               claim.expected_high)
    assert measured_claims_from_db(duckdb.connect(":memory:")) == {}    # no scorecard yet


def test_an_old_price_is_left_out_of_the_advice_unless_max_age(tmp_path, monkeypatch):
    """A cheaper offer last seen 200 days ago (beyond the 180-day horizon) is not advised by
    default, and the command says it left one out; --max-age all advises it, with its as-of
    date and age."""
    old = SEEN - timedelta(days=200)
    stale = observation(10, "hour", sku="A100 80G 旧", source="idc_old", vendor="Old IDC",
                        **NANJING)
    rows = [observation(30, "hour", sku="A100 80G 按量", **BEIJING),
            {**stale, "observed_at": old, "observed_hour": old, "fx_rate_date": old.date()}]
    data = tmp_path / "data"
    build_db(data / "prices.db", rows)
    monkeypatch.setenv("GPUPRICES_DATA_DIR", str(data))
    args = ["--params", "7B", "--task", "inference", "--hours-per-day", "2", "--days", "1"]

    answer = json.loads(CliRunner().invoke(advise_command, [*args, "--format", "json"]).output)
    assert {o["vendor"] for o in answer["options"]} == {"Test IDC"}
    assert answer["aged_out"] == 1 and answer["old_prices"] is None
    assert (answer["options"][0]["price_as_of"], answer["options"][0]["price_age_days"]) == (
        "2026-11-30", 1)
    table = CliRunner().invoke(advise_command, [*args, "--format", "table"],
                               env={"COLUMNS": "200"})
    assert "1 offer older than 180 days left out (--max-age all shows them)" in table.output
    assert "as of 2026-11-30 (1 d)" in table.output

    every = CliRunner().invoke(advise_command, [*args, "--max-age", "all", "--format", "json"])
    answer = json.loads(every.output)
    assert answer["options"][0]["vendor"] == "Old IDC"
    assert answer["options"][0]["price_age_days"] == 201 and answer["aged_out"] == 0
    table = CliRunner().invoke(advise_command, [*args, "--max-age", "all", "--format", "table"],
                               env={"COLUMNS": "200"})
    assert f"as of {old:%Y-%m-%d} (7 mo)" in table.output             # 201 days, in words
    assert answer["old_prices"] is None              # one of two is old: half is not most


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.mark.parametrize("width", [80, 120, 200])
def test_the_advice_fits_the_terminal_and_a_pipe_gets_tab_separated_options(published, width):
    """A terminal (forced, so rich wraps as it would on one) of 80, 120 and 200 columns: no line
    wider than it, each option's configuration and vendor shown; in a pipe (no --format) one
    tab-separated line per option, the same options as the csv."""
    args = ["--params", "13B", "--task", "lora", "--hours-per-day", "4", "--days", "14"]
    table = CliRunner().invoke(advise_command, [*args, "--format", "table"],
                               env={"COLUMNS": str(width), "FORCE_COLOR": "1"})
    assert table.exit_code == 0, table.output
    lines = ANSI.sub("", table.output).splitlines()
    assert [line for line in lines if cell_len(line) > width] == []
    options = list(csv.DictReader(io.StringIO(
        CliRunner().invoke(advise_command, [*args, "--format", "csv"]).output)))
    assert options
    for option in options:
        assert any(option["vendor"] in line for line in lines), (width, option["vendor"])
        assert option["cost_to_finish_cny"].split(".")[0] in " ".join(lines).replace(",", "")
    header, *rows = CliRunner().invoke(advise_command, args).output.splitlines()
    assert header.split("\t")[:3] == ["rank", "kind", "configuration"]
    assert len(rows) == len(options) and all(len(r.split("\t")) == len(header.split("\t"))
                                             for r in rows)
