"""The code location loads, and its graph is the one the docs describe."""

import subprocess
import sys

import dagster as dg

from pipelines.definitions import defs
from spiders.layout import REPO_ROOT
from spiders.registry import source_names


def _graph():
    return defs.resolve_asset_graph()


def test_one_raw_asset_per_source():
    keys = {k.to_user_string() for k in _graph().get_all_asset_keys()}
    assert {f"raw/{s}" for s in source_names()} <= keys


def _node(key: str):
    return _graph().get(dg.AssetKey.from_user_string(key))


def _parents(key: str) -> set[str]:
    return {p.to_user_string() for p in _node(key).parent_keys}


def test_asset_graph_edges():
    assert _parents("observation_batch") == {f"raw/{s}" for s in source_names()}
    assert _parents("observations") == {"observation_batch"}
    assert _parents("marts/latest_prices") == {"intermediate/int_offer_daily",
                                               "intermediate/int_source_price_basis"}
    # where prices come from is read from every source's crawls (raw.crawls)
    assert _parents("intermediate/int_source_price_basis") == {f"raw/{s}" for s in source_names()}
    # every model reads observations through the view of what a page may show, which reads
    # the crawls that can hide a row (raw.crawls: was it opted in?) and its source's basis
    assert _parents("staging/stg_observations") == {"staging/stg_shown_observations"}
    assert _parents("staging/stg_shown_observations") == {
        "observations", "intermediate/int_source_price_basis", "intermediate/int_hiding_crawls"}
    assert _parents("intermediate/int_hiding_crawls") == {
        "observations", *(f"raw/{s}" for s in source_names())}
    assert _parents("feeds/latest_prices") == {"marts/latest_prices"}
    # the advisor leaves out the prices held back as possible outliers
    assert _parents("advisor/workload_advice") == {"marts/latest_prices", "marts/price_outliers"}


def test_groups_are_layers():
    keys = ("raw/azure", "observations", "marts/latest_prices", "feeds/latest_prices")
    assert [_node(k).group_name for k in keys] == ["raw", "observations", "marts", "feeds"]


def test_every_group_is_its_layer():
    """A key's prefix is its layer and its group; observation_batch, quarantine and observations
    (no prefix) make the observations layer."""
    graph = _graph()
    for key in graph.get_all_asset_keys():
        layer = key.path[0] if len(key.path) > 1 else "observations"
        assert graph.get(key).group_name == layer, key.to_user_string()


def test_job_and_hourly_schedule():
    job = defs.resolve_job_def("gpuprices_job")
    schedule = defs.resolve_schedule_def("scrape_hourly_schedule")
    assert schedule.cron_schedule == "0 * * * *"
    assert schedule.job_name == job.name


def test_quality_check_is_blocking():
    [check] = [c for c in defs.resolve_asset_graph().asset_check_keys
               if c.name == "observation_batch_meets_expectations"]
    spec = defs.resolve_asset_graph().get_check_spec(check)
    assert spec.blocking


def test_every_mart_has_a_feed_and_the_published_database_comes_last():
    graph = _graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    marts = {k.split("/", 1)[1] for k in keys if k.startswith("marts/")}
    assert {f"feeds/{m}" for m in marts} <= keys
    published = graph.get(dg.AssetKey(["feeds", "prices_db"]))
    assert {p.to_user_string() for p in published.parent_keys} >= {f"feeds/{m}" for m in marts}


def test_daily_report_schedule_and_sensors():
    schedule = defs.resolve_schedule_def("report_daily_schedule")
    assert schedule.cron_schedule == "30 6 * * *" and schedule.job_name == "report_job"
    sensor_names = {s.name for s in defs.sensors}
    assert {"run_failure_alert_sensor", "failed_source_alert_sensor"} <= sensor_names
    keys = {k.to_user_string() for k in _graph().get_all_asset_keys()}
    assert {"alerts/price_alerts", "report/price_report"} <= keys


def test_marts_carry_owners_and_a_column_schema_with_the_models_comments():
    from pipelines.defs.models import OWNERS, SQL_MODELS, column_schema

    cheapest = next(m for m in SQL_MODELS if m.table == "marts.cheapest_offers")
    assert _node("marts/cheapest_offers").owners == OWNERS
    schema = column_schema(cheapest, [("rank", "BIGINT"), ("vendor", "VARCHAR")])
    described = {c.name: (c.type, c.description) for c in schema.columns}
    assert described["rank"][0] == "BIGINT"
    assert "cheapest" in described["rank"][1]      # the trailing comment on its select line
    assert described["vendor"] == ("VARCHAR", None)


def test_loading_the_definitions_does_not_import_great_expectations():
    """GX loads when a check runs, not with the definitions: each step process of the
    multiprocess executor and the UI's code server load them (GX took longer than Dagster)."""
    script = ("import sys, pipelines.definitions; "
              "print(sorted({m.split('.')[0] for m in sys.modules} & {'great_expectations'}))")
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=300, check=True)
    assert proc.stdout.split()[-1] == "[]", proc.stdout


def test_the_publish_depends_on_what_it_publishes_only():
    """Issue 30: prices.db waits for the models and the feeds, never for the report, the alerts
    or the advisor (one of them failing must not hold the prices back), and it goes last among
    the steps ready with it, so their tables reach this run's copy when they succeed."""
    from pipelines.defs.feeds import PUBLISH_TAGS

    graph = _graph()
    published = dg.AssetKey(["feeds", "prices_db"])
    ancestors, todo = set(), [published]
    while todo:
        for parent in graph.get(todo.pop()).parent_keys:
            if parent not in ancestors:
                ancestors.add(parent)
                todo.append(parent)
    groups = {key.path[0] for key in ancestors}
    assert not groups & {"report", "alerts", "advisor"}, groups
    assert {p.path[0] for p in graph.get(published).parent_keys} <= {
        "staging", "intermediate", "marts", "feeds"}
    priority = int(PUBLISH_TAGS["dagster/priority"])
    others = [int((graph.get(k).assets_def.op.tags or {}).get("dagster/priority", 0))
              for k in graph.get_all_asset_keys() if k != published]
    assert priority < min(others)
