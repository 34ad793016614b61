"""`gpuprices`: run the pipeline, and read what it published.

Commands, one module each: `run` (one run of the job, with a live view of its steps and a summary),
`reject` and `accept` (a person settles a held crawl), `sources`, `prices` (the latest price of
every offer), `signals` (the latest day of each signal mart and the market-claims scorecard),
`claims` (just the scorecard), `export` (every mart to CSV/Parquet files), `report`, `alerts`,
`advise`, `record` (the public price record), `check-sources` (does each source's page still have
the shape its spider reads) and `ui` (the Dagster UI); `simulate` comes from
pipelines/tools/simulate/.
The group that registers them is `group.py`; what they share:
`published.py` (the published database, read-only), `filters.py` (--card/--region/--vendor),
`options.py`, `output.py`, `exit_codes.py` (the exit codes, the same for every command).

The reading commands open the published database `data/prices.db` read-only, never the
pipeline's working copy, so they never block a run.
"""

from pipelines.cli.group import main

__all__ = ["main"]
