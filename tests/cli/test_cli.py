"""`gpuprices prices` on a small published database built without crawling (tests/cli/conftest.py):
filters in Chinese and English, formats, usage errors, no data and a database held for writing.
The other reading commands: test_marts_commands.py; help, ui, progress, start-up: test_startup.py.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys

import pytest

from pipelines.cli.output import console
from pipelines.feed_cells import spreadsheet_safe
from tests.helpers.published import HOSTILE, as_json, gpuprices, published

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


def test_card_spellings_and_families(data_dir, observations):
    family = as_json(data_dir, "--card", "a100")
    assert {r["gpu_model"] for r in family} == {"A100-40GB", "A100-80GB"}
    assert len(family) == sum(o["gpu_model"].startswith("A100") for o in observations)
    assert {r["gpu_model"] for r in as_json(data_dir, "--card", "a100-80g")} == {"A100-80GB"}
    assert {r["gpu_model"] for r in as_json(data_dir, "--card", "A100 40G")} == {"A100-40GB"}
    assert {r["gpu_model"] for r in as_json(data_dir, "--card", "4090")} == {"RTX4090-24GB"}
    sliced = as_json(data_dir, "--card", "A100 80G MIG 2g.20gb")
    assert [(r["gpu_model"], r["gpu_fraction"]) for r in sliced] == [("A100-80GB", 0.25)]


def test_json_has_every_column_of_latest_prices(data_dir, observations):
    rows = as_json(data_dir)
    columns = [c for (c,) in published(data_dir, """
        select column_name from information_schema.columns
        where table_schema = 'marts' and table_name = 'latest_prices' order by ordinal_position""")]
    assert len(rows) == len(observations)
    # then each price's as-of date and its age in days (to the test clock's day), how far it
    # trails its record's newest data, and its source's state (tests/query/test_source_states.py;
    # none here: no crawl is recorded)
    assert all(list(r) == [*columns, "price_as_of", "price_age_days", "days_behind_record",
                           "source_state", "source_stale_since"] for r in rows)
    assert {(r["source_state"], r["source_stale_since"]) for r in rows} == {(None, None)}
    [sinnet] = [r for r in rows if r["source"] == "idc_sinnet_bj" and r["gpu_count"] == 8]
    assert sinnet["price_amount"] == 420.0 and sinnet["price_per_gpu_hour_cny"] == 52.5
    assert sinnet["last_seen_at"] == "2026-11-30T09:00:00Z"
    assert (sinnet["price_as_of"], sinnet["price_age_days"]) == ("2026-11-30", 1)
    prices = [r["price_per_gpu_hour_cny"] for r in rows]
    assert prices == sorted(prices)            # cheapest first by default


def test_kind_period_and_price_filters(data_dir, observations):
    spot = as_json(data_dir, "--kind", "spot")
    assert spot and {r["offer_kind"] for r in spot} == {"spot"}
    assert as_json(data_dir, "--kind", "竞价") == spot
    monthly = as_json(data_dir, "--period", "月")
    assert {r["billing_period"] for r in monthly} == {"month"} and len(monthly) == 2
    cheap = as_json(data_dir, "--max-price", "20")
    assert cheap and all(r["price_per_gpu_hour_cny"] <= 20 for r in cheap)
    assert len(cheap) < len(observations)
    assert {r["source"] for r in as_json(data_dir, "--vendor", "阿里云")} == {"alibaba_cn"}
    assert {r["source"] for r in as_json(data_dir, "--vendor", "IDC_")} == {
        "idc_sinnet_bj", "idc_ulanqab", "idc_nanjing"}


def test_sort_by_vendor_and_limit(data_dir, observations):
    rows = as_json(data_dir, "--sort", "vendor", "--limit", "4")
    assert len(rows) == 4
    assert [r["vendor"] for r in rows] == sorted(o["vendor"] for o in observations)[:4]


def test_csv_matches_the_feed_columns(data_dir):
    result = gpuprices(data_dir, "prices", "--card", "H100", "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [(r["source"], r["region_code"], r["currency"], r["available"]) for r in rows] == [
        ("azure", "eastus", "USD", "")]
    assert rows[0]["price_amount"] == "6.980000"       # exact, as stored


def test_table_names_the_offers_and_how_filters_were_read(data_dir, monkeypatch):
    monkeypatch.setattr(console, "width", 200)
    result = gpuprices(data_dir, "prices", "--card", "a100", "--region", "北京",
                       "--format", "table")
    assert result.exit_code == 0, result.output
    assert "光环新网 Sinnet" in result.stdout and "420.00 CNY/hour" in result.stdout
    assert "8 × A100-80GB" in result.stdout and "1/4 card (20 GB)" in result.stdout
    assert "region 北京 → province/state Beijing" in result.stdout
    assert "eastus" not in result.stdout


def test_scraped_text_cannot_drive_the_terminal(data_dir, monkeypatch):
    monkeypatch.setattr(console, "width", 200)
    result = gpuprices(data_dir, "prices", "--vendor", "vast", "--format", "table")
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout
    assert "vast.ai?[2J?[31m [bold]host[/bold]" in result.stdout    # shown, not executed
    [row] = as_json(data_dir, "--vendor", "vast")
    assert row["vendor"] == HOSTILE[1]                               # scripts get the data as is


def test_csv_output_is_safe_to_open_in_a_spreadsheet_and_json_keeps_the_text(data_dir):
    result = gpuprices(data_dir, "prices", "--vendor", "vast", "--format", "csv")
    assert result.exit_code == 0, result.output
    [row] = list(csv.DictReader(io.StringIO(result.stdout)))
    assert row["vendor"] == "vast.ai\ufffd[2J\ufffd[31m [bold]host[/bold]"   # no raw ESC
    assert "\x1b" not in result.stdout
    assert as_json(data_dir, "--vendor", "vast")[0]["vendor"] == HOSTILE[1]


@pytest.mark.parametrize("cell, safe", [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"), ("+1+2", "'+1+2"),
    ("-2+3", "'-2+3"), ("@SUM(A1)", "'@SUM(A1)"), ("\t=1", "' =1"), ("\uff1d1", "'\uff1d1"),
    ("-2.5", "-2.5"), ("A100 80GB", "A100 80GB"), ("", ""), ("a\u202eb", "a\ufffdb"),
    ("x" * 1500, "x" * 988 + "…[truncated]"),
])
def test_printed_csv_cells_follow_the_feeds_rule(cell, safe):
    assert spreadsheet_safe([cell]) == [safe]


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
