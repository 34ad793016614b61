"""The reading commands of `gpuprices` (prices, signals, claims, export), `ui` and the run's
progress display, on a small published database built without crawling: hand-made observations,
every SQL model of the project built over them, the working file copied to data/prices.db as the
pipeline publishes it."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from click.testing import CliRunner

from pipelines.cli import main
from pipelines.cli.claims import VERDICTS
from pipelines.cli.group import LazyCommand
from pipelines.cli.output import console
from pipelines.cli.run_progress import StepProgress
from pipelines.warehouse.db import DUCKDB_CONFIG, ensure_schema
from pipelines.warehouse.sql_models import load_models, run_model
from spiders.layout import REPO_ROOT, SQL_DIR

SEEN = datetime(2026, 11, 30, 9, tzinfo=UTC)
HOURS = {"hour": 1, "day": 24, "week": 168, "month": 730, "year": 8760}
CNY_PER_USD = Decimal("7.1")
BEIJING = dict(country="CN", province_or_state="Beijing", city="Beijing", is_tier1_city=True)
INNER_MONGOLIA = dict(country="CN", province_or_state="Inner Mongolia", is_tier1_city=False)
VIRGINIA = dict(country="US", province_or_state="Virginia", city=None, is_tier1_city=False)
JIANGSU = dict(country="CN", province_or_state="Jiangsu", city="Nanjing", is_tier1_city=False)


def offer(source: str, vendor: str, region_code: str, place: dict, gpu_model: str, amount: str,
          *, period: str = "hour", kind: str = "on_demand", count: int = 1,
          fraction: str = "1", currency: str = "CNY", available: bool | None = True) -> dict:
    """One observation row as normalization writes it (per-GPU-hour prices computed here)."""
    fraction_d = Decimal(fraction)
    amount_d = Decimal(amount)
    per_gpu_hour = amount_d / HOURS[period] / (count * fraction_d)
    cny = per_gpu_hour * (CNY_PER_USD if currency == "USD" else 1)
    sku = f"{gpu_model} {count}x{fraction} {kind} {period}"
    offer_id = hashlib.sha256(f"{source}|{region_code}|{sku}".encode()).hexdigest()[:20]
    return {"observed_at": SEEN, "observed_hour": SEEN, "source": source, "vendor": vendor,
            "vendor_kind": "idc" if source.startswith("idc_") else "hyperscaler",
            "region_code": region_code, "city": None, **place, "sku": sku,
            "gpu_model": gpu_model, "gpu_variant": None, "gpu_count": count,
            "gpu_fraction": fraction_d,
            "vram_gb": Decimal(gpu_model.split("-")[1][:-2]) * fraction_d,
            "offer_kind": kind, "billing_period": period, "price_amount": amount_d,
            "currency": currency, "price_per_gpu_hour_cny": round(cny, 6),
            "price_per_gpu_hour_usd": round(cny / CNY_PER_USD, 6), "fx_rate_date": SEEN.date(),
            "available": available, "url": f"https://example.test/{source}",
            "raw_ref": offer_id, "offer_id": offer_id, "crawl_id": f"{source}-crawl"}


SINNET = ("idc_sinnet_bj", "光环新网 Sinnet", "北京", BEIJING)
ALIBABA = ("alibaba_cn", "阿里云 Alibaba Cloud", "cn-beijing", BEIJING)
ULANQAB = ("idc_ulanqab", "乌兰察布某IDC", "乌兰察布", {**INNER_MONGOLIA, "city": "Ulanqab"})
AUTODL = ("autodl_cn", "AutoDL", "内蒙B区", INNER_MONGOLIA)
AZURE = ("azure", "Microsoft Azure", "eastus", VIRGINIA)
NANJING = ("idc_nanjing", "南京某IDC", "南京", JIANGSU)
# scraped text is data: a vendor name that would clear the terminal and inject rich markup
HOSTILE = ("vastai", "vast.ai\x1b[2J\x1b[31m [bold]host[/bold]", "texas, us",
           dict(country="US", province_or_state="Texas", city=None, is_tier1_city=False))

OBSERVATIONS = [
    offer(*SINNET, "A100-80GB", "62"),
    offer(*SINNET, "A100-80GB", "24.50", fraction="0.25"),
    offer(*SINNET, "A100-80GB", "420", count=8),
    offer(*SINNET, "A100-80GB", "11800", period="month"),
    offer(*ALIBABA, "A100-40GB", "30"),
    offer(*ALIBABA, "A100-40GB", "8", kind="spot"),
    offer(*ULANQAB, "A100-80GB", "46"),
    offer(*ULANQAB, "A100-80GB", "8900", period="month"),
    offer(*AUTODL, "RTX4090-24GB", "45", period="day", available=False),
    offer(*AZURE, "A100-80GB", "3.673", currency="USD"),
    offer(*AZURE, "A100-80GB", "0.80", currency="USD", kind="spot"),
    offer(*AZURE, "H100-80GB", "6.98", currency="USD", available=None),
    offer(*NANJING, "H800-80GB", "45"),
    offer(*HOSTILE, "RTX4090-24GB", "0.35", currency="USD", kind="spot"),
]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    """data/prices.db published from data/.work/prices.db, as `feeds/prices_db` does."""
    root = tmp_path_factory.mktemp("cli") / "data"
    work = root / ".work" / "prices.db"
    work.parent.mkdir(parents=True)
    with duckdb.connect(str(work), config=DUCKDB_CONFIG) as con:
        ensure_schema(con)
        columns = list(OBSERVATIONS[0])
        con.executemany(f"insert into observations ({', '.join(columns)}) values "
                        f"({', '.join('?' for _ in columns)})",
                        [[row[c] for c in columns] for row in OBSERVATIONS])
        for model in load_models(SQL_DIR, {"observations", "quarantine"}):
            run_model(con, model)
        con.execute("checkpoint")
    shutil.copyfile(work, root / "prices.db")
    return root


def gpuprices(data_dir: Path, *args: str):
    result = CliRunner(env={"GPUPRICES_DATA_DIR": str(data_dir)}).invoke(main, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def as_json(data_dir: Path, *args: str) -> list[dict]:
    result = gpuprices(data_dir, "prices", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def published(data_dir: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(data_dir / "prices.db"), read_only=True) as con:
        return con.execute(sql).fetchall()


# --- prices -------------------------------------------------------------------------------------

def test_chinese_and_english_region_names_give_the_same_rows(data_dir):
    chinese = as_json(data_dir, "--region", "北京")
    english = as_json(data_dir, "--region", "Beijing")
    assert chinese == english
    # a place matches every vendor there, whatever the vendor calls the region
    assert {r["region_code"] for r in chinese} == {"北京", "cn-beijing"}
    assert len(chinese) == 6
    inner_mongolia = as_json(data_dir, "--region", "内蒙古")
    assert inner_mongolia == as_json(data_dir, "--region", "Inner Mongolia")
    short_name = as_json(data_dir, "--region", "内蒙")
    assert {r["region_code"] for r in short_name} == {"乌兰察布", "内蒙B区"}


def test_region_by_city_country_and_vendor_code(data_dir):
    assert {r["region_code"] for r in as_json(data_dir, "--region", "乌兰察布")} == {"乌兰察布"}
    assert {r["region_code"] for r in as_json(data_dir, "--region", "内蒙B区")} == {"内蒙B区"}
    assert {r["source"] for r in as_json(data_dir, "--region", "eastus")} == {"azure"}
    assert {r["country"] for r in as_json(data_dir, "--region", "us")} == {"US"}
    assert {r["province_or_state"] for r in as_json(data_dir, "--region", "江苏省")} == {"Jiangsu"}


def test_card_spellings_and_families(data_dir):
    family = as_json(data_dir, "--card", "a100")
    assert {r["gpu_model"] for r in family} == {"A100-40GB", "A100-80GB"}
    assert len(family) == sum(o["gpu_model"].startswith("A100") for o in OBSERVATIONS)
    assert {r["gpu_model"] for r in as_json(data_dir, "--card", "a100-80g")} == {"A100-80GB"}
    assert {r["gpu_model"] for r in as_json(data_dir, "--card", "A100 40G")} == {"A100-40GB"}
    assert {r["gpu_model"] for r in as_json(data_dir, "--card", "4090")} == {"RTX4090-24GB"}
    sliced = as_json(data_dir, "--card", "A100 80G MIG 2g.20gb")
    assert [(r["gpu_model"], r["gpu_fraction"]) for r in sliced] == [("A100-80GB", 0.25)]


def test_json_has_every_column_of_latest_prices(data_dir):
    rows = as_json(data_dir)
    columns = [c for (c,) in published(data_dir, """
        select column_name from information_schema.columns
        where table_schema = 'marts' and table_name = 'latest_prices' order by ordinal_position""")]
    assert len(rows) == len(OBSERVATIONS)
    assert all(list(r) == columns for r in rows)
    [sinnet] = [r for r in rows if r["source"] == "idc_sinnet_bj" and r["gpu_count"] == 8]
    assert sinnet["price_amount"] == 420.0 and sinnet["price_per_gpu_hour_cny"] == 52.5
    assert sinnet["last_seen_at"] == "2026-11-30T09:00:00Z"
    prices = [r["price_per_gpu_hour_cny"] for r in rows]
    assert prices == sorted(prices)            # cheapest first by default


def test_kind_period_and_price_filters(data_dir):
    spot = as_json(data_dir, "--kind", "spot")
    assert spot and {r["offer_kind"] for r in spot} == {"spot"}
    assert as_json(data_dir, "--kind", "竞价") == spot
    monthly = as_json(data_dir, "--period", "月")
    assert {r["billing_period"] for r in monthly} == {"month"} and len(monthly) == 2
    cheap = as_json(data_dir, "--max-price", "20")
    assert cheap and all(r["price_per_gpu_hour_cny"] <= 20 for r in cheap)
    assert len(cheap) < len(OBSERVATIONS)
    assert {r["source"] for r in as_json(data_dir, "--vendor", "阿里云")} == {"alibaba_cn"}
    assert {r["source"] for r in as_json(data_dir, "--vendor", "IDC_")} == {
        "idc_sinnet_bj", "idc_ulanqab", "idc_nanjing"}


def test_sort_by_vendor_and_limit(data_dir):
    rows = as_json(data_dir, "--sort", "vendor", "--limit", "4")
    assert len(rows) == 4
    assert [r["vendor"] for r in rows] == sorted(o["vendor"] for o in OBSERVATIONS)[:4]


def test_csv_matches_the_feed_columns(data_dir):
    result = gpuprices(data_dir, "prices", "--card", "H100", "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [(r["source"], r["region_code"], r["currency"], r["available"]) for r in rows] == [
        ("azure", "eastus", "USD", "")]
    assert rows[0]["price_amount"] == "6.980000"       # exact, as stored


def test_table_names_the_offers_and_how_filters_were_read(data_dir, monkeypatch):
    monkeypatch.setattr(console, "width", 200)
    result = gpuprices(data_dir, "prices", "--card", "a100", "--region", "北京")
    assert result.exit_code == 0, result.output
    assert "光环新网 Sinnet" in result.stdout and "420.00 CNY/hour" in result.stdout
    assert "A100-80GB ×8" in result.stdout and "1/4" in result.stdout
    assert "region 北京 → province/state Beijing" in result.stdout
    assert "eastus" not in result.stdout


def test_scraped_text_cannot_drive_the_terminal(data_dir, monkeypatch):
    monkeypatch.setattr(console, "width", 200)
    result = gpuprices(data_dir, "prices", "--vendor", "vast")
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout
    assert "vast.ai?[2J?[31m [bold]host[/bold]" in result.stdout    # shown, not executed
    [row] = as_json(data_dir, "--vendor", "vast")
    assert row["vendor"] == HOSTILE[1]                               # scripts get the data as is


def test_unknown_values_are_usage_errors_that_list_the_known_ones(data_dir):
    card = gpuprices(data_dir, "prices", "--card", "Ascend 910B")   # not in the card catalog
    assert card.exit_code == 2
    assert "unknown GPU model" in card.stderr and "A100-80GB" in card.stderr
    region = gpuprices(data_dir, "prices", "--region", "Atlantis")
    assert region.exit_code == 2
    assert "unknown region 'Atlantis'" in region.stderr
    assert "Beijing (北京)" in region.stderr and "Inner Mongolia (内蒙古)" in region.stderr
    vendor = gpuprices(data_dir, "prices", "--vendor", "nobody")
    assert vendor.exit_code == 2 and "Microsoft Azure (azure)" in vendor.stderr
    assert "\x1b" not in vendor.stderr                      # the hostile vendor name, defused
    kind = gpuprices(data_dir, "prices", "--kind", "cheap")
    assert kind.exit_code == 2 and "按需" in kind.stderr


def test_no_matching_rows_is_exit_3_with_well_formed_output(data_dir):
    result = gpuprices(data_dir, "prices", "--region", "西藏", "--format", "json")
    assert result.exit_code == 3
    assert json.loads(result.stdout) == []
    assert "no offers match region 西藏 → province/state Tibet" in result.stderr
    result = gpuprices(data_dir, "prices", "--card", "H800", "--kind", "spot", "--format", "csv")
    assert result.exit_code == 3
    assert result.stdout.splitlines()[0].startswith("offer_id,source,vendor")


@pytest.mark.parametrize("command", [["prices"], ["signals"], ["claims"], ["export"]])
def test_no_database_yet_is_exit_3(tmp_path, command):
    result = gpuprices(tmp_path / "data", *command)
    assert result.exit_code == 3
    assert "run `make run` first" in result.stderr


HOLDER = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])     # read-write, as `duckdb data/prices.db` without -readonly
print("holding", flush=True)
sys.stdin.readline()
"""


def test_a_database_held_for_writing_is_a_clear_error(data_dir, tmp_path):
    copy = tmp_path / "data"
    copy.mkdir()
    shutil.copyfile(data_dir / "prices.db", copy / "prices.db")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(copy / "prices.db")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        result = gpuprices(copy, "prices")
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert result.exit_code == 1
    assert "Could not set lock" in result.stderr and "duckdb -readonly" in result.stderr
    assert gpuprices(copy, "prices", "--format", "json").exit_code == 0   # released: readable


# --- signals and claims -------------------------------------------------------------------------

def test_signals_show_the_latest_day_and_the_scorecard(data_dir, monkeypatch):
    monkeypatch.setattr(console, "width", 200)
    result = gpuprices(data_dir, "signals")
    assert result.exit_code == 0, result.output
    assert "slice_to_whole_ratio:" in result.stdout and "2026-11-30" in result.stdout
    assert "spot_discount:" in result.stdout and "multi_gpu_discount:" in result.stdout
    assert "market claims" in result.stdout
    assert "A100 80 GB whole card costs 50-80 CNY/h in Beijing" in result.stdout
    [(verdict, reason)] = published(data_dir, "select verdict, reason from marts.market_claims "
                                              "where claim_id = 'a100_80gb_beijing_hourly'")
    # 62 CNY/h is inside 50-80, but one offer is no evidence: a verdict needs 5 distinct offers
    assert (verdict, reason.split(" (")[0]) == ("not enough data", "only 1 distinct offer")
    assert "not enough data" in result.stdout and "only 1 distinct offer" in result.stdout


def test_signals_narrowed_by_region(data_dir, monkeypatch):
    monkeypatch.setattr(console, "width", 200)
    result = gpuprices(data_dir, "signals", "--region", "Virginia")
    assert result.exit_code == 0, result.output
    assert "spot_discount:" in result.stdout and "eastus" in result.stdout
    assert "slice_to_whole_ratio:" not in result.stdout     # the slice is in Beijing
    assert "market claims" in result.stdout                # the scorecard covers everything
    nothing = gpuprices(data_dir, "signals", "--card", "4090", "--region", "北京")
    assert nothing.exit_code == 3 and "no signal rows match" in nothing.stderr


def test_claims_scorecard(data_dir, monkeypatch):
    monkeypatch.setattr(console, "width", 260)      # each claim on one line
    result = gpuprices(data_dir, "claims")
    assert result.exit_code == 0, result.output
    claims = published(data_dir, "select claim, verdict from marts.market_claims")
    assert claims
    for claim, _ in claims:
        assert claim in result.stdout
    counts = {v: sum(verdict == v for _, verdict in claims) for v in VERDICTS}
    assert (f"{counts['holds']} hold, {counts['does not hold']} do not hold, "
            f"{counts['inconclusive']} inconclusive, "
            f"{counts['not enough data']} without enough data") in result.stdout
    rows = json.loads(gpuprices(data_dir, "claims", "--format", "json").stdout)
    assert len(rows) == len(claims)
    assert {r["verdict"] for r in rows} <= set(VERDICTS)
    assert {"claim_id", "median_value", "ci_low", "ci_high", "distinct_offers", "vendors",
            "expected_low", "verdict", "reason", "source_doc"} <= set(rows[0])
    assert all(r["source_doc"].startswith("docs/market-claims.md#") for r in rows)


# --- export -------------------------------------------------------------------------------------

def test_export_writes_every_mart_with_a_bom(data_dir, tmp_path):
    out = tmp_path / "export"
    result = gpuprices(data_dir, "export", "--out", str(out), "--bom")
    assert result.exit_code == 0, result.output
    marts = [t for (t,) in published(data_dir, "select table_name from information_schema.tables "
                                               "where table_schema = 'marts'")]
    assert "market_claims" in marts and "latest_prices" in marts
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"{m}.{ext}" for m in marts for ext in ("csv", "parquet"))
    for mart in marts:
        body = (out / f"{mart}.csv").read_bytes()
        assert body.startswith(b"\xef\xbb\xbf")
        [(rows,)] = published(data_dir, f"select count(*) from marts.{mart}")
        assert len(body.decode("utf-8-sig").splitlines()) == rows + 1
        parquet = out / f"{mart}.parquet"
        assert duckdb.sql(f"select count(*) from '{parquet}'").fetchall() == [(rows,)]
    assert "latest_prices.csv" in result.stdout and str(len(OBSERVATIONS)) in result.stdout


def test_export_csv_only_without_bom(data_dir, tmp_path):
    out = tmp_path / "export"
    result = gpuprices(data_dir, "export", "--out", str(out), "--format", "csv")
    assert result.exit_code == 0, result.output
    files = list(out.iterdir())
    assert files and all(p.suffix == ".csv" for p in files)    # no scratch files left either
    assert (out / "latest_prices.csv").read_bytes().startswith(b"offer_id,")


# --- help, ui -----------------------------------------------------------------------------------

def test_group_help_documents_the_exit_codes(data_dir):
    result = gpuprices(data_dir, "--help")
    assert result.exit_code == 0
    for line in ("0  ok", "1  failed: the run failed", "2  usage error", "3  no data",
                 "4  partial"):
        assert line in result.stdout
    for command in ("prices", "signals", "claims", "export", "ui", "run", "sources", "reject"):
        assert command in result.stdout


@pytest.mark.parametrize("command", sorted(main.commands))
def test_every_command_has_help(data_dir, command):
    result = gpuprices(data_dir, command, "--help")
    assert result.exit_code == 0, result.output
    assert f"Usage: main {command}" in result.stdout
    assert len(result.stdout.splitlines()) > 4


def test_ui_help_and_a_port_in_use(data_dir):
    assert "--port" in gpuprices(data_dir, "ui", "--help").stdout
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = gpuprices(data_dir, "ui", "--port", str(port))
    assert result.exit_code == 2
    assert f"port {port} on 127.0.0.1 is in use" in result.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.e2e
def test_ui_serves_and_stops_on_sigterm(tmp_path):
    port = _free_port()
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "home"),
           "GPUPRICES_DATA_DIR": str(tmp_path / "data")}
    proc = subprocess.Popen([sys.executable, "-m", "pipelines.cli", "ui", "--port", str(port)],
                            cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        deadline, up = time.monotonic() + 180, False
        while time.monotonic() < deadline and not up:
            try:
                up = urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info",
                                            timeout=5).status == 200
            except OSError:
                time.sleep(1)
        assert up, "gpuprices ui did not serve within 180 s"
        assert (tmp_path / "home" / "dagster.yaml").exists()
        proc.send_signal(signal.SIGTERM)           # to gpuprices only: it must pass it on
        output, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, output
        assert "Dagster UI stopped" in output
        with socket.socket() as probe:             # nothing is left listening on the port
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is fine
            probe.bind(("127.0.0.1", port))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


# --- run progress -------------------------------------------------------------------------------

@dg.asset
def first_step() -> int:
    return 1


@dg.asset
def second_step(first_step: int) -> int:
    return first_step + 1


def test_step_progress_follows_a_runs_events(tmp_path):
    job = dg.Definitions(assets=[first_step, second_step],
                         jobs=[dg.define_asset_job("two_steps")]).resolve_job_def("two_steps")
    with dg.DagsterInstance.ephemeral() as instance:
        progress = StepProgress(instance, "3c1b9f0e-0000-4000-8000-000000000000", 1, tmp_path)
        instance.add_event_listener(progress.run_id, progress)
        seen: list[str] = []
        instance.add_event_listener(
            progress.run_id,
            lambda e: e.dagster_event and e.dagster_event.event_type_value == "STEP_START"
            and seen.append(progress.progress.tasks[0].description))
        result = job.execute_in_process(instance=instance, run_id=progress.run_id)
    assert result.success
    task = progress.progress.tasks[0]
    assert (task.total, task.completed, progress.finished) == (2, 2, 2)
    assert seen == ["first_step", "second_step"]     # the spinner named each running step
    assert progress.running == {}


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


# --- start-up -----------------------------------------------------------------------------------

# Dagster, Scrapy and Playwright load only in the commands that need them (run, ui, reject,
# check-sources, simulate; `sources` lists Scrapy spiders, so Scrapy only).
HEAVY = ("dagster", "scrapy", "playwright")
IMPORTS_AFTER = """
import json, sys
from click.testing import CliRunner
from pipelines.cli import main
codes = [CliRunner().invoke(main, args).exit_code for args in json.loads(sys.argv[1])]
loaded = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(sys.argv[2])))
print(json.dumps({"codes": codes, "loaded": loaded}))
"""


def heavy_imports_after(data_dir: Path, invocations: list[list[str]],
                        heavy=HEAVY) -> tuple[list[int], list[str]]:
    """Run `gpuprices` with each argument list in one fresh interpreter: their exit codes, and
    which of the `heavy` top-level modules that interpreter imported."""
    proc = subprocess.run([sys.executable, "-c", IMPORTS_AFTER, json.dumps(invocations),
                           json.dumps(heavy)], cwd=REPO_ROOT, capture_output=True, text=True,
                          env={**os.environ, "GPUPRICES_DATA_DIR": str(data_dir)}, check=True)
    result = json.loads(proc.stdout.splitlines()[-1])
    return result["codes"], result["loaded"]


def test_help_and_the_reading_commands_import_neither_dagster_nor_scrapy(data_dir, tmp_path):
    helps = [["--help"]] + [[command, "--help"] for command in sorted(main.commands)
                            if command != "simulate"]   # pipelines/tools/simulate/ decides its own
    reading = [["prices", "--card", "a100", "--region", "北京", "--vendor", "sinnet"],
               ["prices", "--format", "json"], ["signals", "--card", "a100", "--region", "US"],
               ["claims"], ["alerts"], ["export", "--out", str(tmp_path / "export")],
               ["advise", "--params", "7B", "--task", "inference", "--hours-per-day", "8",
                "--days", "5", "--region", "北京"]]
    codes, loaded = heavy_imports_after(data_dir, helps + reading)
    assert codes == [0] * len(helps + reading[:4]) + [3, 0, 0]    # alerts: no outbox here
    assert loaded == []
    codes, loaded = heavy_imports_after(data_dir, [["sources"]])
    assert codes == [0] and loaded == ["scrapy"]


def test_commands_imported_when_used_are_listed_by_their_own_summary():
    lazy = {name: command for name, command in main.commands.items()
            if isinstance(command, LazyCommand)}
    assert set(lazy) == {"advise", "simulate"}
    for command in lazy.values():
        for limit in (45, 70, 200):
            assert command.get_short_help_str(limit) == command.command.get_short_help_str(limit)
