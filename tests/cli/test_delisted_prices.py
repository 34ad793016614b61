"""An offer its record no longer lists is not a price "now" (issue 41, item 5): one source lists
two A100 offers 20 days before its newest crawl and only one of them since, so the other, recent
as it is (well within the 180-day horizon), was delisted. `gpuprices prices` and the API leave it
out and say so, with its reason; `--max-age all` brings it back; a wider max age does not."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pipelines import api
from pipelines.cli.output import console
from tests.helpers.published import SEEN, SINNET, ULANQAB, gpuprices, offer, publish

EARLIER = SEEN - timedelta(days=20)


def _seen_on(row: dict, when) -> dict:
    return {**row, "observed_at": when, "observed_hour": when, "crawl_id": f"crawl-{when:%F}"}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    rows = [offer(*SINNET, "A100-80GB", "62"),                          # listed on SEEN
            _seen_on(offer(*SINNET, "A100-80GB", "62"), EARLIER),
            _seen_on(offer(*SINNET, "A100-80GB", "300", count=8), EARLIER),   # then delisted
            # a source whose newest crawl is 20 days old: its offer is not behind its record
            _seen_on(offer(*ULANQAB, "A100-80GB", "46"), EARLIER)]
    return publish(tmp_path_factory.mktemp("delisted") / "data", rows)


def test_a_delisted_offer_is_left_out_with_its_reason(data_dir, monkeypatch):
    monkeypatch.setattr(console, "width", 200)
    result = gpuprices(data_dir, "prices", "--card", "A100-80GB", "--format", "table")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "37.50" not in text                          # the 8-GPU offer, 300 / 8 per GPU-hour
    assert "乌兰察布" in text and "光环新网 Sinnet" in text
    assert ("1 offer no longer listed by their record (last seen over 7 days before its newest "
            "data) left out (--max-age all shows them)") in text


def test_a_wider_max_age_keeps_it_out_and_all_brings_it_back(data_dir):
    assert len(api.prices(card="A100-80GB", data_dir=data_dir, max_age=365)) == 2
    every = api.prices(card="A100-80GB", data_dir=data_dir, max_age="all")
    assert len(every) == 3
    assert sorted(every["days_behind_record"].tolist()) == [0, 0, 20]


def test_the_api_counts_it_apart_from_the_old_ones(data_dir):
    frame = api.prices(card="A100-80GB", data_dir=data_dir)
    assert frame.attrs["aged_out"] == 0 and frame.attrs["delisted"] == 1
    assert frame.attrs["left_out"].startswith("1 offer no longer listed by their record")


def test_nothing_left_says_why(data_dir):
    # under 40 CNY per GPU-hour, only the delisted 8-GPU offer (37.50) matches
    result = gpuprices(data_dir, "prices", "--card", "A100-80GB", "--max-price", "40",
                       "--format", "table")
    assert result.exit_code == 3
    text = " ".join(result.output.split())
    assert "but 1 offer no longer listed by their record" in text
