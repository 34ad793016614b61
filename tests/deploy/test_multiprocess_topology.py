"""GPUPRICES_EXECUTOR=multiprocess under the daemon: a run submitted to the queue, dequeued by the
daemon and executed by the code server with a process per step, builds the same tables as the
default in-process `gpuprices run` over the same sources and snapshots (run at the same time,
so that both see the same hour)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import dagster as dg
import pytest

from pipelines.deploy.topology import LocalTopology, Ports
from spiders.default_sources import OPT_IN_ENV
from tests.deploy.deployed import Deployed
from tests.e2e.test_multiprocess_executor import FAKE_TOKENS, SOURCES, gpuprices_run, tables
from tests.helpers.receivers import free_port


def source_selection(sources: tuple[str, ...]) -> list[dg.AssetKey]:
    """The assets `gpuprices run --source ...` materializes (pipelines/cli/run.py): the sources'
    crawls, what is downstream of them, and what those read that no crawl feeds."""
    from pipelines.definitions import defs

    downstream = dg.AssetSelection.assets(*(dg.AssetKey(["raw", s]) for s in sources)
                                          ).downstream()
    selection = downstream | (downstream.upstream(depth=1)
                              - dg.AssetSelection.key_prefixes(["raw"]))
    return sorted(selection.resolve(defs.resolve_asset_graph()), key=lambda k: k.path)


@pytest.fixture(scope="module")
def multiprocess(tmp_path_factory, postgres_dir):
    root = tmp_path_factory.mktemp("multiprocess")
    topology = LocalTopology(
        root / "deploy", Ports(postgres=free_port(), code=free_port(), webserver=free_port()),
        env={"GPUPRICES_DATA_DIR": str(root / "data"), "GPUPRICES_EXECUTOR": "multiprocess",
             # the reference run names its sources with --source, which opts them in
             OPT_IN_ENV: ",".join(SOURCES), **FAKE_TOKENS},
        postgres_dir=postgres_dir)
    with pytest.MonkeyPatch.context() as env:
        try:
            topology.start()
            for name, value in topology.process_env().items():
                if name.startswith("DAGSTER_PG_") or name == "DAGSTER_COMPUTE_LOGS_DIR":
                    env.setenv(name, value)
            with dg.DagsterInstance.from_config(str(topology.home)) as instance:
                yield Deployed(topology, root / "data", instance)
        finally:
            topology.stop()


def test_multiprocess_under_the_daemon_builds_the_same_tables_as_in_process(
        multiprocess, tmp_path):
    selection = source_selection(SOURCES)
    with ThreadPoolExecutor(1) as pool:
        reference = pool.submit(gpuprices_run, tmp_path / "in_process", None)
        run_id = multiprocess.launch(selection)
        run = multiprocess.wait_finished(run_id, timeout=900)
        in_process = reference.result()
    assert in_process.returncode == 0, in_process.stdout + in_process.stderr[-3000:]
    assert multiprocess.succeeded(run.run_id)
    kinds = [e.dagster_event_type for e in multiprocess.instance.all_logs(run_id)
             if e.is_dagster_event]
    assert dg.DagsterEventType.RUN_ENQUEUED in kinds   # through the queue, not launched directly
    steps = {e.step_key for e in multiprocess.instance.all_logs(run_id) if e.step_key}
    for source in SOURCES:   # one process per step: each source crawled in its own step
        assert f"raw__{source}.crawl_{source}" in steps
    expected, got = tables(tmp_path / "in_process" / "data"), tables(multiprocess.data_dir)
    assert set(got) == set(expected)
    assert len(expected["observations"]) > 100
    for name in expected:
        assert got[name] == expected[name], name
