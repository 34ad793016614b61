"""Fixtures of the reading-command tests: the small published database they all read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.published import market, publish


@pytest.fixture(scope="package")
def observations() -> list[dict]:
    """The hand-made observations of the published database."""
    return market()


@pytest.fixture(scope="package")
def data_dir(tmp_path_factory, observations) -> Path:
    """data/prices.db published from data/.work/prices.db, as `feeds/prices_db` does (built once
    for tests/cli; the commands only read it)."""
    return publish(tmp_path_factory.mktemp("cli") / "data", observations)
