"""The report for a buyer, part by part: the per-card history's trace names, the regional grid
naming places outside China, the simulated-data banner and the font stack that covers Chinese.
The whole page in Chromium on the demo history: tests/e2e/test_report_browser.py."""

from __future__ import annotations

import duckdb

from pipelines.report.card_history import card_history, trace_name
from pipelines.report.charts import FONT_STACK
from pipelines.report.sections import simulated
from pipelines.report.signals import regional_discount
from pipelines.report.tables import Cell
from tests.helpers.report_market import (
    FRANKFURT,
    LAST_DAY,
    build_database,
    build_page,
    market,
    obs,
)

# Test Cloud's A100 in Frankfurt too: Germany priced against the same cloud's US price (the US,
# the reference itself, and Beijing, the only tier-1 city, have no regional row of their own)
GERMANY = obs(16, **FRANKFURT, source="cloud_test", vendor="Test Cloud",
              vendor_kind="hyperscaler", url="https://cloud.example/pricing")


def test_vendor_names_reach_plotly_as_text_never_as_its_tags():
    """plotly reads <a href>, <b> and <br> in legend and hover text; entities it decodes."""
    assert trace_name("<a href='javascript:x'>Cloud</a>") == (
        "&lt;a href='javascript:x'&gt;Cloud&lt;/a&gt;")
    assert trace_name("阿里云 Alibaba Cloud") == "阿里云 Alibaba Cloud"
    assert trace_name("x" * 100).endswith("characters)")        # cut like every scraped value


def test_card_history_has_a_chart_per_card_with_a_line_per_vendor(tmp_path):
    db = build_database(tmp_path / "prices.db", market(LAST_DAY))
    with duckdb.connect(str(db), read_only=True) as con:
        cards = card_history(con)
    assert [c["card"] for c in cards["cards"]] == ["A100-80GB", "H100-80GB", "RTX4090-24GB"]
    assert cards["cards"][0]["vendors"] == 4        # Beijing, Steppe, Karst IDCs; Test Cloud
    assert "Plotly.newPlot" in cards["cards"][0]["html"]


def test_regional_grid_names_a_region_not_the_country_code_outside_china(tmp_path):
    db = build_database(tmp_path / "prices.db", [*market(LAST_DAY), GERMANY])
    with duckdb.connect(str(db), read_only=True) as con:
        grid = regional_discount(con)["table"]
    regions = {row[0]: row[1] for row in grid.rows}
    assert regions["DE"].text == "Hesse"             # the mart's group is "DE"
    assert "US" not in regions                       # the reference is never its own
    assert regions["CN"] in {"Inner Mongolia", "Guizhou"}   # provinces as they are


def test_banner_only_on_a_simulated_database(tmp_path):
    db = build_database(tmp_path / "prices.db", market(LAST_DAY))
    with duckdb.connect(str(db), read_only=True) as con:
        assert simulated(con) is None
    page = build_page(db, tmp_path / "index.html").path.read_text(encoding="utf-8")
    assert 'id="simulated"' not in page
    with duckdb.connect(str(db)) as con:
        con.execute("create schema truth")
        con.execute("create table truth.scenario as select timestamptz '2026-09-01 00:00+00' as "
                    "start_at, 30 as days, 4 as every_hours, 12 as offers, '[{\"effect\": "
                    "\"dip\", \"size_pct\": 8.0, \"sources\": null, \"days\": 5}]' as effects, "
                    "now() as created_at")
    page = build_page(db, tmp_path / "index.html").path.read_text(encoding="utf-8")
    assert "Simulated demo data" in page and "month-end dip: −8 % over the last 5" in page
    assert "<title>SIMULATED DEMO" in page


def test_font_stack_covers_chinese_on_windows_macos_and_linux(tmp_path):
    for font in ("Microsoft YaHei", "PingFang SC", "Noto Sans CJK SC", "Noto Sans SC"):
        assert f'"{font}"' in FONT_STACK
    db = build_database(tmp_path / "prices.db", market(LAST_DAY))
    page = build_page(db, tmp_path / "index.html").path.read_text(encoding="utf-8")
    assert f"font: 14px/1.45 {FONT_STACK};" in page       # in the CSS unescaped
    assert "&#34;" not in page.split("</style>")[0]


def test_regional_grid_states_the_error_to_expect_on_each_discount(tmp_path):
    db = build_database(tmp_path / "prices.db", [*market(LAST_DAY), GERMANY])
    with duckdb.connect(str(db), read_only=True) as con:
        grid = regional_discount(con)["table"]
        [(bound,)] = con.execute("select max(error_bound_pp) from marts.regional_discount "
                                 "where discount_pct is not null").fetchall()
    cells = [c for row in grid.rows for c in row[2:] if isinstance(c, Cell)]
    discounts = [c for c in cells if not c.text.endswith("*")]
    assert discounts and bound is not None
    assert all(" ± " in c.text and "expect an error of up to" in c.title for c in discounts)
    assert any(f"± {bound:.1f}" in c.text for c in discounts)
