"""`make bench` (tests/workshop/bench/) on a tiny size: every figure is produced and sane.

Smoke tests only: no timing is compared with a threshold (the machine's load decides those); the
checks are that the crawls really fetched and parsed the pages, that the history has the rows it
should, that each model was built by the runner and by the bare floor, that the hourly updates
were incremental, and that each target row carries its figure and gap.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from pipelines.simulate import load_offers
from pipelines.warehouse.sql_models import load_models
from spiders.layout import SQL_DIR
from tests.workshop.bench import (
    GIB,
    Config,
    bench_offers,
    best_run,
    crawl_bench,
    gap,
    parse_args,
    run_bench,
)
from tests.workshop.bench.phases import PUBLISH_HOURS

OFFERS = 12
DAYS = (1, 2)
HOURS = 2


@pytest.fixture(scope="module")
def base_offers() -> pd.DataFrame:
    return load_offers(sources=["idc_sinnet_bj"])


@pytest.fixture(scope="module")
def report(base_offers, tmp_path_factory) -> tuple[dict, Path, Path]:
    root = tmp_path_factory.mktemp("bench")
    out, work = root / "bench.json", root / "work"
    config = Config(offers=OFFERS, days=DAYS, incremental_hours=HOURS, repeats=1, crawl=False,
                    whole_run=False, startup_runs=1, work_dir=work)
    return run_bench(config, out, offers=base_offers), out, work


def test_the_report_is_written_as_json(report):
    result, out, _ = report
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert saved["history"][0]["rows"] == result["history"][0]["rows"]
    assert saved["machine"]["cpus"] >= 1
    assert saved["config"]["offers"] == OFFERS


def test_each_size_has_its_rows_and_a_file(report):
    sizes = report[0]["history"]
    assert [s["days"] for s in sizes] == list(DAYS)
    for size in sizes:
        assert size["offers"] == OFFERS
        assert size["rows"] == OFFERS * size["days"] * 24
        assert size["generate"]["rows_per_second"] > 0
        assert size["file_bytes"] >= size["file_bytes_observations"] > 0


def test_runner_and_floor_build_every_model(report):
    tables = [m.table for m in load_models(SQL_DIR)]
    for size in report[0]["history"]:
        assert [b["model"] for b in size["full"]["models"]] == tables
        assert [b["model"] for b in size["floor"]["models"]] == tables
        assert {b["how"] for b in size["full"]["models"]} <= {"full", "view"}
        assert size["full"]["seconds"] > 0 and size["floor"]["seconds"] > 0
        assert size["full_over_floor"] == pytest.approx(
            size["full"]["seconds"] / size["floor"]["seconds"])
        assert size["full"]["all_seconds"] == [size["full"]["seconds"]]   # repeats=1


def test_hourly_updates_add_one_hour_and_build_incrementally(report):
    incremental = {m.table for m in load_models(SQL_DIR)
                   if m.incremental_by}
    for size in report[0]["history"]:
        updates = size["incremental"]
        assert len(updates) == HOURS
        assert len({u["hour"] for u in updates}) == HOURS       # consecutive, not the same hour
        for update in updates:
            assert update["rows"] == OFFERS                     # every offer once
            day = update["hour"][:10]
            hows = {b["model"]: b["how"] for b in update["models"]}
            for table in incremental:
                assert hows[table] == f"incremental from {day}"
            assert update["seconds"] == pytest.approx(update["load_seconds"]
                                                      + update["models_seconds"])
        assert min(u["seconds"] for u in updates) <= size["incremental_median_seconds"] \
            <= max(u["seconds"] for u in updates)


def test_peak_memory_is_measured_per_phase(report):
    for size in report[0]["history"]:
        phases = size["peak_rss_bytes_by_phase"]
        assert set(phases) == {"generate", "floor", "full", "incremental", "publish"}
        # a Python process with DuckDB loaded, well under the machine's memory
        assert all(30 * 1024**2 < v < 64 * GIB for v in phases.values())
        # the target is the pipeline's own phases, not the simulator's or the floor's
        assert size["peak_rss_bytes"] == max(phases[p] for p in ("full", "incremental", "publish"))
        assert phases[size["peak_rss_phase"]] == size["peak_rss_bytes"]


FIGURES = (   # issue 14's table, as the report's figures begin
    "incremental hourly update (median, load + models)",
    "incremental hourly update (median, models only)",
    "incremental update growth (load + models)", "incremental update growth (models only)",
    "full rebuild / bare-DuckDB floor", "peak memory of the pipeline's phases",
    "publishing data/prices.db", "publishing growth", "writing the feeds (the days rebuilt)",
    "feeds growth", "CLI start-up: gpuprices --help",
    "CLI start-up: gpuprices prices --limit 1", "make test on a fresh clone")


def test_targets_carry_figure_and_gap(report):
    result = report[0]
    rows = {}
    for row in result["targets"]:
        (name,) = [f for f in FIGURES if row["figure"].startswith(f + " ")
                   or row["figure"].startswith(f + ",")]
        rows[name] = row
    assert len(rows) == len(result["targets"]) and set(rows) == set(FIGURES)
    year, week = result["history"][-1], result["history"][0]
    assert rows["full rebuild / bare-DuckDB floor"]["value"] == year["full_over_floor"]
    growth = rows["incremental update growth (models only)"]
    assert growth["value"] == pytest.approx(year["incremental_models_median_seconds"]
                                            / week["incremental_models_median_seconds"])
    publish = rows["publishing growth"]
    assert publish["value"] == pytest.approx(year["publish"]["seconds"]
                                             / week["publish"]["seconds"])
    feeds = rows["feeds growth"]   # the feeds an hour writes, as the publish measures them
    assert feeds["value"] == pytest.approx(year["publish"]["feeds_seconds"]
                                           / week["publish"]["feeds_seconds"])
    assert year["publish"]["hours"][0]["feeds_from"]["marts.price_history"] == \
        year["publish"]["hours"][0]["tables"]["intermediate.int_offer_local_daily"][5:]
    assert rows["CLI start-up: gpuprices --help"]["value"] == \
        result["startup"]["help"]["median_seconds"]
    suite = rows["make test on a fresh clone"]   # never recorded in this tmp dir
    assert (suite["value"], suite["met"], suite["gap"]) == (None, None, "not measured")
    for row in result["targets"]:
        assert set(row) >= {"figure", "unit", "value", "target", "met", "gap"}
        if row["value"] is not None:
            assert row["gap"].startswith("met: " if row["met"] else "missed: ")


def test_publishing_is_measured_at_each_size(report):
    for size in report[0]["history"]:
        publish = size["publish"]
        # the checkpointed file, less the bookkeeping tables dropped from the published copy
        # (a generation updated in place keeps the blocks its deletes freed for reuse)
        assert 0.5 * size["file_bytes"] < publish["bytes"] <= 1.5 * size["file_bytes"]
        assert publish["copy_seconds"] > 0 and publish["seconds"] > 0
        # every timed hourly publish brought the generation up to date in place
        assert [h["method"] for h in publish["hours"]] == ["generations"] * PUBLISH_HOURS
        assert publish["method"] == "generations"
        assert len(publish["all_seconds"]) == 1               # repeats=1


def test_cli_start_up_is_timed_on_a_published_database(report):
    startup = report[0]["startup"]
    assert startup["db_bytes"] > 0 and startup["db_path"].endswith("prices.db")
    for name in ("help", "prices"):
        figure = startup[name]
        assert figure["exit_codes"] == [0, 0]                 # one cold run + startup_runs=1
        assert figure["median_seconds"] == figure["all_seconds"][1]
        assert figure["heavy_imports"] == []                  # no Dagster, Scrapy, Playwright


def test_best_run_keeps_the_fastest_and_the_highest_peak():
    runs = [{"seconds": 3.0, "peak_rss_bytes": 10, "models_sha256": "a", "models": ["slow"]},
            {"seconds": 2.0, "peak_rss_bytes": 5, "models_sha256": "a", "models": ["fast"]}]
    best = best_run(runs)
    assert (best["seconds"], best["models"], best["all_seconds"]) == (2.0, ["fast"], [3.0, 2.0])
    assert best["peak_rss_bytes"] == 10 and best["models_sha256_all"] == ["a"]


def test_simulated_databases_are_removed(report):
    work = report[2]
    assert not list(work.glob("*.db"))


def test_gap_says_met_or_missed_and_by_how_much():
    assert gap(3.0, 5.0) == {"value": 3.0, "target": 5.0, "met": True,
                             "gap": "met: 2.00 s under (60% of target)"}
    missed = gap(7.5, 5.0)
    assert missed["met"] is False and missed["gap"] == "missed: 2.50 s over (1.50x target)"
    assert gap(5 * GIB, 4 * GIB, "bytes")["gap"] == "missed: 1.00 GiB over (1.25x target)"
    assert gap(1.8, 1.5, "x")["gap"] == "missed: 0.30 over (1.20x target)"
    assert gap(None, 5.0)["met"] is None


def test_bench_offers_spread_over_sources_and_clones(base_offers):
    two_sources = pd.concat([base_offers, base_offers.assign(
        source="other", offer_id=base_offers["offer_id"] + "-other")], ignore_index=True)
    few = bench_offers(10, two_sources)
    assert len(few) == 10 and few["offer_id"].is_unique
    assert set(few["source"]) == {"idc_sinnet_bj", "other"}
    many = bench_offers(5 * len(two_sources) // 2, two_sources)
    assert len(many) == 5 * len(two_sources) // 2 and many["offer_id"].is_unique
    assert many["offer_id"].str.contains("#2").any()            # clones beyond the first
    assert set(many["source"]) == {"idc_sinnet_bj", "other"}


def test_crawl_figures_count_real_pages(tmp_path):
    pages = {"html": 4, "json": 3, "playwright": 2}
    results = crawl_bench(tmp_path, pages, modes=("polite",))
    assert [(r["kind"], r["mode"]) for r in results] == [(k, "polite") for k in pages]
    for r in results:
        assert r["passed"], r["failures"]
        assert r["pages"] == pages[r["kind"]]                     # every variant parsed
        assert r["responses"] >= r["pages"]                       # + robots.txt
        assert r["items"] >= r["pages"]                           # each page has offers
        assert r["pages_per_second"] == pytest.approx(r["pages"] / r["elapsed_seconds"])


def test_command_line_sizes():
    _, quick = parse_args(["--quick", "--skip-crawl", "--skip-growth", "--skip-run",
                           "--skip-startup"])
    assert (quick.offers, quick.sizes, quick.crawl, quick.whole_run) == (200, (30,), False, False)
    assert (quick.startup, quick.suite) == (False, False)
    _, full = parse_args(["--year-offers", "2500", "--suite"])
    assert (full.offers, full.sizes, full.crawl, full.growth) == (2500, (7, 30, 365), True, True)
    assert (full.startup, full.startup_runs, full.suite) == (True, 5, True)
    assert full.crawl_pages == {"html": 300, "json": 300, "playwright": 40}
    _, custom = parse_args(["--days", "30,7", "--hours", "5", "--repeats", "3"])
    assert (custom.sizes, custom.incremental_hours, custom.repeats) == ((7, 30), 5, 3)
    with pytest.raises(SystemExit):
        parse_args(["--days", "0,7"])
