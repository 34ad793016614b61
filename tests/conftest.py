"""Shared fixtures: the replay server, temp data dirs, an in-memory DuckDB with the pipeline's
schema. Shared functions live in tests/helpers/."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pipelines.warehouse.db import ensure_schema
from spiders.layout import SNAPSHOT_DIR
from spiders.replay_server import ReplayServer


@pytest.fixture(scope="session")
def replay_server():
    with ReplayServer(SNAPSHOT_DIR) as server:
        yield server


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    monkeypatch.setenv("GPUPRICES_DATA_DIR", str(path))
    return path


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the pipeline's schema (the SQL and alert tests build on it)."""
    connection = duckdb.connect()
    ensure_schema(connection)
    yield connection
    connection.close()
