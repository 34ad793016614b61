"""The tests that start the deployed topology (Postgres, code server, daemon, webserver) are the
deploy tier (tests/helpers/tiers.py), run by `make test-deploy`: they wait on minute ticks, so
they are a tier of their own, which `.ci/run` runs last, alone (beside the end-to-end tier a
deployment stopped by Ctrl-C was not down within its bound). The rest of tests/deploy/ is
fast."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipelines.deploy.postgres import server_bin_dir


def cluster_dir() -> Iterator[Path]:
    """A directory for a Postgres cluster that the `postgres` user can reach (pytest's temporary
    directories are closed to other users); removed afterwards."""
    if server_bin_dir() is None:
        pytest.fail("PostgreSQL is not installed: `make test-deploy` installs it "
                    "(python -m pipelines.deploy install)")
    path = Path(tempfile.mkdtemp(prefix="gpuprices-pg-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def postgres_dir() -> Iterator[Path]:
    yield from cluster_dir()
