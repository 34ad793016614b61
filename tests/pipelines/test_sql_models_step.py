"""The step that builds every SQL model (pipelines/defs/models.py): each model its own asset and
transaction on one connection; a model that fails is rolled back alone, the models that read it
are not built, every other model is, and the step fails naming them all."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from pipelines.definitions import defs
from pipelines.defs.models import ModelsFailed, build_models
from pipelines.warehouse.sql_models import load_models
from tests.helpers.observations import EXTERNAL, insert, obs

MODELS = {
    "staging/stg_a.sql": "/* every observation */\nselect offer_id, price_amount from observations",
    "intermediate/int_b.sql": "/* b */\nselect offer_id, price_amount * 2 as doubled "
                              "from staging.stg_a",
    # fails when it runs (the cast), not when it is parsed
    "marts/broken.sql": "/* broken */\nselect offer_id, cast('not a number' as integer) as n "
                        "from staging.stg_a",
    "marts/reads_broken.sql": "/* reads the broken one */\nselect * from marts.broken",
    "marts/fine.sql": "/* fine */\nselect offer_id, doubled from intermediate.int_b",
}


class Log:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def info(self, message: str) -> None:
        self.lines.append(("info", message))

    def error(self, message: str) -> None:
        self.lines.append(("error", message))


def _models(root: Path):
    for rel, sql in MODELS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(sql + "\n", encoding="utf-8")
    return load_models(root, EXTERNAL)


def _tables(con) -> set[str]:
    return {f"{s}.{t}" for s, t in con.execute(
        "select schema_name, table_name from duckdb_tables() union all "
        "select schema_name, view_name from duckdb_views() where not internal").fetchall()}


def test_a_failing_model_fails_alone_and_the_step_names_it_and_its_readers(con, tmp_path):
    insert(con, [obs(10), obs(12, gpu_model="H100-80GB")])
    log = Log()
    built = []
    with pytest.raises(ModelsFailed) as failure:
        for result in build_models(con, _models(tmp_path), log):
            built.append(result.asset_key.to_user_string())
    assert built == ["staging/stg_a", "intermediate/int_b", "marts/fine"]
    assert "marts.broken: ConversionException" in str(failure.value)
    assert ("marts.reads_broken: not built: it reads marts.broken, which failed"
            in str(failure.value))
    # the failed model left nothing behind: no table, no recorded build
    assert {"staging.stg_a", "intermediate.int_b", "marts.fine"} <= _tables(con)
    assert not {"marts.broken", "marts.reads_broken"} & _tables(con)
    assert con.execute("select model from raw.model_state order by model").fetchall() == [
        ("intermediate.int_b",), ("marts.fine",), ("staging.stg_a",)]
    assert ("error", "marts.broken failed: " + str(failure.value).split("marts.broken: ")[1]
            .split("; ")[0]) in log.lines


def test_each_built_model_is_materialized_with_its_build_rows_and_columns(con, tmp_path):
    insert(con, [obs(10), obs(12, gpu_model="H100-80GB")])
    models = [m for m in _models(tmp_path) if "broken" not in m.table]
    results = {r.asset_key.to_user_string(): r.metadata for r in build_models(con, models, Log())}
    assert results["marts/fine"]["row_count"] == 2
    assert results["marts/fine"]["build"] == "full"
    assert [c.name for c in results["marts/fine"]["dagster/column_schema"].columns] == [
        "offer_id", "doubled"]
    # built again: each model is materialized again, saying how
    again = {r.asset_key.to_user_string(): r.metadata["build"]
             for r in build_models(con, models, Log())}
    assert again == dict.fromkeys(["staging/stg_a", "intermediate/int_b", "marts/fine"], "full")


def test_every_model_is_its_own_asset_built_by_one_step_and_every_feed_by_another():
    graph = defs.resolve_asset_graph()
    by_op: dict[str, set[str]] = {}
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        by_op.setdefault(node.assets_def.node_def.name, set()).add(key.to_user_string())
    layers = {"staging", "intermediate", "marts"}
    # marts/price_index is written by its own step after the models (pipelines/defs/index.py)
    models = {k for k in (x.to_user_string() for x in graph.get_all_asset_keys())
              if k.split("/")[0] in layers and k != "marts/price_index"}
    assert len(models) > 20 and by_op["sql_models"] == models
    assert by_op["marts__price_index"] == {"marts/price_index"}
    feeds = {f"feeds/{k.split('/')[1]}" for k in models if k.startswith("marts/")}
    assert by_op["mart_feeds"] == feeds | {"feeds/price_index"}     # the index is a feed too
    assert graph.get(dg.AssetKey(["marts", "latest_prices"])).assets_def.can_subset


def test_the_step_logs_one_line_for_all_its_models(con, tmp_path):
    insert(con, [obs(10)])
    log = Log()
    with pytest.raises(ModelsFailed):
        list(build_models(con, _models(tmp_path), log))
    assert log.lines[-1] == ("info", "3 models built (3 full), 2 failed")
    assert [kind for kind, _ in log.lines] == ["error", "info"]


INCREMENTAL = {
    # incremental by day; its cast fails on a row whose sku is not a number
    "staging/stg_inc.sql": "/* inc */\n-- incremental: observed_date\nselect observed_hour::date "
                           "as observed_date, cast(sku as integer) as sku_number from observations",
    # a full build that limits its scan with getvariable('since') when one is set, as the
    # project's incremental models do
    "staging/stg_full.sql": "/* full */\nselect offer_id, observed_hour from observations where "
                            "observed_hour >= coalesce(getvariable('since')::timestamptz, "
                            "timestamptz '0001-01-01 00:00:00+00')",
}


def test_a_failed_incremental_build_leaves_nothing_to_the_next_model(con, tmp_path):
    """DuckDB keeps a variable through a rollback: the `since` of a model whose incremental
    update failed must not filter the next model's full build on the same connection, and the
    step reports the model's own error."""
    from datetime import timedelta

    from tests.helpers.observations import DAY

    for rel, sql in INCREMENTAL.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(sql + "\n", encoding="utf-8")
    models = load_models(tmp_path, EXTERNAL)
    days = [DAY - timedelta(days=n) for n in range(5)]
    insert(con, [obs(10, observed_at=day, sku="1") for day in days], crawl_id="crawl-1")
    list(build_models(con, models, Log()))
    insert(con, [obs(10, observed_at=DAY + timedelta(days=1), sku="x")], crawl_id="crawl-2")
    with pytest.raises(ModelsFailed, match=r"staging\.stg_inc: ConversionException"):
        list(build_models(con, [m for m in models if m.table == "staging.stg_inc"], Log()))
    full = [m for m in models if m.table == "staging.stg_full"]
    assert [r.metadata["row_count"] for r in build_models(con, full, Log())] == [6]
    assert con.execute("select getvariable('since')").fetchone()[0] is None
