"""End to end: `gpuprices run` (the real Dagster job) over the replay server, Chromium included,
into a temporary data directory. Checks rows, types, known prices, idempotency and isolation.
The run is the session's `snapshot_run` (tests/conftest.py); the tests that run again do it on a
copy of it."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from spiders.layout import REPO_ROOT, SNAPSHOT_DIR
from spiders.registry import source_names, spider_class
from tests.helpers.runs import gpuprices, query


@pytest.fixture
def first_run(snapshot_run):
    """The session's run over the snapshots (tests/conftest.py): read, never written to."""
    assert snapshot_run.returncode == 0, snapshot_run.stdout + snapshot_run.stderr
    return snapshot_run.data_dir, snapshot_run


def skipped_sources() -> dict[str, str]:
    """Token-only sources whose token is not set here (autodl_cn, gpushare_cn in a default run):
    source -> the one line the run prints for it."""
    return {s: why for s in source_names() if (why := spider_class(s).missing_key())}


def test_summary_reports_every_source_and_the_checks(first_run):
    _, proc = first_run
    for source in ("azure", "autodl_cn", "matpool_cn", "idc_sinnet_bj"):
        assert source in proc.stdout
    printed = " ".join(proc.stdout.split())          # the console may wrap a long line
    for source, why in skipped_sources().items():    # skipped with one clear line, not failed
        assert f"{source}: {why}" in printed
    assert "checks: " in proc.stdout and " 0 failed" in proc.stdout
    assert "quarantined 2 × idc_sinnet_bj [price]: not a price: 面议" in proc.stdout  # negotiable


def test_all_sources_and_card_families_land(first_run):
    data_dir, _ = first_run
    sources = dict(query(data_dir, "select source, count(*) from observations group by 1"))
    # computing centres whose public fee tables name partitions no public evidence maps to a
    # card (PKU's, HKUST(GZ)'s GPU(ACD)): every row quarantined with that reason
    unnamed_cards = {"idc_pku_bj", "idc_hkustgz_gz"}
    assert set(sources) == set(source_names()) - set(skipped_sources()) - unnamed_cards
    quarantined = dict(query(data_dir, "select source, count(*) from quarantine group by 1"))
    assert {s: quarantined.get(s) for s in unnamed_cards} == {"idc_pku_bj": 11, "idc_hkustgz_gz": 2}
    # at least four real computing centres land offers (CIBR's V100 from its unit, CUHK-SZ's
    # A100 and A800 from one rate, USTC's and IKKEM's partitions mapped with their evidence)
    centres = [s for s in sources if s.startswith("idc_") and not spider_class(s).is_template]
    assert len(centres) >= 4 and {"idc_cibr_bj", "idc_cuhksz_sz", "idc_ustc_hf",
                                  "idc_ikkem_xm"} <= set(centres)
    models = {m for (m,) in query(data_dir, "select distinct gpu_model from observations")}
    assert {"A100-40GB", "A100-80GB", "H100-80GB", "H800-80GB", "RTX4090-24GB"} <= models
    # every card the sources sell is kept, not only the four mission families: quarantine means
    # "could not read"
    others = {"A800-80GB", "H20-96GB", "V100-32GB", "L40S-48GB", "RTX3090-24GB", "A10-24GB",
              "T4-16GB", "B200-180GB", "GH200-96GB", "A40-48GB", "RTXA6000-48GB"}
    assert others <= models
    latest = dict(query(data_dir, "select gpu_model, count(*) from marts.latest_prices group by 1"))
    assert others <= set(latest) and latest["A800-80GB"] >= 3   # gpugeek_cn's three, at least
    # idc_guian's illustrative H20 rows: the card and the 8-card server, hourly and monthly
    h20 = query(data_dir, "select gpu_count, billing_period, price_amount from marts.latest_prices "
                          "where gpu_model = 'H20-96GB' and source = 'idc_guian' order by 1, 2")
    assert h20 == [(1, "hour", Decimal("15")), (1, "month", Decimal("3300")),
                   (8, "hour", Decimal("105")), (8, "month", Decimal("24000"))]
    # the one card nobody sells in card_catalog.csv on purpose: Matpool's RTX A2000 pool (the
    # token-only autodl_cn vGPU-32GB and gpushare_cn A16 rows are quarantined by their own tests);
    # alibaba_cn's gn5 (a P100 family not in alibaba_cn_gpus.csv: one hourly row of the
    # priceserver record) and its A10 slices the catalog does not know (1/3, 1/6, 1/12: nine
    # hourly rows of the record); tencent_cn's HCCPNV5v
    # (a family its card table does not know); huaweicloud_cn's Ascend 310 flavor (ai1s, not
    # catalogued: its one hourly plan); the computing centres' rows that no public evidence maps
    # to a card (CUHK-Shenzhen "GPUs other than ...", HKUST(GZ) GPU(ACD) x 2, PKU's 11
    # partition rows, SRILS "GPU (高性能)"); the Ascend rows of ctyun_cn (PAK3 910B, hour and
    # month) and ctyun_js (two Atlas 800T A2 servers); nebius's RTX PRO 6000 and tensordock's
    # RTX 5000 Ada and RTX 4080 (not catalogued). The P4, P40 and Quadro RTX 6000 rows of
    # tencent_cn, tencent_cn_list, compshare_cn and lambda_cloud read as their cards.
    assert query(data_dir, "select source, count(*) from quarantine where stage = 'card' "
                           "group by 1 order by 1") == [("alibaba_cn", 10), ("ctyun_cn", 2),
                                                        ("ctyun_js", 2), ("huaweicloud_cn", 1),
                                                        ("idc_cuhksz_sz", 1),
                                                        ("idc_hkustgz_gz", 2), ("idc_pku_bj", 11),
                                                        ("idc_srils_sz", 1), ("matpool_cn", 1),
                                                        ("nebius", 1), ("tencent_cn", 2),
                                                        ("tensordock", 2)]
    assert {"P4-8GB", "P40-24GB", "QRTX6000-24GB"} <= models


def test_market_coverage_targets_hold(first_run):
    data_dir, _ = first_run
    rows = query(data_dir, (REPO_ROOT / "docs" / "coverage.sql").read_text())
    assert len(rows) == 9
    assert [(target, measured) for target, measured, _, ok in rows if not ok] == []


def test_column_types_follow_the_schema(first_run):
    data_dir, _ = first_run
    types = dict(query(data_dir, "select column_name, data_type from information_schema.columns "
                                 "where table_name = 'observations'"))
    assert types["observed_at"] == "TIMESTAMP WITH TIME ZONE"
    assert types["price_per_gpu_hour_cny"].startswith("DECIMAL(18,6)")
    assert types["gpu_count"] == "INTEGER" and types["available"] == "BOOLEAN"
    assert types["fx_rate_date"] == "DATE"


@pytest.mark.parametrize("source, sku_like, period, per_gpu_hour_cny", [
    ("idc_sinnet_bj", "NVIDIA A100 80G SXM4 整卡%", "hour", Decimal("62")),
    ("idc_sinnet_bj", "NVIDIA A100 80G SXM4 整机%", "hour", Decimal("52.5")),   # 420 / 8 cards
    ("idc_sinnet_bj", "NVIDIA A100 80G SXM4 MIG 2g.20gb%", "hour", Decimal("98")),    # 24.50 / 0.25
    ("idc_sinnet_bj", "NVIDIA A100 80G SXM4 整卡%", "month", Decimal("11800") / 730),
    ("matpool_cn", "rp-4090-a1", "hour", Decimal("2.2")),   # 220000 millicent, 2026-10-04
])
def test_known_cny_prices(first_run, source, sku_like, period, per_gpu_hour_cny):
    data_dir, _ = first_run
    rows = query(data_dir, f"""select price_per_gpu_hour_cny from observations
        where source = '{source}' and sku like '{sku_like}' and billing_period = '{period}'""")
    assert rows, "offer missing"
    assert all(abs(r[0] - per_gpu_hour_cny) < Decimal("0.01") for r in rows)


def test_usd_listing_converted_with_a_dated_rate(first_run):
    data_dir, _ = first_run
    [(amount, currency, usd, cny, fx_date)] = query(data_dir, """
        select price_amount, currency, price_per_gpu_hour_usd, price_per_gpu_hour_cny, fx_rate_date
        from observations where source = 'azure' and sku = 'Standard_NC24ads_A100_v4'
          and region_code = 'eastus' and offer_kind = 'on_demand'""")
    assert (amount, currency, usd) == (Decimal("3.673"), "USD", Decimal("3.673"))
    assert Decimal("6") * usd < cny < Decimal("8") * usd   # CNY per USD is about 7
    assert str(fx_date) <= "2026-11-30"


def test_feed_and_mart_are_published(first_run):
    data_dir, _ = first_run
    with (data_dir / "feeds" / "latest_prices.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    [(offers,)] = query(data_dir, "select count(distinct offer_id) from observations")
    assert len(rows) == offers
    assert list(rows[0])[:3] == ["offer_id", "source", "vendor"]
    assert rows[0]["last_seen_at"] == "2026-11-30T09:00:00Z"  # the snapshots' capture time, ISO UTC


def test_duckdb_cli_reads_the_database(first_run):
    data_dir, _ = first_run
    duckdb_cli = Path(sys.executable).parent / "duckdb"
    proc = subprocess.run([str(duckdb_cli), "-readonly", "-csv", str(data_dir / "prices.db"), "-c",
                           "select count(*) as n from marts.latest_prices"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    [(offers,)] = query(data_dir, "select count(*) from marts.latest_prices")
    assert proc.stdout.split() == ["n", str(offers)]


def test_raw_archive_holds_every_body(first_run):
    data_dir, _ = first_run
    # 3 Azure pages, IDC, Matpool x2
    assert len(list((data_dir / "raw" / "objects").glob("*/*.gz"))) >= 5


HOLDER = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])          # read-write, the DuckDB shell's default: the worst case
print(con.execute("select count(*) from observations").fetchone()[0], flush=True)
sys.stdin.readline()                       # hold the file open until the test says so
print(con.execute("select count(*) from observations").fetchone()[0], flush=True)
"""


def test_second_run_adds_no_rows_while_a_reader_holds_the_database(first_run, snapshot_run,
                                                                   tmp_path):
    data_dir = snapshot_run.copy_to(tmp_path)          # it runs again: on a copy of the first run
    before = query(data_dir, "select count(*) from observations")[0][0]
    quarantined = query(data_dir, "select count(*) from quarantine")[0][0]
    reader = subprocess.Popen([sys.executable, "-c", HOLDER, str(data_dir / "prices.db")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert int(reader.stdout.readline()) == before
        proc = gpuprices(data_dir, "run")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        reader.stdin.write("go\n")
        reader.stdin.flush()
        assert int(reader.stdout.readline()) == before   # its snapshot stayed whole and readable
    finally:
        reader.stdin.close()
        reader.wait(timeout=30)
    assert query(data_dir, "select count(*) from observations")[0][0] == before
    # a problem is kept once per captured item: replaying the same snapshots adds none again
    assert query(data_dir, "select count(*) from quarantine")[0][0] == quarantined


def test_rerun_from_raw_reproduces_the_observations(first_run, tmp_path):
    data_dir, _ = first_run
    rebuilt = tmp_path / "data"
    shutil.copytree(data_dir / "raw", rebuilt / "raw")
    no_snapshots = tmp_path / "no_snapshots"
    no_snapshots.mkdir()  # prove the bytes come from the archive, not the bundled snapshots
    proc = gpuprices(rebuilt, "run", "--from-raw", snapshots=no_snapshots)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "the raw archive" in proc.stdout
    sql = """select offer_id, observed_at, price_amount, price_per_gpu_hour_cny
             from observations order by all"""
    assert query(rebuilt, sql) == query(data_dir, sql)


def test_live_and_from_raw_exclude_each_other(tmp_path):
    proc = gpuprices(tmp_path / "data", "run", "--live", "--from-raw")
    assert proc.returncode == 2
    assert "--live and --from-raw exclude each other" in proc.stderr


def test_broken_source_is_isolated_and_loses_nothing(first_run, snapshot_run, tmp_path):
    data_dir = snapshot_run.copy_to(tmp_path)          # it adds a failed crawl: on a copy
    idc_before = query(data_dir, "select count(*) from observations where source = 'idc_sinnet_bj'")
    snapshots = tmp_path / "snapshots"
    shutil.copytree(SNAPSHOT_DIR, snapshots)
    page = snapshots / "idc_sinnet_bj" / "gpu_price.html"
    page.write_text(page.read_text(encoding="utf-8").replace("<th>包月</th>", "<th>月付</th>"),
                    encoding="utf-8")
    # the broken source and one other: every source again would only repeat the other's fate
    proc = gpuprices(data_dir, "run", "--source", "idc_sinnet_bj", "--source", "matpool_cn",
                     snapshots=snapshots)
    assert proc.returncode == 4, proc.stdout + proc.stderr          # partial: the other landed
    assert "idc_sinnet_bj" in proc.stdout and "FAILED" in proc.stdout
    assert "table headers ['包月'] not found" in proc.stdout
    assert query(data_dir, "select count(*) from observations "
                           "where source = 'idc_sinnet_bj'") == idc_before
    [(passed,)] = query(data_dir, """select passed from raw.crawls where source = 'matpool_cn'
                                      order by started_at desc limit 1""")
    assert passed
