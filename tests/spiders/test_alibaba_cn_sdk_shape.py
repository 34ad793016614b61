"""The SDK is the shape check: every recorded DescribeInstanceTypes / DescribePrice body is loaded
through alibabacloud-ecs20140526's response model, and the test fails on a field the model does not
know (Tea's from_map ignores unknown keys, so the body is compared with the model's to_map(),
recursively) or on a field the spider reads that the body lacks. A renamed-field copy must fail.
Error envelopes (HTTP 4xx) are not response models: they must carry Code and Message, the members
the SDK's own RPC error path (alibabacloud-tea-openapi, Client.do_rpcrequest) reads."""

import copy
import inspect
import json

import pytest
from alibabacloud_ecs20140526 import models as ecs

from spiders.layout import SNAPSHOT_DIR
from tests.helpers.responses import snapshot_entries

MODELS = {
    "DescribeInstanceTypes": ecs.DescribeInstanceTypesResponseBody,
    "DescribePrice": ecs.DescribePriceResponseBody,
}
# what alibaba_cn.py reads: "[]" walks every element of a list
READ = {
    "DescribeInstanceTypes": ["RequestId", "NextToken",
                              "InstanceTypes.InstanceType[].InstanceTypeId",
                              "InstanceTypes.InstanceType[].GPUAmount",
                              "InstanceTypes.InstanceType[].GPUSpec"],
    "DescribePrice": ["RequestId", "PriceInfo.Price.TradePrice", "PriceInfo.Price.Currency",
                      "PriceInfo.Price.OriginalPrice"],
}
ERROR_FIELDS = {"RequestId", "HostId", "Code", "Message", "Recommend"}


def unknown_fields(body, known, path="") -> list[str]:
    """Paths in `body` the model's round trip (`known`) lacks. A null in the body counts as
    unknown: to_map() drops it, so it cannot be told from a misspelt field."""
    if isinstance(body, dict):
        if not isinstance(known, dict):
            return [f"{path or '.'}: an object where the model has {type(known).__name__}"]
        return [p for k, v in body.items()
                for p in ([f"{path}.{k}"] if k not in known
                          else unknown_fields(v, known[k], f"{path}.{k}"))]
    if isinstance(body, list):
        if not isinstance(known, list) or len(known) != len(body):
            return [f"{path}: a list the model does not read as one"]
        return [p for i, (b, k) in enumerate(zip(body, known, strict=True))
                for p in unknown_fields(b, k, f"{path}[{i}]")]
    return []


def missing_fields(body, paths) -> list[str]:
    def walk(node, parts, where):
        if not parts:
            return [] if node is not None else [where]
        head, rest = parts[0], parts[1:]
        if head.endswith("[]"):
            items = node.get(head[:-2]) if isinstance(node, dict) else None
            if not isinstance(items, list):
                return [f"{where}.{head}"]
            return [m for i, item in enumerate(items)
                    for m in walk(item, rest, f"{where}.{head[:-2]}[{i}]")]
        return walk(node.get(head) if isinstance(node, dict) else None, rest, f"{where}.{head}")
    return [m for path in paths for m in walk(body, path.split("."), "")]


def shape_problems(action: str, body: dict) -> list[str]:
    model = MODELS[action]().from_map(copy.deepcopy(body))
    return ([f"unknown field {p}" for p in unknown_fields(body, model.to_map())]
            + [f"missing field {p}" for p in missing_fields(body, READ[action])])


def recorded() -> list[tuple[str, dict, dict]]:
    rows = []
    for entry in snapshot_entries("alibaba_cn"):
        if entry["method"] != "POST":
            continue
        action = entry["file"].split("_")[0]
        body = json.loads((SNAPSHOT_DIR / "alibaba_cn" / entry["file"]).read_text("utf-8"))
        rows.append((action, entry, body))
    return rows


@pytest.mark.parametrize(("action", "entry", "body"),
                         [r for r in recorded() if r[1]["status"] == 200],
                         ids=lambda v: v["file"] if isinstance(v, dict) and "file" in v else None)
def test_recorded_body_has_the_sdk_models_shape(action, entry, body):
    assert action in MODELS
    assert shape_problems(action, body) == []


@pytest.mark.parametrize(("action", "entry", "body"),
                         [r for r in recorded() if r[1]["status"] != 200],
                         ids=lambda v: v["file"] if isinstance(v, dict) and "file" in v else None)
def test_recorded_error_envelope(action, entry, body):
    assert entry["status"] == 400 and set(body) <= ERROR_FIELDS and body["Code"] and body["Message"]


def test_every_keyed_entry_is_checked():
    actions = [a for a, _, _ in recorded()]
    assert actions.count("DescribeInstanceTypes") == 2 and actions.count("DescribePrice") == 36


def a_body(action: str) -> dict:
    return next(b for a, e, b in recorded() if a == action and e["status"] == 200)


@pytest.mark.parametrize(("action", "rename", "problem"), [
    ("DescribePrice", ("PriceInfo", "Price", "TradePrice"),
     "unknown field .PriceInfo.Price.tradePrice"),
    ("DescribePrice", ("PriceInfo", "Price", "Currency"),
     "missing field .PriceInfo.Price.Currency"),
    ("DescribePrice", ("PriceInfo",), "unknown field .priceInfo"),
    ("DescribeInstanceTypes", ("InstanceTypes",), "unknown field .instanceTypes"),
    ("DescribeInstanceTypes", ("InstanceTypes", "InstanceType", 0, "GPUSpec"),
     "unknown field .InstanceTypes.InstanceType[0].gPUSpec"),
    ("DescribeInstanceTypes", ("InstanceTypes", "InstanceType", 0, "GPUAmount"),
     "missing field .InstanceTypes.InstanceType[0].GPUAmount"),
])
def test_a_renamed_field_fails_the_check(action, rename, problem):
    body = copy.deepcopy(a_body(action))
    *parents, field = rename
    node = body
    for key in parents:
        node = node[key]
    node[field[0].lower() + field[1:]] = node.pop(field)
    assert problem in shape_problems(action, body)


def test_an_added_field_fails_the_check():
    body = copy.deepcopy(a_body("DescribePrice"))
    body["PriceInfo"]["Price"]["PricePerGpu"] = 1.0
    assert shape_problems("DescribePrice", body) == ["unknown field .PriceInfo.Price.PricePerGpu"]


def test_a_null_field_is_flagged_rather_than_trusted():
    body = copy.deepcopy(a_body("DescribePrice"))
    body["PriceInfo"]["Price"]["DiscountPrice"] = None
    assert "unknown field .PriceInfo.Price.DiscountPrice" in shape_problems("DescribePrice", body)


def test_the_sdk_reads_the_error_envelopes_members():
    """The recorded 4xx bodies carry what the installed SDK's RPC client reads from an error
    answer before raising (Code, Message, RequestId); alibaba_cn reads Code and Message."""
    from alibabacloud_tea_openapi.client import Client

    source = inspect.getsource(Client.do_rpcrequest)
    read = {name for name in ERROR_FIELDS if f'err.get("{name}")' in source}
    assert read == {"Code", "Message", "RequestId"}
    errors = [body for _, entry, body in recorded() if entry["status"] != 200]
    assert errors and all(read <= set(body) for body in errors)
