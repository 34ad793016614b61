"""DuckDB plumbing shared by the assets, the CLI, the simulator and the workshop: the connection
configuration and the tables the Python assets write (db.py), SQL files loaded by name
(sql_files.py), and the SQL models of dbt_like_sql/ (sql_models.py)."""
