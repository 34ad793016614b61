"""Data quality: what the checks on a batch expect and the numbers they judge by, free of
Dagster (pipelines/defs/quality.py declares the checks and runs these).

* thresholds.py: every number a check judges by (volume, price level, slice share, freshness,
  the uniqueness window, clock skew).
* suites.py: the Great Expectations suites and the card-bounds column they read.
* gx_checks.py: running a suite over a pandas frame and reading its verdict.
* gx_validate.py: GX itself (its context, one validation answered as plain data).
* gx_worker.py: GX in a process of its own for `gpuprices run` (its import off the run's path).
"""
