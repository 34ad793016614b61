"""Volcano Engine anonymous price API: ListTemplate, then GetTable (parse the recorded bodies once,
many checks; unhappy paths on edited copies of them)."""

import asyncio
import functools
import json
from decimal import Decimal

import pytest
from scrapy.utils.test import get_crawler

from pipelines.normalize import Quarantined, normalize_offer
from spiders.replay_server import request_key
from spiders.vendors.volcengine_cn import (
    GET_TABLE_URL,
    LIST_TEMPLATE_URL,
    TEMPLATE_CODE,
    UNMAPPED_COUNT,
    VolcanoApiError,
    VolcengineCNSpider,
    gpu_card,
    is_one,
    region_of,
)
from tests.helpers.responses import file_response, snapshot_entries

SOURCE = "volcengine_cn"


def new_spider() -> VolcengineCNSpider:
    return VolcengineCNSpider.from_crawler(get_crawler(VolcengineCNSpider), crawl_id="test")


spider = new_spider()


def template_page():
    return file_response(SOURCE, "list_template.json")


def table_page():
    return file_response(SOURCE, "get_table.json")


@functools.cache
def table_request():
    (request,) = list(new_spider().parse_template(template_page()))
    return request


@functools.cache
def parsed() -> tuple[list, dict]:
    """What one spider yields for the recorded GetTable body (with the template's specs), and the
    crawler stats it counted."""
    one = new_spider()
    out = list(one.parse(table_page(), **table_request().cb_kwargs))
    return out, one.crawler.stats.get_stats()


@pytest.fixture(scope="module")
def offers() -> list[dict]:
    return parsed()[0]


def by(offers, sku, region, period):
    (found,) = [o for o in offers
                if (o["sku"], o["region_text"], o["billing_period"]) == (sku, region, period)]
    return found


def edited(page, edit):
    """A copy of a recorded response whose JSON body went through `edit(body)`."""
    body = json.loads(page.body)
    edit(body)
    return page.replace(body=json.dumps(body, ensure_ascii=False).encode())


def one_row(**overrides) -> dict:
    row = {"Product": "ECS", "ConfigurationCode": "ecs.pni2.3xlarge",
           "ChargeItemCode": "ecs.pni2_3xlarge_cn-beijing",
           "PriceInfoList": [{"Period": "hourly", "Times": 1, "Price": "27.50"}]}
    return {**row, **overrides}


# --- the two requests ---------------------------------------------------------------------

def test_the_crawl_starts_with_list_template():
    async def first():
        return [r async for r in new_spider().start()]
    (request,) = asyncio.run(first())
    assert (request.method, request.url) == ("GET", LIST_TEMPLATE_URL)
    assert request.url.endswith(f"TemplateCode={TEMPLATE_CODE}")
    assert request.headers["Referer"] == b"https://www.volcengine.com/pricing?product=ECS&tab=2"
    assert request.callback.__name__ == "parse_template"


def test_list_template_leads_to_one_get_table_post():
    request = table_request()
    assert (request.method, request.url) == ("POST", GET_TABLE_URL)
    assert json.loads(request.body) == {"TemplateCode": "CLT7310571628986405164"}
    assert request.headers["Content-Type"] == b"application/json"


def test_both_requests_are_the_recorded_ones():
    """Replay answers by method + canonical URL + canonical JSON body: the spider's requests must
    have the keys of the manifest's entries."""
    async def first():
        return [r async for r in new_spider().start()]
    sent = [asyncio.run(first())[0], table_request()]
    recorded = {request_key(e["method"], e["url"],
                            json.dumps(e["body"]) if "body" in e else None): e["file"]
                for e in snapshot_entries(SOURCE)}
    assert [recorded.get(request_key(r.method, r.url, r.body)) for r in sent] == [
        "list_template.json", "get_table.json"]


def test_template_specs_reach_the_offers(offers):
    specs = table_request().cb_kwargs["specs"]
    assert specs["ecs.pni2.28xlarge"]["abilities"]["vcpu"] == "112核"
    assert specs["ecs.pni2.28xlarge"]["regions"] == ["cn-beijing", "cn-guangzhou"]
    assert "ecs.pni2.28xlarge.month" not in specs          # the ".month" row is the same type
    offer = by(offers, "ecs.pni2.28xlarge", "cn-beijing", "hour")
    assert offer["vendor_data"]["abilities"]["memory"] == "1715GiB"


def test_get_table_is_not_paged():
    assert not [o for o in parsed()[0] if hasattr(o, "callback")]


# --- what the recorded table yields -------------------------------------------------------

def test_gpu_rows_become_offers_and_the_rest_is_counted(offers):
    stats = parsed()[1]
    assert len(offers) == 13
    assert stats["volcengine_cn/cpu_configurations_skipped"] == 2       # g3i.large, c3a.large
    assert stats["volcengine_cn/non_instance_rows_skipped"] == 1        # system disk
    assert stats["volcengine_cn/multi_month_terms_skipped"] == 2        # two Times 12 totals
    assert "volcengine_cn/unmapped_gpu_configurations" not in stats    # every GPU row is known
    assert not [o for o in offers if o["sku"] in ("ecs.g3i.large", "ecs.c3a.large")]


def test_first_offer_fields(offers):
    first = offers[0]
    assert first["sku"] == "ecs.pni2.3xlarge"
    assert (first["gpu_text"], first["gpu_count"]) == ("NVIDIA A100 80GB", 1)
    assert first["region_text"] == "cn-beijing"
    assert (first["offer_kind"], first["billing_period"]) == ("on_demand", "hour")
    assert (first["price_amount"], first["currency"]) == ("27.50", "CNY")
    assert first["vendor_data"]["ChargeItemCode"] == "ecs.pni2_3xlarge_cn-beijing"
    assert first["url"] == GET_TABLE_URL


def test_month_row_keeps_the_instance_type_without_month(offers):
    monthly = by(offers, "ecs.pni2.3xlarge", "cn-beijing", "month")
    assert monthly["vendor_data"]["ConfigurationCode"] == "ecs.pni2.3xlarge.month"
    assert monthly["price_amount"] == "13200.00"


@pytest.mark.parametrize("sku, region, period, model, count, per_gpu_hour", [
    ("ecs.pni2.3xlarge", "cn-beijing", "hour", "A100-80GB", 1, "27.5"),
    ("ecs.pni2.3xlarge", "cn-beijing", "month", "A100-80GB", 1, "18.082192"),   # 13,200 / 730
    ("ecs.pni2.28xlarge", "cn-guangzhou", "hour", "A100-80GB", 8, "26.8"),      # 214.40 / 8
    ("ecs.pni2.28xlarge", "cn-beijing", "month", "A100-80GB", 8, "18.082192"),
    ("ecs.hpcpni2.28xlarge", "cn-shanghai", "hour", "A100-80GB", 8, "29.5"),
    ("ecs.gni2.3xlarge", "cn-guangzhou", "month", "A10-24GB", 1, "6.835616"),
])
def test_offers_normalize(offers, sku, region, period, model, count, per_gpu_hour):
    row = normalize_offer(by(offers, sku, region, period))
    assert (row["gpu_model"], row["gpu_count"]) == (model, count)
    assert row["price_per_gpu_hour_cny"] == Decimal(per_gpu_hour)
    assert row["region_code"] == region


def test_regions_are_placed(offers):
    landed = [normalize_offer(o) for o in offers]
    assert len(landed) == 13
    assert {(r["region_code"], r["province_or_state"], r["is_tier1_city"]) for r in landed} == {
        ("cn-beijing", "Beijing", True), ("cn-shanghai", "Shanghai", True),
        ("cn-guangzhou", "Guangdong", True)}


def test_every_offer_is_an_ecs_type_in_yuan_in_three_regions(offers):
    for offer in offers:
        assert offer["region_text"] in ("cn-beijing", "cn-shanghai", "cn-guangzhou")
        assert offer["billing_period"] in ("hour", "month")
        assert offer["currency"] == "CNY"
        assert offer["sku"].startswith("ecs.") and not offer["sku"].endswith(".month")


# --- mappings, table-driven ---------------------------------------------------------------

@pytest.mark.parametrize("family, size, expected", [
    ("pni2", "3xlarge", ("NVIDIA A100 80GB", 1)),
    ("pni2", "7xlarge", ("NVIDIA A100 80GB", 2)),
    ("pni2", "14xlarge", ("NVIDIA A100 80GB", 4)),
    ("pni2", "28xlarge", ("NVIDIA A100 80GB", 8)),
    ("hpcpni2", "28xlarge", ("NVIDIA A100 80GB", 8)),
    ("gni2", "3xlarge", ("NVIDIA A10 24GB", 1)),
    ("gni2", "8xlarge", ("NVIDIA A10 24GB", UNMAPPED_COUNT)),
    ("g1ve", "2xlarge", ("NVIDIA V100", UNMAPPED_COUNT)),   # a GPU family spelled like g<n>
    ("g1ie", "xlarge", ("NVIDIA T4 16GB", UNMAPPED_COUNT)),
    ("vgn2i", "2xlarge", ("ecs.vgn2i (family not in GPU_FAMILIES)", UNMAPPED_COUNT)),
    ("hpcg3ib", "8xlarge", ("ecs.hpcg3ib (family not in GPU_FAMILIES)", UNMAPPED_COUNT)),
    ("gni3", "5xlarge", ("ecs.gni3 (family not in GPU_FAMILIES)", UNMAPPED_COUNT)),
    ("g3i", "large", None), ("c3a", "large", None), ("r1", "xlarge", None),
    ("i3s", "2xlarge", None), ("d3c", "4xlarge", None), ("hfg2", "large", None),
    ("s3", "medium", None), ("t3", "large", None), ("ebmg3i", "32xlarge", None),
    ("hpcc3i", "16xlarge", None), ("g2i-lm", "xlarge", None),
])
def test_family_to_card(family, size, expected):
    assert gpu_card(family, size) == expected


@pytest.mark.parametrize("charge, region", [
    ("ecs.g3i_large_cn-beijing", "cn-beijing"),
    ("ecs.g3a_32xlarge_ap-southeast-1", "ap-southeast-1"),
    ("ecs.pni2_28xlarge_cn-guangzhou", "cn-guangzhou"),
    ("nounderscore", "nounderscore"),
])
def test_region_is_the_charge_item_suffix(charge, region):
    assert region_of(charge) == region


@pytest.mark.parametrize("times, one", [
    (1, True), ("1", True), (1.0, True), (12, False), ("12", False), (None, False),
    ("x", False), (True, False)])
def test_times_one(times, one):
    assert is_one(times) is one


def _yielded(row: dict) -> tuple[list, dict]:
    one = new_spider()
    out = list(one.parse_offer(row, table_page(), specs={}))
    return out, one.crawler.stats.get_stats()


PRICE = {"hourly": "27.50", "monthly": "13200.00"}


@pytest.mark.parametrize("period, times, billing_period", [
    ("hourly", 1, "hour"), ("hourly", "1", "hour"), ("monthly", 1, "month"),
    ("monthly", 1.0, "month"), ("monthly", 12, None), ("monthly", 36, None), ("hourly", 2, None),
])
def test_period_and_times(period, times, billing_period):
    out, stats = _yielded(one_row(PriceInfoList=[{"Period": period, "Times": times,
                                                  "Price": PRICE[period]}]))
    if billing_period is None:
        assert out == [] and stats["volcengine_cn/multi_month_terms_skipped"] == 1
    else:
        (offer,) = out
        assert offer["billing_period"] == billing_period
        assert normalize_offer(offer)["billing_period"] == billing_period


def test_unknown_period_goes_on_and_is_quarantined():
    (offer,) = _yielded(one_row(PriceInfoList=[{"Period": "daily", "Times": 1, "Price": "9"}]))[0]
    assert offer["billing_period"] == "daily"
    with pytest.raises(Quarantined, match="unknown billing period 'daily'"):
        normalize_offer(offer)


def test_numeric_price_is_read():
    (offer,) = _yielded(one_row(PriceInfoList=[{"Period": "hourly", "Times": 1,
                                                "Price": 27.5}]))[0]
    assert normalize_offer(offer)["price_amount"] == Decimal("27.5")


@pytest.mark.parametrize("price", [None, ""])
def test_missing_price_goes_on_and_is_quarantined(price):
    (offer,) = _yielded(one_row(PriceInfoList=[{"Period": "hourly", "Times": 1,
                                                "Price": price}]))[0]
    with pytest.raises(Quarantined, match="price"):
        normalize_offer(offer)


def test_unknown_family_goes_on_and_is_quarantined():
    out, stats = _yielded(one_row(ConfigurationCode="ecs.vgn2i.2xlarge",
                                  ChargeItemCode="ecs.vgn2i_2xlarge_cn-beijing"))
    (offer,) = out
    assert offer["gpu_text"] == "ecs.vgn2i (family not in GPU_FAMILIES)"
    assert stats["volcengine_cn/unmapped_gpu_configurations"] == 1
    with pytest.raises(Quarantined, match=r"unknown GPU model.*ecs\.vgn2i"):
        normalize_offer(offer)


def test_unknown_size_goes_on_and_is_quarantined():
    out, stats = _yielded(one_row(ConfigurationCode="ecs.gni2.8xlarge.month",
                                  ChargeItemCode="ecs.gni2_8xlarge_cn-beijing",
                                  PriceInfoList=[{"Period": "monthly", "Times": 1,
                                                  "Price": "13700.00"}]))
    (offer,) = out
    assert (offer["sku"], offer["gpu_text"], offer["gpu_count"]) == (
        "ecs.gni2.8xlarge", "NVIDIA A10 24GB", UNMAPPED_COUNT)
    assert stats["volcengine_cn/unmapped_gpu_configurations"] == 1
    with pytest.raises(Quarantined, match="gpu_count is not a number"):
        normalize_offer(offer)


@pytest.mark.parametrize("code, stat", [
    *((c, "cpu_configurations_skipped")
      for c in ("ecs.g3i.large", "ecs.c3a.large.month", "ecs.hfg2.xlarge")),
    *((c, "non_instance_rows_skipped")
      for c in ("system-EBS_ESSD_PL0.month", "SUSE.month", "ecs.g3i")),
])
def test_cpu_and_non_instance_rows_are_skipped_and_counted(code, stat):
    out, stats = _yielded(one_row(ConfigurationCode=code, ChargeItemCode="x_cn-beijing"))
    assert out == [] and stats[f"volcengine_cn/{stat}"] == 1


def test_price_entry_that_is_not_an_object_fails_loudly():
    with pytest.raises(VolcanoApiError, match=r"price that is not an object: '27\.50'"):
        _yielded(one_row(PriceInfoList=["27.50"]))


def test_gpu_row_of_another_product_name_is_still_read():
    (offer,) = _yielded(one_row(Product="GPU_Server"))[0]
    assert offer["vendor_data"]["Product"] == "GPU_Server"


# --- unhappy paths: errors with HTTP 200, renamed fields, empty lists ----------------------

ERROR = {"Code": "InvalidParameter", "Message": "TemplateCode is invalid"}


def test_list_template_error_envelope_fails_loudly():
    page = edited(template_page(), lambda b: b["ResponseMetadata"].update(Error=ERROR)
                  or b.pop("Result"))
    assert page.status == 200
    with pytest.raises(VolcanoApiError, match="ListTemplate error InvalidParameter: "
                                              "TemplateCode is invalid"):
        list(new_spider().parse_template(page))


def test_get_table_error_envelope_fails_loudly():
    page = edited(table_page(), lambda b: b["ResponseMetadata"].update(Error=ERROR))
    with pytest.raises(VolcanoApiError, match="GetTable error InvalidParameter"):
        list(new_spider().parse(page, specs={}))


@pytest.mark.parametrize("which, edit, message", [
    ("template", lambda b: b.update(Meta=b.pop("ResponseMetadata")), "no ResponseMetadata"),
    ("template", lambda b: b.update(Data=b.pop("Result")), "no Result object"),
    ("template", lambda b: b["Result"].update(Templates=b["Result"].pop("List")), "no list 'List'"),
    ("template", lambda b: b["Result"]["List"][0].update(Tpl=b["Result"]["List"][0].pop(
        "Template")), "has no Template"),
    ("table", lambda b: b.update(Meta=b.pop("ResponseMetadata")), "no ResponseMetadata"),
    ("table", lambda b: b["Result"].update(Tables=b["Result"].pop("TableList")),
     "no list 'TableList'"),
    ("table", lambda b: b["Result"]["TableList"][0].update(Items=b["Result"]["TableList"][0].pop(
        "Rows")), "no list 'Rows'"),
    ("table", lambda b: b["Result"]["TableList"][0]["Rows"][0].update(
        Prices=b["Result"]["TableList"][0]["Rows"][0].pop("PriceInfoList")),
     "has no PriceInfoList"),
    ("table", lambda b: b["Result"]["TableList"][0]["Rows"][0].update(
        Code=b["Result"]["TableList"][0]["Rows"][0].pop("ConfigurationCode")),
     "lacks ConfigurationCode"),
])
def test_renamed_field_fails_loudly(which, edit, message):
    if which == "template":
        with pytest.raises(VolcanoApiError, match=message):
            list(new_spider().parse_template(edited(template_page(), edit)))
    else:
        with pytest.raises(VolcanoApiError, match=message):
            list(new_spider().parse(edited(table_page(), edit), specs={}))


def test_empty_template_list_fails_loudly():
    page = edited(template_page(), lambda b: b["Result"].update(List=[]))
    with pytest.raises(VolcanoApiError, match="ListTemplate returned no template"):
        list(new_spider().parse_template(page))


def test_template_without_ecs_instances_fails_loudly():
    page = edited(template_page(), lambda b: b["Result"]["List"][0].update(
        Template=json.dumps({"Children": [{"Product": "TOS", "ConfigurationCode": "std"}]})))
    with pytest.raises(VolcanoApiError, match="lists no instance type"):
        list(new_spider().parse_template(page))


@pytest.mark.parametrize("template, message", [
    ("{not json", "Template is not JSON"),
    ("[" * 300 + "]" * 300, "nesting deeper than 200 levels"),
])
def test_bad_template_string_fails_loudly(template, message):
    page = edited(template_page(), lambda b: b["Result"]["List"][0].update(Template=template))
    with pytest.raises(VolcanoApiError, match=message):
        list(new_spider().parse_template(page))


def test_empty_table_list_fails_loudly():
    page = edited(table_page(), lambda b: b["Result"].update(TableList=[]))
    with pytest.raises(VolcanoApiError, match="GetTable returned no table"):
        list(new_spider().parse(page, specs={}))
