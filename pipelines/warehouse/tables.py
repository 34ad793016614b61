"""The names of the tables Python writes that other code reads, one home each (a model's name is
its file's, dbt_like_sql/<layer>/<model>.sql; the tables the models read from Python are
sql_models.PYTHON_TABLES). Import them; never spell them again (tests/test_one_home_tables.py)."""

# The price index: appended by pipelines/index/publish.py after the SQL models.
INDEX_TABLE = "marts.price_index"
# The advisor's saved workloads, replaced every run, and each run's best option per workload,
# appended (pipelines/defs/advisor.py).
ADVICE_TABLE = "advisor.workload_advice"
ADVICE_HISTORY_TABLE = "advisor.workload_advice_history"
