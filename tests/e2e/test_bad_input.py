"""A run over snapshots seeded with bad rows lands the good rows and quarantines the bad ones with
reasons; a whole source gone wrong is stopped by the blocking checks until it is rejected."""

from __future__ import annotations

import json
import re
import shutil

from spiders.layout import SNAPSHOT_DIR
from tests.helpers.runs import gpuprices, query

SOURCES = ("--source", "azure", "--source", "idc_sinnet_bj")
BAD_ROWS = (
    "\n      <tr><td>Ascend 910B 64G</td><td>整卡</td><td>1</td><td>¥8.00/时</td><td>¥2,000/月</td>"
    "<td>有货</td></tr>\n"
    "      <tr><td>NVIDIA A100 80G SXM4</td><td>整卡 特价</td><td>1</td><td>¥0.00/时</td>"
    "<td>联系客服</td><td>有货</td></tr>\n"
    "      <tr><td>GeForce RTX 4090 24G</td><td>整卡 活动</td><td>1</td><td>¥3,200.00/时</td>"
    "<td>--</td><td>有货</td></tr>\n"
    "    </tbody>")


def _snapshots(tmp_path, edit) -> str:
    copy = tmp_path / "snapshots"
    shutil.copytree(SNAPSHOT_DIR, copy)
    edit(copy)
    return copy


def test_bad_rows_are_quarantined_and_good_rows_land(tmp_path):
    def seed(copy):
        page = copy / "idc_sinnet_bj" / "gpu_price.html"
        page.write_text(page.read_text(encoding="utf-8").replace("</tbody>", BAD_ROWS, 1),
                        encoding="utf-8")

    data_dir = tmp_path / "data"
    proc = gpuprices(data_dir, "run", *SOURCES, snapshots=_snapshots(tmp_path, seed))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert query(data_dir, "select count(*) from observations "
                           "where source = 'idc_sinnet_bj'") == [(18,)]
    reasons = dict(query(data_dir, """select stage || ': ' || reason, count(*) from quarantine
                                      group by 1 order by 1"""))
    assert reasons == {
        "bounds: 3200.000000 CNY per RTX4090-24GB GPU-hour is outside the plausible range "
        "0.3-15": 1,
        # a card outside the catalog cannot be read (V100 and other known cards now land)
        "card: unknown GPU model (not in card_catalog.csv) in 'Ascend 910B 64G 整卡'": 2,
        "price: not a price: -- (no price given)": 1,
        "price: not a price: 联系客服 (contact sales / price on request)": 1,
        "price: not a price: 面议 (negotiable)": 2,
        "price: zero amount in '¥0.00/时': a zero price is not a price": 1,
    }
    assert "quarantined 2 × idc_sinnet_bj [card]" in proc.stdout


def test_a_whole_source_gone_wrong_blocks_the_marts_until_rejected(two_source_run, tmp_path):
    # the session's clean run of both sources (tests/conftest.py), copied: this test runs again
    assert two_source_run.returncode == 0, two_source_run.stdout + two_source_run.stderr
    data_dir = two_source_run.copy_to(tmp_path)
    before = query(data_dir, "select count(*), sum(price_per_gpu_hour_cny) from observations")
    feed = data_dir / "feeds" / "latest_prices.csv"
    feed_before = feed.read_bytes()

    def misread_currency(copy):
        # The API starts answering in CNY while the numbers stay the USD ones: every price ~7x too
        # low.
        for page in (copy / "azure").glob("retail_prices_page*.json"):
            body = json.loads(page.read_text())
            for item in body["Items"]:
                item["currencyCode"] = "CNY"
            page.write_text(json.dumps(body))
        manifest = copy / "azure" / "manifest.json"
        meta = json.loads(manifest.read_text())
        meta["captured_at"] = "2026-11-30T10:00:00Z"   # the next hour's snapshot
        manifest.write_text(json.dumps(meta))

    proc = gpuprices(data_dir, "run", *SOURCES, snapshots=_snapshots(tmp_path, misread_currency))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "observation_batch:observation_batch_sources_consistent" in proc.stdout
    assert "price_level_ratio" in proc.stdout and "azure" in proc.stdout
    assert query(data_dir, "select count(*), sum(price_per_gpu_hour_cny) "
                           "from observations") == before
    assert feed.read_bytes() == feed_before                 # marts and feeds were not rebuilt

    # the summary names the pending crawls to reject (the published database was not replaced)
    [wrong_crawl] = re.findall(r"pending: azure (\S+)", proc.stdout)
    proc = gpuprices(data_dir, "reject", wrong_crawl, "--reason", "currency misread as CNY")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = gpuprices(data_dir, "run", *SOURCES)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert query(data_dir, "select count(*), sum(price_per_gpu_hour_cny) "
                           "from observations") == before
    [(status, failures)] = query(data_dir, "select status, failures from raw.crawls "
                                           f"where crawl_id = '{wrong_crawl}'")
    assert status == "rejected" and failures[-1] == "rejected: currency misread as CNY"
