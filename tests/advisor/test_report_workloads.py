"""The report's saved workloads show the guides' verdicts beside each workload's cheapest options
(pipelines/report/sections.py `workloads`, templates/workloads.html.j2), and the interconnect
under a multi-card configuration."""

from __future__ import annotations

import duckdb
from markupsafe import escape

from pipelines.advisor import Workload
from pipelines.advisor.records import verdict_lines
from pipelines.defs.advisor import write_advice
from tests.helpers.report_market import LAST_DAY, build_database, build_page, market


def _section(html: str) -> str:
    section = html[html.index('<section id="workloads">'):]
    return section[:section.index("</section>")]


def test_the_saved_workloads_show_their_verdicts_beside_the_cheapest_options(tmp_path):
    db = build_database(tmp_path / "prices.db", market(LAST_DAY))
    profiles = [Workload.from_mapping({"name": "short-lora", "params": "13B", "task": "lora",
                                       "hours_per_day": 4, "days": 14}),
                Workload.from_mapping({"name": "long-inference", "params": "7B",
                                       "task": "inference", "hours_per_day": 24, "days": 30})]
    with duckdb.connect(str(db)) as con:
        write_advice(con, profiles, LAST_DAY)
        stored = dict(con.execute("select workload, verdicts from advisor.workload_advice "
                                  "where rank = 1").fetchall())
        kinds = dict(con.execute("select workload, kind from advisor.workload_advice "
                                 "where rank = 1").fetchall())
        periods = dict(con.execute("select workload, billing_period from "
                                   "advisor.workload_advice where rank = 1").fetchall())
    assert set(stored) == {"short-lora", "long-inference"}
    section = _section(build_page(db, tmp_path / "index.html").path.read_text(encoding="utf-8"))
    assert "The guides&#39; rules, applied" in section or "The guides' rules, applied" in section
    for name, text in stored.items():
        parts = verdict_lines(text)
        assert [rule for rule, _, _ in parts] == ["whole card vs slice", "exclusive vs shared",
                                                  "single vs multi-GPU", "spot",
                                                  "monthly vs hourly"]
        for _, verdict, because in parts:
            assert str(escape(verdict)) in section
            assert str(escape(because))[:120] in section, (name, because)
    short, long = (dict((r, v) for r, v, _ in verdict_lines(stored[n]))
                   for n in ("short-lora", "long-inference"))
    # 4 h runs: one condition of four, shared would do; the verdict is the answer's
    assert short["exclusive vs shared"] == ("shared" if kinds["short-lora"] == "slice"
                                            else "exclusive")
    assert long["exclusive vs shared"] == "exclusive"        # 720 h, no interruption: two
    # 720 h in 30 days ≥ 584 h: the rule says monthly; the verdict is the answer's billing
    monthly = periods["long-inference"] in ("week", "month", "year")
    assert long["monthly vs hourly"] == ("monthly" if monthly else "hourly (or daily)")
    because = dict((r, b) for r, _, b in verdict_lines(stored["long-inference"]))
    assert monthly or "the rule alone says monthly" in because["monthly vs hourly"]


def test_verdict_lines_read_back_what_the_advisor_wrote_and_skip_junk():
    text = ("spot: not allowed — the job cannot be interrupted\n"
            "junk without a verdict\n"
            "exclusive vs shared: shared — 1 of 4 hold: cannot tolerate interruption")
    assert verdict_lines(text) == [
        ("spot", "not allowed", "the job cannot be interrupted"),
        ("exclusive vs shared", "shared", "1 of 4 hold: cannot tolerate interruption")]
    assert verdict_lines(None) == verdict_lines("") == []
