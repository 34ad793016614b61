"""The tests that start the deployed topology (Postgres, code server, daemon, webserver) run in
`make test-deploy` (GPUPRICES_TEST_DEPLOY=1), which `.ci/run` calls after `make test`: they
wait on minute ticks, and beside the suite's two xdist workers their timings would measure the
suite, not the deployment. `make test` collects the rest of tests/deploy/."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipelines.deploy.postgres import server_bin_dir

TOPOLOGY_TESTS = ["test_local_topology.py", "test_multiprocess_topology.py",
                  "test_deploy_command.py"]
collect_ignore = [] if os.environ.get("GPUPRICES_TEST_DEPLOY") == "1" else TOPOLOGY_TESTS


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
