"""The resources the assets ask for by name, declared once for the code location: `duckdb`, the
working database (data/.work/prices.db), and `crawler`, which runs the spiders in subprocesses,
several sources per process (replay, raw or live, from GPUPRICES_MODE)."""

import dagster as dg

from pipelines.resources import crawler_from_env, duckdb_from_env


@dg.definitions
def resources() -> dg.Definitions:
    # Built when the code location loads, so the environment of that moment decides.
    return dg.Definitions(resources={"crawler": crawler_from_env(), "duckdb": duckdb_from_env()})
