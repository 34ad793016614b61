"""Where things live: the repository's folders and every path under the data directory.

Spiders and pipelines both take their paths from here (so spiders never import pipelines). The
data directory can be moved with GPUPRICES_DATA_DIR (tests use a tmp dir). Every function takes
the data directory as `root` when the caller has its own (a crawl's setting, a temporary run, a
demo directory); without it, `data_dir()`. tests/test_one_home_paths.py keeps paths under the
data directory from being built anywhere else.
"""

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT_DIR = REPO_ROOT / "data" / "snapshots"
SQL_DIR = REPO_ROOT / "dbt_like_sql"

Root = str | Path | None


def data_dir(override: Root = None) -> Path:
    """The data directory: `override` when given (a crawl passes its GPUPRICES_DATA_DIR Scrapy
    setting), else the GPUPRICES_DATA_DIR environment variable, else <repo>/data."""
    return Path(override or os.environ.get("GPUPRICES_DATA_DIR") or REPO_ROOT / "data").resolve()


def _root(root: Root) -> Path:
    """`root` as given (not resolved: a caller's relative path stays relative), else data_dir()."""
    return data_dir() if root is None else Path(root)


def db_path(root: Root = None) -> Path:
    """The published database readers open (`duckdb data/prices.db`); replaced whole after a run."""
    return _root(root) / "prices.db"


def work_db_path(root: Root = None) -> Path:
    """The database the pipeline writes. Readers never open it, so they never block a run."""
    return _root(root) / ".work" / "prices.db"


def work_simulated_db_path(root: Root = None) -> Path:
    """A simulated database written beside the working one before it is published (the bench)."""
    return _root(root) / ".work" / "simulated.db"


def raw_dir(root: Root = None) -> Path:
    """The raw archive: every fetched body, fetch log, item file and crawl verdict."""
    return _root(root) / "raw"


def raw_objects_dir(root: Root = None) -> Path:
    """Response bodies, gzip-compressed once per content hash: objects/ab/<sha256>.gz."""
    return raw_dir(root) / "objects"


def raw_object_path(sha256: str, root: Root = None) -> Path:
    """The stored body with this content hash."""
    return raw_objects_dir(root) / sha256[:2] / f"{sha256}.gz"


def fetch_logs_dir(root: Root = None) -> Path:
    """One folder per source of fetch logs (one JSON line per fetch)."""
    return raw_dir(root) / "fetches"


def fetch_log_path(source: str, crawl_id: str, root: Root = None) -> Path:
    """One crawl's fetch log: every URL, status, headers and body hash it fetched."""
    return fetch_logs_dir(root) / source / f"{crawl_id}.jsonl"


def crawl_items_path(source: str, crawl_id: str, root: Root = None) -> Path:
    """One crawl's offers as the spider yielded them (JSON lines)."""
    return raw_dir(root) / "items" / source / f"{crawl_id}.jsonl"


def crawl_verdicts_dir(root: Root = None) -> Path:
    """One folder per source of monitor verdicts: crawls/<source>/<crawl_id>.json."""
    return raw_dir(root) / "crawls"


def crawl_verdict_path(source: str, crawl_id: str, root: Root = None) -> Path:
    """One crawl's monitor verdict, written when its spider closes."""
    return crawl_verdicts_dir(root) / source / f"{crawl_id}.json"


def feeds_dir(root: Root = None) -> Path:
    """The published CSV and Parquet feeds."""
    return _root(root) / "feeds"


def report_path(root: Root = None) -> Path:
    """The HTML report a run (or `gpuprices report`) writes."""
    return _root(root) / "report" / "index.html"


def export_dir(root: Root = None) -> Path:
    """Where `gpuprices export` writes by default."""
    return _root(root) / "export"


def truth_dir(root: Root = None) -> Path:
    """Where `make truth` writes its scores."""
    return _root(root) / "truth"


def bench_dir(root: Root = None) -> Path:
    """Where the bench writes its reports."""
    return _root(root) / "bench"


def demo_dir(root: Root = None) -> Path:
    """`gpuprices demo`'s own data directory (a data directory of its own, inside this one)."""
    return _root(root) / "demo"
