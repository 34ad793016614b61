"""The fixture every SQL test uses: an in-memory DuckDB with the pipeline's schema."""

from __future__ import annotations

import duckdb
import pytest

from pipelines.lib.db import ensure_schema


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    ensure_schema(connection)
    yield connection
    connection.close()
