"""Where things live. The data directory can be moved with GPUPRICES_DATA_DIR (tests use a tmp dir)."""

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT_DIR = REPO_ROOT / "data" / "snapshots"
SQL_DIR = REPO_ROOT / "dbt_like_sql"


def data_dir() -> Path:
    return Path(os.environ.get("GPUPRICES_DATA_DIR") or REPO_ROOT / "data").resolve()


def db_path() -> Path:
    """The published database readers open (`duckdb data/prices.db`); replaced whole after a run."""
    return data_dir() / "prices.db"


def work_db_path() -> Path:
    """The database the pipeline writes. Readers never open it, so they never block a run."""
    return data_dir() / ".work" / "prices.db"
