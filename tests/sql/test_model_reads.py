"""The tables a model reads, cached beside the models (pipelines/warehouse/model_reads.py): a
process that loads the same files again parses none of them, a changed file is parsed again,
and a cache that cannot be read or written only costs a parse."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.warehouse import model_reads, sql_models
from pipelines.warehouse.sql_models import SqlModelError, load_models
from tests.helpers.observations import EXTERNAL

MODEL = ("/* m */\nwith t as (select * from observations)\n"
         "select * from t inner join raw.crawls using (crawl_id)")


def _write(root: Path, sql: str) -> None:
    (root / "marts").mkdir(parents=True, exist_ok=True)
    (root / "marts" / "m.sql").write_text(sql)


def _no_parsing(monkeypatch) -> None:
    def refuse(sql):
        raise AssertionError("parsed")
    monkeypatch.setattr(model_reads, "parsed_reads", refuse)
    monkeypatch.setattr(sql_models, "parsed_reads", refuse)
    sql_models._model.cache_clear()


def test_a_second_load_reads_the_cache_and_a_changed_file_is_parsed_again(tmp_path,
                                                                          monkeypatch):
    _write(tmp_path, MODEL)
    [first] = load_models(tmp_path, EXTERNAL)
    assert first.reads == ("observations", "raw.crawls")
    assert (tmp_path / model_reads.CACHE).is_file()
    _no_parsing(monkeypatch)
    [again] = load_models(tmp_path, EXTERNAL)
    assert (again.reads, again._lines) == (first.reads, first._lines)
    _write(tmp_path, MODEL.replace("raw.crawls", "quarantine"))
    with pytest.raises(AssertionError, match="parsed"):
        load_models(tmp_path, EXTERNAL)


@pytest.mark.parametrize("cache_text", ["{not json", '{"k": 1}', None])
def test_a_bad_or_missing_cache_is_only_slower(tmp_path, cache_text):
    _write(tmp_path, MODEL)
    if cache_text is not None:
        (tmp_path / "__pycache__").mkdir()
        (tmp_path / model_reads.CACHE).write_text(cache_text)
    [model] = load_models(tmp_path, EXTERNAL)
    assert model.reads == ("observations", "raw.crawls")


def test_a_cached_file_that_stops_parsing_names_file_and_line(tmp_path):
    _write(tmp_path, MODEL)
    load_models(tmp_path, EXTERNAL)
    _write(tmp_path, "/* m */\nselect from from")
    with pytest.raises(SqlModelError, match=r"m\.sql:\d+: SQL syntax error"):
        load_models(tmp_path, EXTERNAL)


def test_the_comments_are_cached_beside_the_models_too(tmp_path, monkeypatch):
    """wanted_comments' parse of each model's select comments (pipelines/warehouse/comments.py)
    uses the same cache: a process publishing without having built the models parses none."""
    from pipelines.warehouse import comments

    _write(tmp_path, MODEL.replace("select * from t", "select\n    crawl_id  -- the crawl\nfrom t"))
    models = tuple(load_models(tmp_path, EXTERNAL))
    first = comments.model_comments(models)
    assert first == {"marts.m": {"crawl_id": "the crawl"}}

    def refuse(sql):
        raise AssertionError("parsed")
    monkeypatch.setattr(comments, "select_comments", refuse)
    assert comments.model_comments(models) == first
    _write(tmp_path, MODEL.replace("select * from t", "select\n    crawl_id  -- a crawl\nfrom t"))
    with pytest.raises(AssertionError, match="parsed"):
        comments.model_comments(tuple(load_models(tmp_path, EXTERNAL)))


def test_the_models_step_reads_the_comments_publishing_cached_and_writes_none(tmp_path,
                                                                              monkeypatch):
    """The column schema each built model shows in Dagster (pipelines/defs/models.py) takes its
    comments from the cache publishing keeps: nothing parsed for a cached text, and the cache
    never rewritten by a step that may build only some of the models."""
    from pipelines.warehouse import comments
    from spiders import layout

    _write(tmp_path, MODEL.replace("select * from t", "select\n    crawl_id  -- the crawl\nfrom t"))
    models = tuple(load_models(tmp_path, EXTERNAL))
    comments.model_comments(models)                     # publishing wrote the cache
    cache = tmp_path / comments.MODEL_COMMENTS_CACHE
    written = cache.stat().st_mtime_ns
    monkeypatch.setattr(layout, "SQL_DIR", tmp_path)
    comments._select_comments_cache.cache_clear()

    def refuse(sql):
        raise AssertionError("parsed")
    monkeypatch.setattr(comments._select_comments_cache(), "parse", refuse)
    assert comments.cached_select_comments(models[0].sql) == {"crawl_id": "the crawl"}
    with pytest.raises(AssertionError, match="parsed"):     # a text not cached is parsed
        comments.cached_select_comments("select 1 as one  -- one")
    assert cache.stat().st_mtime_ns == written
    comments._select_comments_cache.cache_clear()
