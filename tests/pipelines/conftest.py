"""Fixtures shared by the asset and check tests."""

import pytest
from dagster_duckdb import DuckDBResource

from pipelines.warehouse.db import ensure_schema


@pytest.fixture
def db(tmp_path) -> DuckDBResource:
    """A fresh working database with the pipeline's schema, as the assets' DuckDB resource."""
    resource = DuckDBResource(database=str(tmp_path / "prices.db"))
    with resource.get_connection() as con:
        ensure_schema(con)
    return resource
