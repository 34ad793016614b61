"""Models state their contract (pipelines/warehouse/model_contract.py): every mart's header
declares its grain and at least one audit; the runner checks them after the build, and a broken
one fails a blocking check that names the mart, the audit, the bad rows' count and a sample, so
nothing downstream (the feeds, the publish) runs."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from pipelines.definitions import defs
from pipelines.defs.models import CONTRACT_CHECK, build_models, contract_spec, has_contract
from pipelines.warehouse.model_contract import GRAIN_AUDIT, audit_failures, model_contract
from pipelines.warehouse.sql_models import SqlModelError, load_models
from spiders.layout import SQL_DIR
from tests.helpers.observations import EXTERNAL, build_only, insert, obs
from tests.pipelines.test_sql_models_step import Log

PROJECT_MODELS = load_models(SQL_DIR, EXTERNAL)


@pytest.mark.parametrize("model", [m for m in PROJECT_MODELS if m.layer == "marts"],
                         ids=lambda m: m.table)
def test_every_mart_declares_its_grain_and_at_least_one_audit(model):
    contract = model_contract(model)
    assert contract.grain, f"{model.path}: no `-- grain: <columns>` line"
    assert contract.audits, f"{model.path}: no `-- audit: <name>: <condition>` line"


def test_every_contract_is_a_blocking_check_of_the_models_step_upstream_of_the_publish():
    graph = defs.resolve_asset_graph()
    publish = graph.get(dg.AssetKey(["feeds", "prices_db"]))
    for model in (m for m in PROJECT_MODELS if m.layer == "marts"):
        key = dg.AssetKey([model.layer, model.name])
        spec = next(s for s in graph.get(key).assets_def.check_specs
                    if s.key == dg.AssetCheckKey(key, CONTRACT_CHECK))
        assert spec.blocking
        assert key in publish.parent_keys


def _model(tmp_path: Path, header: str):
    path = tmp_path / "marts" / "m.sql"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"/* m */\n{header}\nselect offer_id, price_amount from observations\n",
                    encoding="utf-8")
    return load_models(tmp_path, EXTERNAL)[0]


@pytest.mark.parametrize("header, grain, audits", [
    ("-- grain: offer_id", ("offer_id",), ()),
    ("-- grain: offer_id , price_amount", ("offer_id", "price_amount"), ()),
    ("-- audit: positive: price_amount <= 0", (), (("positive", "price_amount <= 0"),)),
    ("-- grain: offer_id\n-- audit: a: price_amount < 0\n-- audit: b: offer_id is null",
     ("offer_id",), (("a", "price_amount < 0"), ("b", "offer_id is null"))),
    ("-- no contract", (), ()),
])
def test_a_header_reads_as_its_grain_and_audits(tmp_path, header, grain, audits):
    contract = model_contract(_model(tmp_path, header))
    assert contract.grain == grain
    assert tuple((a.name, a.condition) for a in contract.audits) == audits


@pytest.mark.parametrize("header, problem", [
    ("-- grain: offer_id\n-- grain: price_amount", "one `-- grain:` line"),
    ("-- grain: offer_id price_amount", "expected '-- grain"),
    ("-- grain:", "expected '-- grain"),
    ("-- audit: price_amount <= 0", "expected '-- audit"),
    ("-- audit: positive:", "expected '-- audit"),
    ("-- audit: a: price_amount < 0\n-- audit: a: offer_id is null", "named twice"),
    ("-- audit: grain: offer_id is null", "named twice"),
    ("-- audit: broken: price_amount <<>> (", "not SQL"),
])
def test_a_header_that_does_not_read_fails_naming_the_file_and_line(tmp_path, header, problem):
    model = _model(tmp_path, header)
    with pytest.raises(SqlModelError, match=r"m\.sql:\d+: .*" + problem.replace("(", r"\(")):
        model_contract(model)


def test_a_planted_bad_row_fails_the_marts_own_audit_and_grain(con):
    """The project's marts.latest_prices on a small database: it keeps its contract, then a
    copied row breaks its grain and a row priced at zero its audit."""
    insert(con, [obs(10), obs(12, gpu_model="H100-80GB")])
    build_only(con, "marts.latest_prices")
    latest = next(m for m in PROJECT_MODELS if m.table == "marts.latest_prices")
    assert audit_failures(con, latest) == []
    con.execute("insert into marts.latest_prices select * from marts.latest_prices limit 1")
    con.execute("insert into marts.latest_prices by name select 'zero' as offer_id, "
                "0 as price_per_gpu_hour_cny")
    failures = {f.audit: f for f in audit_failures(con, latest)}
    assert failures[GRAIN_AUDIT].bad_rows == 1
    assert failures[GRAIN_AUDIT].sample[0]["copies"] == "2"
    assert failures["price_positive"].bad_rows == 1
    assert failures["price_positive"].sample[0]["offer_id"] == "zero"
    assert failures["price_positive"].message == (
        "marts.latest_prices: audit 'price_positive' failed: 1 bad rows")


CONTRACTED = {
    "marts/priced.sql": "/* priced offers */\n-- grain: offer_id\n"
                        "-- audit: price_positive: price_amount <= 0\n"
                        "select offer_id, price_amount from observations",
    "marts/kept.sql": "/* no contract: no check */\nselect offer_id from observations",
}


def test_a_broken_audit_fails_the_step_and_blocks_the_publish(con, tmp_path):
    """The models step's wiring (contract_spec, build_models) in a real Dagster run: a mart with
    a bad row fails its blocking check, naming the audit and the count, with a sample; the asset
    that publishes after the models does not run."""
    for rel, sql in CONTRACTED.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(sql + "\n", encoding="utf-8")
    models = load_models(tmp_path, EXTERNAL)
    insert(con, [obs(10), obs(0, gpu_model="H100-80GB")])
    published = []

    @dg.multi_asset(specs=[dg.AssetSpec([m.layer, m.name]) for m in models],
                    check_specs=[contract_spec(m) for m in models if has_contract(m)])
    def models_step():
        yield from build_models(con, models, Log())

    @dg.asset(deps=[dg.AssetKey(["marts", m.name]) for m in models])
    def publish() -> None:
        published.append(True)

    result = dg.materialize([models_step, publish], raise_on_error=False)
    assert not result.success and published == []
    [check] = result.get_asset_check_evaluations()
    assert (check.asset_key, check.check_name, check.passed) == (
        dg.AssetKey(["marts", "priced"]), CONTRACT_CHECK, False)
    assert check.description == "marts.priced: audit 'price_positive' failed: 1 bad rows"
    [failure] = check.metadata["failures"].value
    assert failure["bad_rows"] == 1 and failure["sample"][0]["price_amount"] == "0.000000"


def test_a_kept_contract_passes_its_check(con, tmp_path):
    for rel, sql in CONTRACTED.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(sql + "\n", encoding="utf-8")
    models = load_models(tmp_path, EXTERNAL)
    insert(con, [obs(10), obs(12, gpu_model="H100-80GB")])
    results = [r for r in build_models(con, models, Log()) if isinstance(r, dg.AssetCheckResult)]
    assert [(r.passed, r.description) for r in results] == [
        (True, "grain (offer_id) and 1 audits hold")]
