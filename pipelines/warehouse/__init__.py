"""DuckDB plumbing shared by the assets and the tools: the connection configuration and the
tables the Python assets write (db.py), SQL files loaded by name (sql_files.py), and the SQL
models of dbt_like_sql/ (sql_models.py)."""
