"""Fixtures of the read-layer tests: the small published database of the reading commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.published import market, publish


@pytest.fixture(scope="package")
def data_dir(tmp_path_factory) -> Path:
    return publish(tmp_path_factory.mktemp("query") / "data", market())


@pytest.fixture
def con(data_dir):
    from pipelines.query.published import open_published

    with open_published((), data_dir) as connection:
        yield connection
