"""Where the price index is read: `gpuprices index`, `pipelines.api.index()` and the report's
chart per card return the mart's own numbers; unknown values are usage errors, a database
without a published day says why."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path

import duckdb
import pytest

from pipelines import api
from pipelines.query.errors import UnknownValueError
from pipelines.warehouse.db import ensure_schema
from tests.helpers.index_history import START, Offer, flat, publish
from tests.helpers.observations import build, insert
from tests.helpers.published import gpuprices
from tests.helpers.report_market import build_page

CUT = [10, 10, 10, 9, 9, 9, 9]


def history() -> list[Offer]:
    """An A100-80GB in China (three vendors, one cuts 10 % on day 4), an H100 in the world and
    an RTX 4090 at one vendor only (never a level)."""
    china = [Offer("Alpha", "a", CUT), Offer("Bravo", "b", flat(12, 7)),
             Offer("Charlie", "c", flat(11, 7))]
    world = [Offer(v, f"h-{v}", flat(2 + i / 10, 7), currency="USD",
                   overrides={"gpu_model": "H100-80GB"}) for i, v in enumerate(("Delta", "Echo"))]
    solo = [Offer("Solo", "s", flat(2, 7), overrides={"gpu_model": "RTX4090-24GB"})]
    return china + world + solo


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    """<dir>/prices.db: every SQL model and the index over the history, as a run publishes it."""
    root = tmp_path_factory.mktemp("index-readers")
    with duckdb.connect(str(root / "work.db")) as con:
        ensure_schema(con)
        insert(con, [row for offer in history() for row in offer.rows()])
        build(con, [])
        publish(con)
        con.execute("checkpoint")
    shutil.copyfile(root / "work.db", root / "prices.db")
    return root


def mart(root: Path, where: str = "true") -> list[tuple]:
    with duckdb.connect(str(root / "prices.db"), read_only=True) as con:
        return con.execute(f"select series_id, index_date, index_level from marts.price_index "
                           f"where {where} order by series_id, index_date").fetchall()


def test_the_api_returns_the_marts_rows(published):
    frame = api.index(card="A100", market="中国", term="hour", data_dir=published)
    rows = mart(published, "series_id = 'A100-80GB|china|on_demand|hour'")
    assert [(r.series_id, r.index_date.date(), r.index_level) for r in frame.itertuples()] == rows
    since = api.index(card="h100", market="world", since=str(START + timedelta(days=3)),
                      data_dir=published)
    assert set(since["series_id"]) == {"H100/H800 SXM|world|on_demand|hour"}
    assert since["index_date"].min().date() == START + timedelta(days=3)


@pytest.mark.parametrize(("kwargs", "field"), [({"card": "Z9000"}, "card"),
                                               ({"card": "T4"}, "card"),
                                               ({"market": "mars"}, "market"),
                                               ({"kind": "lease"}, "kind"),
                                               ({"term": "fortnight"}, "term")])
def test_the_api_refuses_unknown_values(published, kwargs, field):
    with pytest.raises(UnknownValueError) as caught:
        api.index(data_dir=published, **kwargs)
    assert caught.value.field == field


def test_the_command_prints_the_marts_numbers(published):
    result = gpuprices(published, "index", "--card", "A100-80GB", "--format", "json")
    assert result.exit_code == 0, result.output
    latest = json.loads(result.stdout)
    (series, day, level), = [r for r in mart(published) if r[0].startswith("A100")][-1:]
    assert [(r["series_id"], r["index_date"], r["index_level"]) for r in latest] == [
        (series, day.isoformat(), level)]
    table = gpuprices(published, "index", "--card", "a100")
    assert table.exit_code == 0 and "A100-80GB" in table.output and "CNY" in table.output
    days = gpuprices(published, "index", "--since", str(START), "--format", "csv")
    assert days.exit_code == 0
    assert len(days.stdout.strip().splitlines()) == 1 + len(mart(published))


@pytest.mark.parametrize("args", [["--card", "Z9000"], ["--market", "mars"], ["--term", "x"]])
def test_the_command_calls_an_unknown_value_a_usage_error(published, args):
    result = gpuprices(published, "index", *args)
    assert result.exit_code == 2, result.output


def test_the_command_says_why_there_is_no_day_yet(tmp_path):
    root = tmp_path / "data"
    root.mkdir()
    with duckdb.connect(str(root / "prices.db")) as con:
        ensure_schema(con)
        insert(con, Offer("Alpha", "a", [10]).rows())     # one day: still open
        build(con, [])
        publish(con)
    result = gpuprices(root, "index")
    assert result.exit_code == 3
    assert ("a day is published once a later day's crawl has landed"
            in " ".join(result.output.split()))
    assert gpuprices(tmp_path / "none", "index").exit_code == 3


def test_the_report_draws_an_index_chart_per_card_with_its_median(published, tmp_path):
    page = build_page(published / "prices.db", tmp_path / "report.html")
    html = page.path.read_text(encoding="utf-8")
    assert 'id="price-index"' in html
    assert html.count('class="chart index-chart"') == 2                # A100-80GB and H100/H800
    assert 'data-card="A100-80GB"' in html and 'data-card="H100/H800 SXM"' in html
    assert "china on-demand listing median" in html and "china on-demand index" in html


def test_the_report_says_so_without_an_index(tmp_path):
    db = tmp_path / "prices.db"
    with duckdb.connect(str(db)) as con:
        ensure_schema(con)
        build(con, [row for offer in history() for row in offer.rows()])
    html = build_page(db, tmp_path / "report.html").path.read_text(encoding="utf-8")
    assert "No price index in this database yet" in html


def test_the_table_leaves_out_series_that_never_had_a_level_unless_asked(published):
    table = gpuprices(published, "index", "--format", "table")
    assert table.exit_code == 0
    assert "RTX4090" not in table.output and "1 series never had enough evidence" in table.output
    every = gpuprices(published, "index", "--all", "--format", "table", "--wide")
    assert "RTX4090" in every.output and "1 vendor(s)" in every.output
    rows = json.loads(gpuprices(published, "index", "--format", "json").stdout)
    assert "RTX4090|china|on_demand|hour" in {r["series_id"] for r in rows}
