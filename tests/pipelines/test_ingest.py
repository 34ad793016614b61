"""Loading a crawl: every crawl's verdict into raw.crawls; a passing crawl's JSONL lines into
raw.offers as the spider wrote them (DuckDB reads the file), in file order; a malformed line
fails the load and leaves nothing of the crawl behind."""

import json

import duckdb
import pytest

from pipelines.defs.ingest import record_crawl, record_crawls, say_loaded
from pipelines.resources import CrawlResult
from pipelines.warehouse.db import transaction

VERDICT = {"started_at": "2026-11-30T09:00:00Z", "finished_at": "2026-11-30T09:01:00Z",
           "requests": 3}


def _crawl(tmp_path, lines: list[str], passed: bool = True,
           source: str = "idc_x") -> CrawlResult:
    path = tmp_path / f"{source}.jsonl"
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return CrawlResult(source, f"c-{source}", passed, len(lines),
                       [] if passed else ["too few offers"], path, VERDICT)


def _load(con, result: CrawlResult) -> None:
    with transaction(con):
        record_crawl(con, result, "run-1", "replay")


def test_each_line_lands_as_written_in_file_order(con, tmp_path):
    items = [{"sku": f"A100 | {n}", "price_text": "¥62.00/时", "n": n} for n in range(50)]
    items.append({"sku": "line\u2028separator\u0085next", "spaces": "  kept ",
                  "control": "\x1b[31m红色\u202e反向", "quote": '"特价", 限时'})
    items.append({"sku": "long", "text": "超长" * (3 << 20)})       # 18 MiB of UTF-8 in one line
    lines = [json.dumps(item, ensure_ascii=False) for item in items]
    lines[0] = '{"sku":  "A100 | 0" , "price_text":"¥62.00/时","n":0}'   # spacing kept verbatim
    _load(con, _crawl(tmp_path, lines))
    rows = con.execute("select crawl_id, item_no, source, item from raw.offers "
                       "order by item_no").fetchall()
    assert [(c, n, s) for c, n, s, _ in rows] == [("c-idc_x", n, "idc_x")
                                                  for n in range(len(lines))]
    assert [item for *_, item in rows] == lines
    assert con.execute("select distinct typeof(item) from raw.offers").fetchall() == [("JSON",)]
    assert con.execute("select passed, status, offers, requests, failures from raw.crawls"
                       ).fetchall() == [(True, "passed", len(lines), 3, [])]


def test_a_failed_crawl_records_its_verdict_and_loads_no_offer(con, tmp_path):
    _load(con, _crawl(tmp_path, ['{"sku": "a"}'], passed=False))
    assert con.execute("select status, failures from raw.crawls").fetchall() == [
        ("failed", ["too few offers"])]
    assert con.execute("select count(*) from raw.offers").fetchone() == (0,)


def test_a_malformed_line_fails_the_load_and_leaves_nothing(con, tmp_path):
    with pytest.raises(duckdb.Error, match=r"(?i)malformed"):
        _load(con, _crawl(tmp_path, ['{"sku": "a"}', '{"sku": "b", ', '{"sku": "c"}']))
    assert con.execute("select count(*) from raw.offers").fetchone() == (0,)
    assert con.execute("select count(*) from raw.crawls").fetchone() == (0,)


def _crawls(tmp_path, lines_by_source: dict[str, list[str]]) -> dict[str, CrawlResult]:
    return {s: _crawl(tmp_path, lines, source=s) for s, lines in lines_by_source.items()}


def _landed(con) -> tuple[list, list]:
    return (con.execute("select source from raw.crawls order by source").fetchall(),
            con.execute("select source, count(*) from raw.offers group by 1 order by 1").fetchall())


def test_every_crawl_lands_in_one_go(con, tmp_path):
    results = _crawls(tmp_path, {"a": ['{"n": 1}'], "b": ['{"n": 1}', '{"n": 2}']})
    record_crawls(con, results, ["a", "b"], "run-1", "replay")
    assert _landed(con) == ([("a",), ("b",)], [("a", 1), ("b", 2)])


def test_a_malformed_crawl_loses_only_itself_and_fails_the_load(con, tmp_path):
    """As one transaction per source: the crawls before the bad one land, it and those after
    do not, and its error is raised."""
    results = _crawls(tmp_path, {"a": ['{"n": 1}'], "b": ['{"n": 1}', '{"n": '],
                                 "c": ['{"n": 1}']})
    with pytest.raises(duckdb.Error, match=r"(?i)malformed"):
        record_crawls(con, results, ["a", "b", "c"], "run-1", "replay")
    assert _landed(con) == ([("a",)], [("a", 1)])


class _Said:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.log = self

    def info(self, message: str) -> None:
        self.lines.append(message)


@pytest.mark.parametrize(("crawls", "said"), [
    ([("cudo", 9, True)], ["9 offers loaded from 1 source: cudo 9"]),
    ([("b", 2, True), ("a", 1, True), ("x", 0, False)],
     ["3 offers loaded from 2 sources: a 1, b 2"]),
    ([("x", 0, False)], []),        # a failed or skipped source says so in a line of its own
])
def test_the_loaded_sources_are_said_in_one_line(crawls, said):
    context = _Said()
    say_loaded(context, [CrawlResult(s, f"c-{s}", passed, n, [], None, VERDICT)
                         for s, n, passed in crawls])
    assert context.lines == said
