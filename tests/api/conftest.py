"""The small published database the API tests read (tests/helpers/published.py), with a second
look at one offer later the same day so that the history has an open, a close, a low and a high."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from tests.helpers.published import SEEN, SINNET, market, offer, publish

LATER = SEEN + timedelta(hours=3)


def _later_look() -> dict:
    """Sinnet's hourly A100-80GB seen again 3 hours later, cheaper."""
    row = offer(*SINNET, "A100-80GB", "55")
    return {**row, "observed_at": LATER, "observed_hour": LATER, "crawl_id": "later-crawl"}


@pytest.fixture(scope="package")
def data_dir(tmp_path_factory) -> Path:
    return publish(tmp_path_factory.mktemp("api") / "data", [*market(), _later_look()])
