"""What a price's unit says, through normalization: a card-hour of a named card (the card must be
the row's, or the row's card when the row names none), a machine's price (its card count must be
stated: by the page, the count column or the configuration), and a row the configuration says
names no card."""

from decimal import Decimal

import pytest

from pipelines.normalize import Quarantined, normalize_offer
from tests.pipelines.test_normalize import BASE as LISTING

# test_normalize's listing with no count: whether a count is stated is what these cases vary
BASE = {**{k: v for k, v in LISTING.items() if k != "gpu_count"}, "billing_period": "hour"}


def offer(**fields) -> dict:
    return {**BASE, **fields}


@pytest.mark.parametrize("fields, gpu_model, period, per_gpu_hour_cny", [
    # CIBR: the node type names no card, the unit does
    (dict(gpu_text="GPU node", price_text="1.00 RMB/V100·HOUR"), "V100-16GB", "hour", "1"),
    # the row names the card and the unit agrees (another memory size of the family is the same
    # card)
    (dict(gpu_text="V100 32GB", price_text="1.00 RMB/V100·HOUR"), "V100-32GB", "hour", "1"),
    # a card-hour is one card's even on a row of a machine of 8
    (dict(gpu_text="A100 80G", gpu_count="8", price_text="2 元/A100·时"), "A100-80GB", "hour",
     "2"),
    (dict(gpu_text="A100 80G", price_text="9.00 元/卡时"), "A100-80GB", "hour", "9"),
    (dict(gpu_text="A100 80G", price_text="2.40 CNY/Card/Hour"), "A100-80GB", "hour", "2.4"),
    # a machine-day with its count on the page (count column, or the card text) or from the
    # configuration (a mapping's gpu_count reaches the item as gpu_count)
    (dict(gpu_text="A800 80G", gpu_count="8", price_text="720.00 CNY/Machine/Day",
          billing_period="day"), "A800-80GB", "day", "3.75"),
    (dict(gpu_text="A800 80G ×8", price_text="720.00 CNY/Machine/Day", billing_period="day"),
     "A800-80GB", "day", "3.75"),
    (dict(gpu_text="A800 80G", gpu_count=4, price_text="¥960/台/天"), "A800-80GB", "day", "10"),
])
def test_units_land(fields, gpu_model, period, per_gpu_hour_cny):
    row = normalize_offer(offer(**fields))
    assert (row["gpu_model"], row["billing_period"]) == (gpu_model, period)
    assert row["price_per_gpu_hour_cny"] == Decimal(per_gpu_hour_cny)


@pytest.mark.parametrize("fields, stage, reason", [
    # the unit names a different card than the row
    (dict(gpu_text="A100 80G", price_text="1.00 RMB/V100·HOUR"), "price",
     "the price's unit names a V100 card-hour but the row's card is A100-80GB"),
    # the unit names a card the catalog does not know, and the row names one
    (dict(gpu_text="A100 80G", price_text="1.00 RMB/X900·HOUR"), "price",
     "the price's unit names 'x900', no card the catalog knows"),
    # neither the row nor the unit names a card
    (dict(gpu_text="GPU node", price_text="1.00 RMB/X900·HOUR"), "card",
     "unknown GPU model (not in card_catalog.csv) in 'GPU node'"),
    (dict(gpu_text="GPU node", price_text="1.00 RMB/Card·HOUR"), "card",
     "unknown GPU model (not in card_catalog.csv) in 'GPU node'"),
    # a machine's price with no card count anywhere
    (dict(gpu_text="A800 80G", price_text="720.00 CNY/Machine/Day", billing_period="day"),
     "count", "neither the page nor the configuration states the machine's card count"),
    (dict(gpu_text="RTX 4090", price_text="¥500/台/月", billing_period="month"), "count",
     "a price per machine ('¥500/台/月')"),
    # the configuration says the row names no card: its reason, whatever the text
    (dict(gpu_text="GPU80G", price_text="4.00 元 卡小时",
          no_card_reason="'GPU80G' (a partition, queue or class of cards) names no card; no "
                         "public evidence maps it to one"), "card",
     "'GPU80G' (a partition, queue or class of cards) names no card"),
])
def test_units_unhappy(fields, stage, reason):
    with pytest.raises(Quarantined) as caught:
        normalize_offer(offer(**fields))
    assert caught.value.stage == stage and reason in caught.value.reason, caught.value.reason


def test_no_card_reason_must_be_text():
    with pytest.raises(Quarantined) as caught:
        normalize_offer(offer(gpu_text="GPU80G", price_text="4 元/卡时", no_card_reason=["x"]))
    assert caught.value.stage == "item" and "no_card_reason" in caught.value.reason
