"""How the job's steps run, chosen by GPUPRICES_EXECUTOR when the code location loads.

"in_process" (the default): every step in the run's own process, the crawl of every source in one
step (two shared Scrapy processes, pipelines/resources.py), the steps after the models side by
side on threads (pipelines/defs/step_overlap.py). "multiprocess": Dagster's multiprocess
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
# The same steps carry this tag, which the multiprocess executor limits to one step in flight
# (its tag_concurrency_limits, pipelines/defs/automation.py). Within a run the executor then
# launches a DuckDB step only when the last one has finished, and its pool claim succeeds at
# once: without the tag every waiting step polls the instance for the slot on a back-off that
# grows to seconds (Dagster's instance_concurrency_context), which doubled the run. The pool
# still keeps two runs' steps apart.
DUCKDB_TAG_KEY = "gpuprices/duckdb"
DUCKDB_TAGS = {DUCKDB_TAG_KEY: DUCKDB_POOL_NAME} if MULTIPROCESS else None
# The steps after the models that read them and write only their own tables or files (the price
# index, the advisor, the alerts, the feeds, the report): the in-process executor runs them side
# by side, each on its own connection (pipelines/defs/step_overlap.py); every other step alone.
OVERLAP_TAG = "gpuprices/overlap"
OVERLAP_TAGS = {**(DUCKDB_TAGS or {}), OVERLAP_TAG: "true"}
