"""How the job's steps run, chosen by GPUPRICES_EXECUTOR when the code location loads.

"in_process" (the default): every step in the run's own process, the crawl of every source in one
step (two shared Scrapy processes, pipelines/resources.py). "multiprocess": Dagster's multiprocess
executor, one step per source's crawl; every step that opens the working DuckDB (one writer
process at a time, and an open connection locks the file) is in the `duckdb_writer` pool, which
dagster.yaml limits to one step at a time (`concurrency: pools: default_limit: 1`).
"""

import os

EXECUTORS = ("in_process", "multiprocess")
DUCKDB_POOL_NAME = "duckdb_writer"


def executor_name() -> str:
    name = os.environ.get("GPUPRICES_EXECUTOR") or "in_process"
    if name not in EXECUTORS:
        raise ValueError(f"GPUPRICES_EXECUTOR must be one of {', '.join(EXECUTORS)}, not {name!r}")
    return name


MULTIPROCESS = executor_name() == "multiprocess"
# In-process steps run one at a time anyway; a pool there would only cost slot bookkeeping (and a
# killed run would leave its slot claimed).
DUCKDB_POOL = DUCKDB_POOL_NAME if MULTIPROCESS else None
