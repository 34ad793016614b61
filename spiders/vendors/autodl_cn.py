"""AutoDL (autodl.com): the GPU machine market, a paged JSON API behind the user's login token.

Reads `POST https://api.autodl.com/api/v1/user/machine/list` with the login token, bare, in
`Authorization` and a JSON body `{charge_type: "payg", page_size, gpu_idle_num, region_sign_list,
gpu_type_name, page_index}`; pages until `page_index` reaches `data.max_page`. The envelope is
`{code, msg, data: {list, max_page, ...}}`; a `code` other than "Success"/"OK" is an error sent
with HTTP 200 (e.g. "AuthorizeFailed" for an expired token) and fails the crawl with its `msg`.
Each machine: `machine_id`, `machine_alias`, `region_name` (西北B区), `region_sign` (west-B),
`gpu_name`, `gpu_idle_num`, `gpu_order_num`, `cpu_per_gpu`, `mem_per_gpu` (bytes), `payg` (sold
pay-as-you-go), `payg_price` (厘 = 1/1000 元 per card-hour).

Evidence: mfznttkx/autodl-gpuhunter `gpuhunter/autodl_client.py` @
f5969e297ae92b6c613f40a49d67ad2a8abab54b (`list_machine`, `list_request`, `request`,
`get_available_machines`); xiaoti12/autodl_bot `models/autodl.go` @
080205c0b9eacde35052a39f5a116e36d4f0e944 and `client/autodl.go` @
06668dc1e5b0ad3c356534769217c31e1b733dd8 (envelope, "AuthorizeFailed", bare token); the 厘 unit:
docs/sources.md (autodl_cn: a public 2024-11 capture and a public client). No keyless path
is cited (the homepage `originalPrice` table of a 2026-10-04 note names no URL), so the source
needs AUTODL_TOKEN and is skipped without it.

Machine specs: `cpu_per_gpu` vCPUs and `mem_per_gpu` memory come with each rented card.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.base.json_api import checked_json
from spiders.items import RawOffer

MACHINE_LIST_URL = "https://api.autodl.com/api/v1/user/machine/list"
PAGE_SIZE = 20          # the public client's page size
OK_CODES = ("Success", "OK")
PRICE_UNIT = "厘"        # payg_price: 1/1000 元 per card-hour


def machine_list_body(page_index: int) -> dict[str, Any]:
    """The market query: pay-as-you-go machines of every region and card, idle or not.
    Empty filter lists and gpu_idle_num 0 asking for all is unverified (sources.md)."""
    return {"charge_type": "payg", "page_size": PAGE_SIZE, "gpu_idle_num": 0,
            "region_sign_list": [], "gpu_type_name": [], "page_index": page_index}


def envelope_data(body: Any, url: str) -> dict:
    """`data` of a successful answer; an error envelope (HTTP 200) fails loudly with its msg."""
    if not isinstance(body, dict) or "code" not in body:
        raise ValueError(f"autodl_cn: no envelope code in {url}")
    if body["code"] not in OK_CODES:
        raise ValueError(f"autodl_cn: API error {body['code']!r}: {body.get('msg')!r} ({url})")
    data = body.get("data")
    if not isinstance(data, dict):
        raise ValueError(f"autodl_cn: no data object in {url}")
    return data


class AutodlCNSpider(JsonApiSpider):
    name = "autodl_cn"
    vendor = "AutoDL"
    vendor_kind = "marketplace"
    start_urls = [MACHINE_LIST_URL]
    offers_path = "data.list"
    key_envs = ("AUTODL_TOKEN",)
    api_key_required = True
    keyed_path = ("the market machine list, POST api.autodl.com/api/v1/user/machine/list "
                  "with the login token (payg_price in 厘 per card-hour)")
    # payg_price is one card's (docs/sources.md, AutoDL: 2720 -> 2.72 元/卡/时)
    price_per_card = True
    min_offers = 10

    async def start(self):
        yield self.page_request(1)

    def page_request(self, page_index: int):
        token = (self.credentials() or {}).get("AUTODL_TOKEN", "")
        # the clients send the token bare: a "Bearer " prefix is refused
        # (xiaoti12/autodl_bot client/autodl.go @ 06668dc1)
        return self.api_request(MACHINE_LIST_URL, machine_list_body(page_index),
                                headers={"Authorization": token},
                                cb_kwargs={"page_index": page_index})

    def parse(self, response: Response, page_index: int = 1) -> Iterable[Any]:
        body = checked_json(response)
        data = envelope_data(body, response.url)
        for machine in self.list_at(body, self.offers_path, response):
            yield from self.parse_offer(machine, response)
        max_page = data.get("max_page")
        if isinstance(max_page, bool) or not isinstance(max_page, int):
            raise ValueError(f"autodl_cn: no integer data.max_page in {response.url}")
        if page_index < max_page:
            yield self.page_request(page_index + 1)

    def parse_offer(self, machine: dict, response: Response, **_: Any) -> Iterable[RawOffer]:
        missing = [f for f in ("machine_id", "region_name", "gpu_name", "gpu_idle_num",
                               "payg", "payg_price") if f not in machine]
        if missing:   # a renamed field is a changed API, not an offer without it
            raise ValueError(f"autodl_cn: machine without {', '.join(missing)} in {response.url}")
        if machine["payg"] is not True:   # not rented pay-as-you-go: no hourly price to read
            if (crawler := getattr(self, "crawler", None)) is not None:
                crawler.stats.inc_value("autodl_cn/not_payg_skipped")
            return
        yield self.offer(
            response, sku=str(machine["machine_id"]), gpu_text=machine["gpu_name"], gpu_count=1,
            region_text=machine["region_name"], offer_kind="on_demand", billing_period="hour",
            available=_rentable(machine), **served_price(machine["payg_price"]),
            **machine_fields(machine),
            vendor_data={k: machine.get(k) for k in (
                "machine_alias", "region_sign", "gpu_idle_num", "gpu_order_num",
                "highest_cuda_version")},
        )


def _rentable(machine: dict) -> bool:
    """A card can be rented now when the machine has one idle and orderable (the client's test)."""
    return int(machine.get("gpu_idle_num") or 0) > 0 and \
        int(machine.get("gpu_order_num", machine.get("gpu_idle_num")) or 0) > 0


def served_price(raw: object) -> dict[str, object]:
    """payg_price as served, in 厘 (normalization converts it to 元); the field as served beside
    it. A null or unreadable value goes on as served and is quarantined with it."""
    typed = {"price_amount": raw} if isinstance(raw, (int, float, str)) and \
        not isinstance(raw, bool) else {}
    return {**typed, "price_unit": PRICE_UNIT, "currency": "CNY"}


def machine_fields(machine: dict) -> dict[str, object]:
    """vcpus and memory of one rented card as served: cpu_per_gpu, mem_per_gpu (bytes)."""
    said: dict[str, object] = {}
    if machine.get("cpu_per_gpu"):
        said["vcpus"] = machine["cpu_per_gpu"]
    if machine.get("mem_per_gpu"):
        said.update(memory=machine["mem_per_gpu"], memory_unit="B")
    return said
