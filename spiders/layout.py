"""Where things live: the repository's folders and every path under the data directory.

Spiders and pipelines both take their paths from here (so spiders never import pipelines). The
data directory can be moved with GPUPRICES_DATA_DIR (tests use a tmp dir).
"""

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT_DIR = REPO_ROOT / "data" / "snapshots"
SQL_DIR = REPO_ROOT / "dbt_like_sql"


def data_dir(override: str | Path | None = None) -> Path:
    """The data directory: `override` when given (a crawl passes its GPUPRICES_DATA_DIR Scrapy
    setting), else the GPUPRICES_DATA_DIR environment variable, else <repo>/data."""
    return Path(override or os.environ.get("GPUPRICES_DATA_DIR") or REPO_ROOT / "data").resolve()


def db_path() -> Path:
    """The published database readers open (`duckdb data/prices.db`); replaced whole after a run."""
    return data_dir() / "prices.db"


def work_db_path() -> Path:
    """The database the pipeline writes. Readers never open it, so they never block a run."""
    return data_dir() / ".work" / "prices.db"
