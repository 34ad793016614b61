"""adriannutiu/gpu-rental-prices' daily snapshots (gpu-rental-prices), one version at a time.
Inputs are written here in the file's shape (`{date, generated_at, offers: [{provider, gpu,
vram_gb, usd_hr, kind, source_url, fetched_at, min_gpus?}], providers: {<slug>: {ok, stale,
last_verified}}}`) with made-up prices; one test reads a real version when the clone is here."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest

from pipelines.backfill.archives import ARCHIVES
from pipelines.backfill.git_walk import Version
from pipelines.backfill.gpu_rental_prices import card_text, parse_gpu_rental_prices, snapshot_day
from pipelines.backfill.items import raw_item
from pipelines.backfill.selection import choose_versions
from pipelines.normalize.offer import normalize_offer
from pipelines.normalize.quarantine import Quarantined
from spiders.parsing.vendor_aliases import alias_of
from tests.backfill.archive_clones import clone_file

DAY = "2031-03-04"
PATH = f"data/snapshots/{DAY}.json"
ARCHIVE = ARCHIVES["gpu-rental-prices"]


def _row(provider="acme", gpu="h100-sxm", usd_hr=2.5, kind="secure", vram_gb=80, **more):
    return {"provider": provider, "gpu": gpu, "vram_gb": vram_gb, "usd_hr": usd_hr,
            "kind": kind, "source_url": f"https://{provider}.example/pricing",
            "fetched_at": f"{DAY}T06:00:00.000Z", **more}


def _snapshot(rows, providers=None) -> str:
    providers = providers or {r["provider"]: {"ok": True, "stale": False,
                                              "last_verified": f"{DAY}T06:00:00.000Z"}
                              for r in rows if isinstance(r, dict) and "provider" in r}
    return json.dumps({"date": DAY, "generated_at": f"{DAY}T06:00:05.000Z", "offers": rows,
                       "providers": providers}, indent=1)


def _fields(parsed):
    return [(o.cloud, o.fields["sku"], o.fields["gpu_text"], o.fields["offer_kind"],
             o.fields["price_amount"], o.fields.get("vram_gb")) for o in parsed.offers]


def test_each_row_is_one_card_priced_per_gpu_hour_in_usd_at_the_headline_region():
    parsed = parse_gpu_rental_prices(_snapshot([
        _row(), _row(kind="community", usd_hr=1.25),
        _row("bigcloud", "a100-pcie-80", 4, "on-demand", min_gpus=8),
        _row("bigcloud", "a100-pcie-80", 1.5, "spot", min_gpus=8),
        _row("inference", "l40s", 1.95, "serverless", 48)]), PATH)
    assert _fields(parsed) == [
        ("acme", "h100-sxm secure", "H100 SXM", "on_demand", "2.5", 80),
        ("acme", "h100-sxm community", "H100 SXM", "spot", "1.25", 80),
        ("bigcloud", "a100-pcie-80 on-demand min 8", "A100 PCIe 80GB", "on_demand", "4", 80),
        ("bigcloud", "a100-pcie-80 spot min 8", "A100 PCIe 80GB", "spot", "1.5", 80),
        ("inference", "l40s serverless", "L40S", "on_demand", "1.95", 48)]
    first, machine = parsed.offers[0].fields, parsed.offers[2].fields
    assert (first["currency"], first["billing_period"], first["price_per_card"],
            first["gpu_count"], first["region_text"]) == ("USD", "hour", True, "1", "US")
    assert first["url_listed"] == "https://acme.example/pricing"
    # the smallest count one can rent is kept, not taken as the count the price is for
    assert machine["gpu_count"] == "1" and machine["vendor_data"]["min_gpus"] == 8
    assert parsed.left_out == {}
    # each offer names the line its price is on
    lines = _snapshot([_row()]).splitlines()
    assert '"usd_hr"' in lines[parse_gpu_rental_prices(_snapshot([_row()]), PATH)
                               .offers[0].line - 1]


@pytest.mark.parametrize(("rows", "providers", "left_out"), [
    # a failed fetch's rows are carried forward, flagged stale: not the day's prices
    ([_row(), _row("down", fetched_at="2031-03-01T06:00:00.000Z")],
     {"acme": {"ok": True, "stale": False}, "down": {"ok": False, "stale": True}},
     {"a provider's rows carried forward from an earlier fetch (stale)": 1}),
    # a row read on another day, its provider not flagged
    ([_row(), _row("late", fetched_at="2031-03-03T23:00:00.000Z")], None,
     {"a row fetched on another day than the snapshot's": 1}),
    # prices that are not a number above zero
    ([_row(), _row("text", usd_hr="2.79"), _row("none", usd_hr=None), _row("flag", usd_hr=True),
      _row("zero", usd_hr=0)], None, {"usd_hr is not a number above zero": 4}),
    # the same provider, card, kind and count twice: which price is which is not said
    ([_row(), _row("twice", usd_hr=1.6), _row("twice", usd_hr=1.7)], None,
     {"a provider, GPU, kind and minimum count listed twice in one snapshot": 2}),
    # rows that name no offer
    ([_row(), "h100", _row(provider=""), _row(gpu=None)], None,
     {"an offer that is not an object": 1, "an offer without a provider": 1,
      "an offer without a GPU id": 1}),
])
def test_rows_that_are_not_the_days_offers_are_left_out_by_why(rows, providers, left_out):
    parsed = parse_gpu_rental_prices(_snapshot(rows, providers), PATH)
    assert [o.cloud for o in parsed.offers] == ["acme"]
    assert parsed.left_out == left_out


@pytest.mark.parametrize("text", [
    "", "[1, 2]", '{"date": "2031-03-04"}', '{"offers": {"acme": []}}', "{'offers': []}"])
def test_a_file_that_is_not_a_snapshot_is_unreadable(text):
    with pytest.raises(ValueError):
        parse_gpu_rental_prices(text, PATH)


@pytest.mark.parametrize(("gpu_id", "card"), [
    ("h100-sxm", "H100 SXM"), ("h100", "H100"), ("h100-nvl", "H100 NVL"),
    ("a100-pcie-40", "A100 PCIe 40GB"), ("a100-sxm-80", "A100 SXM 80GB"),
    ("v100-sxm2", "V100 SXM2"), ("rtx-3090-ti", "RTX 3090 Ti"), ("rtx-6000-ada", "RTX 6000 Ada"),
    ("quadro-rtx-6000", "Quadro RTX 6000"), ("rtx-pro-6000-maxq", "RTX PRO 6000 Max-Q"),
    ("mi300x", "MI300X"), ("b300", "B300")])
def test_gpu_ids_are_written_as_cards(gpu_id, card):
    assert card_text(gpu_id) == card


def _normalized(fields: dict, cloud: str = "runpod"):
    version = Version("c" * 40, datetime(2031, 3, 4, 8, 30, tzinfo=UTC), PATH, "b" * 40)
    parsed = parse_gpu_rental_prices(_snapshot([_row(cloud, **fields)]), PATH)
    return normalize_offer(raw_item(ARCHIVE, version, parsed.offers[0], "r" * 64))


@pytest.mark.parametrize(("fields", "model", "kind", "usd"), [
    ({}, "H100-80GB", "on_demand", "2.500000"),
    ({"gpu": "a100-sxm-40", "vram_gb": 40, "usd_hr": 1.1, "kind": "community"},
     "A100-40GB", "spot", "1.100000"),
    ({"gpu": "mi300x", "vram_gb": 192, "usd_hr": 2.0, "min_gpus": 8}, "MI300X-192GB",
     "on_demand", "2.000000"),
])
def test_offers_normalize_to_our_cards_at_their_usd_price_per_gpu_hour(fields, model, kind, usd):
    row = _normalized(fields)
    assert (row["gpu_model"], row["offer_kind"], str(row["price_per_gpu_hour_usd"]),
            row["gpu_count"], row["currency"], row["country"]) == (model, kind, usd, 1, "USD", "US")
    assert row["observed_at"] == datetime(2031, 3, 4, 8, 30, tzinfo=UTC)


@pytest.mark.parametrize(("fields", "stage"), [
    ({"gpu": "mi355x", "vram_gb": 288}, "card"),        # a card the catalog does not know
    ({"gpu": "rtx-3090-ti", "vram_gb": 24}, "card"),    # not read as a 3090
    ({"gpu": "h100-nvl", "vram_gb": 80}, "card"),       # the id and the memory disagree
    ({"kind": "reserved-1y"}, "offer_kind"),            # a kind the README does not name
])
def test_an_offer_we_cannot_read_is_kept_for_normalization_to_quarantine(fields, stage):
    with pytest.raises(Quarantined) as refused:
        _normalized(fields)
    assert refused.value.stage == stage


def _version(day: str, at: str) -> Version:
    return Version(at.replace(":", "").replace("-", "") + "0" * 20,
                   datetime.fromisoformat(at).replace(tzinfo=UTC),
                   f"data/snapshots/{day}.json", "b" * 40)


def test_a_days_file_is_read_only_as_committed_on_that_day():
    history = [_version("2031-03-01", "2031-03-04T08:00:00"),   # brought in late
               _version("2031-03-04", "2031-03-04T08:00:00"),
               _version("2031-03-04", "2031-03-04T13:00:00"),   # the day's later, fuller fetch
               _version("2031-03-04", "2031-03-05T07:00:00"),   # rewritten the next morning
               _version("2031-03-05", "2031-03-05T07:30:00")]
    chosen = choose_versions(ARCHIVE, history, every="day")
    assert [(v.path[-15:-5], v.committed_at.hour) for v in chosen] == [
        ("2031-03-04", 13), ("2031-03-05", 7)]
    assert snapshot_day("data/snapshots/2031-03-04.json") == date(2031, 3, 4)
    assert snapshot_day("data/latest.json") is None
    assert ARCHIVE.calendar_signal


def test_a_real_snapshot_2026_08_17():
    text = clone_file("adriannutiu/gpu-rental-prices", "d4463eed8e400f3224a68cd370b56b588b3d9ffe",
                      "data/snapshots/2026-08-17.json")
    parsed = parse_gpu_rental_prices(text, "data/snapshots/2026-08-17.json")
    rows = {(o.cloud, o.fields["sku"]): o.fields["price_amount"] for o in parsed.offers}
    assert rows[("lambda", "h100-sxm on-demand")] == "3.99"
    assert rows[("aws", "h100-sxm spot min 8")] == "7.220225"
    assert len(parsed.offers) == 289
    # voltagepark's and fireworks' fetches failed that day: their rows were carried forward
    assert parsed.left_out == {"a provider's rows carried forward from an earlier fetch "
                               "(stale)": 6}
    assert not {"voltagepark", "fireworks"} & {o.cloud for o in parsed.offers}
    # every provider it names is a vendor of the alias table
    assert [c for c in sorted({o.cloud for o in parsed.offers}) if alias_of(c) is None] == []
