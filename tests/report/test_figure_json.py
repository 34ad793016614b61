"""The report's figures are plotly's JSON figure spec built as plain dicts: each is what plotly's
own figure objects write for the same traces and layout (Scatter, then update_layout), byte for
byte, so the page a reader gets is unchanged, and plotly still accepts every property."""

from __future__ import annotations

import json
from datetime import date, timedelta

import plotly.graph_objects as go
import pytest

from pipelines.report.card_history import card_figure
from pipelines.report.charts import CHARTS, figure, layout, scatter
from pipelines.report.index_charts import _figure as index_figure

DAY = date(2026, 11, 1)


def _as_plotly_writes(fig: dict) -> str:
    """The JSON plotly's figure objects write for fig's traces and layout (its template left out,
    as the report sets its own)."""
    reference = go.Figure()
    for trace in fig["data"]:
        reference.add_trace(go.Scatter(**{k: v for k, v in trace.items() if k != "type"}))
    reference.update_layout(**fig["layout"])
    written = reference.to_plotly_json()
    written["layout"].pop("template")
    return json.dumps(written)


def _chart_points() -> list[dict]:
    rows = [(0, "whole card", "crawl", True, None), (1, "whole card", "crawl", False, None),
            (3, "whole card", "crawl", True, "joined: b"), (0, "slice", "crawl", True, None),
            (2, "slice", "gpu-rental-prices", True, None)]
    return [{"series": series, "calendar": calendar, "day": DAY + timedelta(days=d),
             "price": 10.0 + d, "offers": 3, "vendors": 2, "starts_segment": starts,
             "vendor_set_change": change} for d, series, calendar, starts, change in rows]


def _card_lines() -> dict:
    def line(source: str, calendar: str, days: list[int]) -> list[dict]:
        return [{"day": DAY + timedelta(days=d), "price": 20.0, "offers": 1, "source": source,
                 "calendar": calendar, "backfilled": calendar != "crawl",
                 "starts_segment": i == 0} for i, d in enumerate(days)]
    return {("A <b>", "a"): line("a", "crawl", [0, 1]),
            ("B", "b:arch"): line("b:arch", "arch", [0, 5])}


def _index_series() -> dict:
    def row(d: int, level: float | None) -> dict:
        return {"market": "china", "offer_kind": "on_demand", "index_date": DAY + timedelta(d),
                "low_pct": None if level is None else level - 2, "high_pct": level,
                "level_pct": level, "median_pct": 99.5, "vendors_matched": 3,
                "offers_matched": 9, "evidence_lacking": None if level else "too few vendors"}
    return {"s1": [row(0, 100.0), row(1, None), row(2, 101.25)]}


@pytest.mark.parametrize("fig", [
    figure("A100", CHARTS[0], _chart_points()),
    figure("H100", CHARTS[1], _chart_points()[:1]),
    card_figure("A100-80GB", _card_lines()),
    index_figure("A100-80GB", _index_series()),
], ids=["family-chart", "one-point", "card-history", "price-index"])
def test_each_figure_is_what_plotly_writes_byte_for_byte(fig):
    assert json.dumps(fig) == _as_plotly_writes(fig)


def test_keys_are_in_plotlys_order():
    assert list(scatter(y=[1], x=[2], line={"width": 1, "color": "red"})) == \
        ["line", "x", "y", "type"]
    assert list(scatter(line={"width": 1, "color": "red"})["line"]) == ["color", "width"]
    assert list(layout(height=1, legend={"y": 0, "font": {"size": 1}}, hovermode="x")) == \
        ["legend", "height", "hovermode"]
    assert list(layout(legend={"y": 0, "font": {"size": 1}})["legend"]) == ["font", "y"]


def test_the_remembered_template_is_the_one_plotly_makes(tmp_path, monkeypatch):
    """The chart template's JSON is remembered between processes (making it loads plotly's
    validators, about 0.5 s): a run reads what plotly would make, byte for byte; a memo made
    under another plotly version or template is made again, and one that cannot be read too."""
    from pipelines.report import charts

    made = charts.made_template_json()
    memo = tmp_path / "chart_template.json"
    monkeypatch.setattr(charts, "TEMPLATE_MEMO", memo)
    for stored in (None, '{"key": "plotly 0.0.1, template plotly_white", "template": {}}', "{"):
        if stored is not None:
            memo.write_text(stored, encoding="utf-8")
        charts._template_json.cache_clear()
        assert json.dumps(charts._template_json()) == json.dumps(made)     # made again
        assert json.loads(memo.read_text(encoding="utf-8"))["template"] == made
    charts._template_json.cache_clear()
    monkeypatch.setattr(charts, "made_template_json", lambda: pytest.fail("made, not read"))
    assert json.dumps(charts._template_json()) == json.dumps(made)         # read, not made
    charts._template_json.cache_clear()
