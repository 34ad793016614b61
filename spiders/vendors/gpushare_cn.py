"""恒源云 GPUSHARE (gpushare.com): the GPU machine market, a paged JSON API behind a user token.

Reads `GET https://api.gpushare.com/app/api/market/machine/list?models=-1&gpuName=&priceOrder=asc
&pn=<page>&ps=50` with `Authorization: Bearer <token>` and the store page as Origin / Referer, as
public monitor scripts do; pages while `pn * 50 < data.total`. An expired token is HTTP 401 (the
crawl fails naming it); an answer without `data.list` is an error body and fails loudly.
Each machine: `id`, `machineName`, `isOnline`, `gpuNum`, `gpuUsed`, `baseInfo{gpuName,
gpuToolkitVersion, gpuDriverVersion, netDownloadSpeed}`, `skuList[{skuName: "payg", price}]`, the
price in 元 per hour (shown as ¥{price}/h).

Evidence: three public monitor scripts in the code-search index (files 70935214704, 71083369768,
70936694952; their repository is not named by the index), described in
docs/sources.md (gpushare_cn). Still a guess (sources.md):
the price read as one card's, and the place (no region field is shown: offers are placed in
China only).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.base.json_api import checked_json
from spiders.items import RawOffer

LIST_URL = "https://api.gpushare.com/app/api/market/machine/list"
PAGE_SIZE = 50
STORE = "https://www.gpushare.com/store"
PRICE_UNIT = "元"
PAYG = "payg"
REGION_TEXT = "中国"   # the list names no place: country only


def list_url(page: int) -> str:
    query = {"models": -1, "gpuName": "", "priceOrder": "asc", "pn": page, "ps": PAGE_SIZE}
    return f"{LIST_URL}?{urlencode(query)}"


def checked_data(body: Any, url: str) -> dict:
    """`data` with its list and total; anything else is an error body or a changed API."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, dict) or not isinstance(data.get("list"), list) or \
            isinstance(data.get("total"), bool) or not isinstance(data.get("total"), int):
        said = ({k: body.get(k) for k in ("code", "msg", "message")}
                if isinstance(body, dict) else body)
        raise ValueError(f"gpushare_cn: no data.list and data.total in {url} (answer: {said!r})")
    return data


class GpushareCNSpider(JsonApiSpider):
    name = "gpushare_cn"
    vendor = "恒源云 GPUSHARE"
    vendor_kind = "marketplace"
    start_urls = [list_url(1)]
    offers_path = "data.list"
    key_envs = ("GPUSHARE_TOKEN",)
    api_key_required = True
    keyed_path = ("the market machine list, GET api.gpushare.com/app/api/market/machine/list "
                  "with the user token as Bearer (payg price in 元 per hour)")
    min_offers = 3

    async def start(self):
        yield self.page_request(1)

    def page_request(self, page: int):
        token = (self.credentials() or {}).get("GPUSHARE_TOKEN", "")
        return self.api_request(list_url(page), headers={
            "Authorization": f"Bearer {token}", "Origin": "https://www.gpushare.com",
            "Referer": STORE}, cb_kwargs={"page": page})

    def parse(self, response: Response, page: int = 1) -> Iterable[Any]:
        data = checked_data(checked_json(response), response.url)
        for machine in data["list"]:
            yield from self.parse_offer(machine, response)
        if page * PAGE_SIZE < data["total"] and data["list"]:
            yield self.page_request(page + 1)

    def parse_offer(self, machine: dict, response: Response, **_: Any) -> Iterable[RawOffer]:
        missing = [f for f in ("id", "isOnline", "gpuNum", "gpuUsed", "baseInfo", "skuList")
                   if f not in machine]
        if "baseInfo" in machine and "gpuName" not in (machine["baseInfo"] or {}):
            missing.append("baseInfo.gpuName")
        if missing:   # a renamed field is a changed API, not an offer without it
            raise ValueError(f"gpushare_cn: machine without {', '.join(missing)} in {response.url}")
        sku = next((s for s in machine["skuList"] or [] if s.get("skuName") == PAYG), None)
        if sku is None:   # not rented by the hour: no price to read
            if (crawler := getattr(self, "crawler", None)) is not None:
                crawler.stats.inc_value("gpushare_cn/no_payg_sku_skipped")
            return
        free = int(machine["gpuNum"] or 0) - int(machine["gpuUsed"] or 0)
        yield self.offer(
            response, sku=str(machine["id"]), gpu_text=machine["baseInfo"]["gpuName"],
            gpu_count=1,   # the price read as one card's (inferred: sources.md)
            region_text=REGION_TEXT, offer_kind="on_demand", billing_period="hour",
            available=machine["isOnline"] is True and free > 0, **sku_price(sku.get("price")),
            vendor_data={"machineName": machine.get("machineName"), "free_gpus": free,
                         "gpuNum": machine["gpuNum"], "isOnline": machine["isOnline"],
                         **{k: machine["baseInfo"].get(k) for k in (
                             "gpuToolkitVersion", "gpuDriverVersion")}},
        )


def sku_price(raw: object) -> dict[str, object]:
    """The payg sku's price as served, in 元 per hour, and the field as served beside it; a null
    or unreadable value goes on as served and normalization quarantines it with it."""
    typed = {"price_amount": raw} if isinstance(raw, (int, float, str)) and \
        not isinstance(raw, bool) else {}
    return {**typed, "price_unit": PRICE_UNIT, "currency": "CNY"}
