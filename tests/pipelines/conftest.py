"""Fixtures shared by the asset and check tests."""

import shutil
from pathlib import Path

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


@pytest.fixture(scope="module")
def simulated(request, tmp_path_factory) -> Path:
    """The module's HOURS (tests/helpers/simulated.py SimulatedHours), simulated once, every
    model built."""
    return request.module.HOURS.write(tmp_path_factory.mktemp("simulated") / "work.db")


@pytest.fixture
def work(simulated, tmp_path) -> Path:
    """A copy of the module's simulated working database, checkpointed and closed."""
    return Path(shutil.copy(simulated, tmp_path / "work.db"))
