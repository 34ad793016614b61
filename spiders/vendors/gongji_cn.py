"""共绩算力 (suanli.cn / gongjiyun.com): the GPU device list of its Open API, a signed JSON API.

Reads `GET https://openapi.suanli.cn/api/deployment/resource/search?task_type=Deployment&
device_type=GpuDevice`, signed as the platform's RSA mode asks: headers `token`, `timestamp`
(milliseconds), `version` 1.0.0 and `sign_str`, the base64 RSA-SHA256 (PKCS#1 v1.5) signature of
"<path with query>\\n<version>\\n<timestamp>\\n<token>\\n{}" with the user's private key.
The answer: envelope `code` ("0000" or "200" is success), `data.results[]` per device
(`device_name`, `gpu_name`, `gpu_count`, `gpu_memory` and `memory` in MB, `cpu_cores`,
`disk_size`, `disk_type`) with `regions[]` (`region`, `region_name` such as 河北一区 / 新疆一区,
`price` and `discount_price` in 微元 per second for the whole device, `inventory`). One offer per
device and region, its list `price`; `discount_price` stays in vendor_data.

Evidence: the Open API docs (Apifox share 6aa360d3-d8f2-471e-b841-3a35c33a7b7c, synced into a
public repository: the request, headers, every response field and an example answer) and a
public client, shaozheng0503/gongjiskills @ 2ff6756 (`gongjiskills/auth.py`: the signing string
and headers, base URL https://openapi.suanli.cn; `gongjiskills/cli.py`: "API 价格单位是微元/秒",
memory in MB; `gongjiskills/client.py`: the query). Key-only (GONGJI_TOKEN and the PEM text of
the RSA private key in GONGJI_PRIVATE_KEY), skipped without them. docs/sources.md (gongji_cn).
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding
from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.items import RawOffer

BASE_URL = "https://openapi.suanli.cn"
SEARCH_PATH = "/api/deployment/resource/search"
QUERY = {"task_type": "Deployment", "device_type": "GpuDevice"}
SIGNED_PATH = f"{SEARCH_PATH}?{urlencode(QUERY)}"
API_VERSION = "1.0.0"
EMPTY_BODY = "{}"                 # what a GET signs as its body (gongjiskills auth.py)
OK_CODES = ("0000", "200")
PRICE_UNIT = "微元/秒"             # price and discount_price (gongjiskills cli.py _fmt_price)
MEMORY_UNIT = "MB"                # gpu_memory and memory (gongjiskills cli.py _fmt_mem)


def signing_string(path: str, timestamp_ms: int, token: str, body: str = EMPTY_BODY) -> str:
    """The text the platform verifies: path (with its query), version, timestamp, token, body."""
    return f"{path}\n{API_VERSION}\n{timestamp_ms}\n{token}\n{body}"


def signed_headers(token: str, private_key_pem: str, timestamp_ms: int) -> dict[str, str]:
    """The RSA-mode headers of a GET of the device list."""
    key = serialization.load_pem_private_key(private_key_pem.encode(), password=None)
    signature = key.sign(signing_string(SIGNED_PATH, timestamp_ms, token).encode(),
                         padding.PKCS1v15(), hashes.SHA256())
    return {"token": token, "timestamp": str(timestamp_ms), "version": API_VERSION,
            "sign_str": base64.b64encode(signature).decode()}


def results(body: Any, url: str) -> list:
    """`data.results` of a successful answer; an error envelope fails loudly with its message."""
    if not isinstance(body, dict) or str(body.get("code")) not in OK_CODES:
        said = {k: body.get(k) for k in ("code", "message")} if isinstance(body, dict) else body
        raise ValueError(f"gongji_cn: API error in {url} (answer: {said!r})")
    found = (body.get("data") or {}).get("results")
    if not isinstance(found, list):
        raise ValueError(f"gongji_cn: no data.results list in {url}")
    return found


class GongjiCNSpider(JsonApiSpider):
    name = "gongji_cn"
    vendor = "共绩算力"
    vendor_kind = "marketplace"
    start_urls = [f"{BASE_URL}{SIGNED_PATH}"]
    offers_path = "data.results"
    key_envs = ("GONGJI_TOKEN", "GONGJI_PRIVATE_KEY")
    api_key_required = True
    keyed_path = ("the Open API device list, GET openapi.suanli.cn/api/deployment/resource/search "
                  "signed in RSA mode (price in 微元 per second per device and region)")
    min_offers = 2

    async def start(self):
        keys = self.credentials() or {}
        headers = signed_headers(keys.get("GONGJI_TOKEN", ""), keys.get("GONGJI_PRIVATE_KEY", ""),
                                 int(time.time() * 1000))
        yield self.api_request(self.start_urls[0], headers=headers)

    def offers(self, body: Any, response: Response) -> list:
        return results(body, response.url)

    def parse_offer(self, device: dict, response: Response, **_: Any) -> Iterable[RawOffer]:
        missing = [f for f in ("device_name", "gpu_name", "gpu_count", "regions")
                   if f not in device]
        if missing:   # a renamed field is a changed API, not an offer without it
            raise ValueError(f"gongji_cn: device without {', '.join(missing)} in {response.url}")
        for place in device["regions"]:
            yield self.offer(
                response, sku=device["device_name"], gpu_text=device["gpu_name"],
                gpu_count=device["gpu_count"], region_text=place.get("region_name"),
                offer_kind="on_demand", billing_period="hour",
                available=int(place.get("inventory") or 0) > 0,
                **served_price(place.get("price")), **machine_fields(device),
                vendor_data={"region": place.get("region"),
                             "discount_price": place.get("discount_price"),
                             "inventory": place.get("inventory"),
                             "disk_size": device.get("disk_size"),
                             "disk_type": device.get("disk_type")},
            )


def served_price(raw: object) -> dict[str, object]:
    """The device's price as served, in 微元 per second (normalization converts it); a null or
    unreadable value goes on as served and is quarantined with it."""
    typed = {"price_amount": raw} if isinstance(raw, (int, float, str)) and \
        not isinstance(raw, bool) else {}
    return {**typed, "price_unit": PRICE_UNIT, "currency": "CNY"}


def machine_fields(device: dict) -> dict[str, object]:
    """vCPUs and memory of the whole device as served (memory in MB)."""
    said: dict[str, object] = {}
    if device.get("cpu_cores"):
        said["vcpus"] = device["cpu_cores"]
    if device.get("memory"):
        said.update(memory=device["memory"], memory_unit=MEMORY_UNIT)
    return said
