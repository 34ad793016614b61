"""The base of every gpuprices spider: identity attributes, offer construction, Playwright opt-in.

Attributes a vendor spider sets:
  name          source slug (= module name = snapshot folder)
  start_urls    the pages or API URLs a crawl starts from (`start()` requests each one)
  vendor        display name;  vendor_kind: "hyperscaler" | "gpu_cloud" | "marketplace" | "idc"
  min_offers    the crawl fails its monitor below this many offers (default 1)
  render_js     True for JavaScript-rendered pages: requests go through scrapy-playwright and
                Debian's Chromium; replay then happens inside the browser, XHR included.
  wait_for      CSS selector to wait for on a rendered page (render_js only)
  api_key_env   environment variable holding the vendor's API key, for sources with a keyed API
                path; `self.api_key()` returns it or None (then use the keyless public page).
                Keys are never read from files or settings, and never logged.
  key_envs      every variable a keyed path needs, for a signed API with more than one
                (("TENCENTCLOUD_SECRET_ID", "TENCENTCLOUD_SECRET_KEY")); `self.credentials()`
                returns {name: value} when all are set, else None. api_key_env is its one-name form.
  public_path   what the source reads without keys ("the public workbench price endpoint ...");
  keyed_path    what it reads with them ("the signed CVM API through tencentcloud-sdk-python-cvm").
                `path_note()` says which one a crawl takes now, and which keys it lacks: shown by
                `gpuprices sources` and the run summary.
  api_key_required  True when there is no keyless path: without the key the source is skipped
                with a message naming the variable, and never counted as a failure.
  max_concurrency   requests in flight at once for this source (default 4)
  range_end     "low" | "high": which end of a price range ("20-30元/时") the source lists as
                its price. None (default): a range is kept whole and quarantined, never one end.
  price_per_card    True when the source says once (a note, a header) that every price is one
                card's; prices that say so themselves ("元/卡/月", "per GPU") need nothing.
  reaches_via   how the source reaches its offers: "direct" (default: the vendor's own prices),
                "aggregator" (a marketplace API listing other clouds' offers: each offer names
                its own vendor, `self.offer(response, vendor=..., vendor_kind=...)`),
                "second_path" (a second read of a direct source's offers, e.g. a documentation
                table; set `second_path_of` to that source) or "archive". A non-direct offer is
                counted once (dbt_like_sql/staging/stg_observations.sql, docs/signals.md).
  second_path_of  the direct source a "second_path" source reads again ("tencent_cn").
  effective_at  ISO date the source's page states its prices took effect ("Effective Date:
                2025-09-01"): every offer carries it as `effective_at`, and normalization uses it
                as the observation time instead of the crawl's (a spider reading several dated
                pages passes `effective_at=` to offer() per page instead).
  is_template   True for a placeholder source with no real operator behind it (modeled page,
                illustrative prices): it still crawls its snapshot, but signals, claims and the
                index must leave it out.
  local_time_zone  the zone of the vendor's billing calendar (its days, its month ends). None
                (default): Beijing time for a Chinese vendor's source (named *_cn), else UTC
                (spiders/parsing/calendars.py); an offer in China follows Beijing time anyway.
  region_key    the source's rows in spiders/parsing/regions.csv (its vendor column). None
                (default): the source's own name, or for a second path its direct source's.
                An offer carries local_time_zone and region_key when the spider declares a value
                its name does not imply; other sources' items stay as they were.
Every request goes through `request()`, which renders it in Chromium when render_js is set.
Every offer goes through `offer()`, which adds the provenance and what the source declares once
(range_end, price_per_card, effective_at, ...). It reads nothing out of the texts: the count a
card text writes ("A100 80G ×8"), a price text's range, original price, per-card marker and tax
flag are read by normalization, once (spiders/items.py says which fields are raw, which typed).
"""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime
from typing import Any, ClassVar

import scrapy
from scrapy.http import Response
from scrapy_playwright.page import PageMethod

from spiders.base.browser import PageRoute, render_failed
from spiders.extensions.monitors import SKIPPED_STAT
from spiders.items import RawOffer
from spiders.middlewares.raw_archive import answer_price_basis, captured_at
from spiders.middlewares.replay import replay_base_url
from spiders.parsing.calendars import source_time_zone
from spiders.parsing.prices import RANGE_ENDS
from spiders.settings import PLAYWRIGHT_SETTINGS, RENDER_WAIT_TIMEOUT
from spiders.source_manifest import keyed_path_ready, missing_key_reason, path_note


class GpuPriceSpider(scrapy.Spider):
    vendor: ClassVar[str]
    vendor_kind: ClassVar[str]
    min_offers: ClassVar[int] = 1
    render_js: ClassVar[bool] = False
    wait_for: ClassVar[str | None] = None
    api_key_env: ClassVar[str | None] = None
    key_envs: ClassVar[tuple[str, ...]] = ()
    public_path: ClassVar[str | None] = None
    keyed_path: ClassVar[str | None] = None
    api_key_required: ClassVar[bool] = False
    max_concurrency: ClassVar[int] = 4
    fetch_style: ClassVar[str] = "HTTP"   # shown by `gpuprices sources`
    range_end: ClassVar[str | None] = None
    price_per_card: ClassVar[bool] = False
    reaches_via: ClassVar[str] = "direct"
    second_path_of: ClassVar[str | None] = None
    effective_at: ClassVar[str | None] = None
    is_template: ClassVar[bool] = False
    local_time_zone: ClassVar[str | None] = None
    region_key: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # a source that names the direct source it reads again is a second path, unless it says
        # otherwise: `second_path_of = "tencent_cn"` is the whole declaration
        if cls.second_path_of and "reaches_via" not in cls.__dict__:
            cls.reaches_via = "second_path"
        # a template's offers reach nobody: they land (quarantine and checks see them), but
        # `counted` is false for them in every signal, claim and index
        if cls.is_template and "reaches_via" not in cls.__dict__:
            cls.reaches_via = "template"

    def __init__(self, *args: Any, crawl_id: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.crawl_id = crawl_id
        self._page_route: PageRoute | None = None
        if self.range_end not in (None, *RANGE_ENDS):   # a configuration typo must be loud
            raise ValueError(f"{self.name}: range_end must be one of {RANGE_ENDS}, "
                             f"not {self.range_end!r}")

    @classmethod
    def update_settings(cls, settings) -> None:
        super().update_settings(settings)
        settings.set("CONCURRENT_REQUESTS", cls.max_concurrency, priority="spider")
        if cls.render_js:
            settings.setdict(PLAYWRIGHT_SETTINGS, priority="spider")

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) or None if self.api_key_env else None

    @classmethod
    def key_names(cls) -> tuple[str, ...]:
        """Every environment variable the keyed path needs (none: the source has no keyed path)."""
        return cls.key_envs or ((cls.api_key_env,) if cls.api_key_env else ())

    @classmethod
    def missing_keys(cls) -> list[str]:
        return [name for name in cls.key_names() if not os.environ.get(name)]

    @classmethod
    def keyed(cls) -> bool:
        """True when this crawl takes the keyed path: the source has one and every key is set."""
        return keyed_path_ready(cls.key_names())

    def credentials(self) -> dict[str, str] | None:
        """{variable: value} of every key when all are set, else None. Never log the values."""
        return {name: os.environ[name] for name in self.key_names()} if self.keyed() else None

    @classmethod
    def path_note(cls) -> str:
        """The path a crawl takes now, and the keys it lacks, in one line:
        "TENCENTCLOUD_SECRET_ID, TENCENTCLOUD_SECRET_KEY not set: public path (...)"."""
        return path_note(cls.public_path or cls.describe_fetch(), cls.keyed_path,
                         cls.key_names(), cls.api_key_required)

    @classmethod
    def time_zone(cls) -> str:
        """The zone of the source's billing calendar ('Asia/Shanghai', 'UTC')."""
        return source_time_zone(cls.name, cls.local_time_zone)

    @classmethod
    def regions_key(cls) -> str:
        """The source's rows in regions.csv: its declared region_key, a second path's direct
        source, else its own name."""
        return cls.region_key or cls.second_path_of or cls.name

    @classmethod
    def describe_fetch(cls) -> str:
        return f"Chromium + {cls.fetch_style}" if cls.render_js else cls.fetch_style

    @classmethod
    def missing_key(cls) -> str | None:
        """Why this source cannot run now (its required key is not set), or None."""
        return missing_key_reason(cls.name, cls.api_key_required, cls.key_names())

    async def start(self):
        for url in self.start_urls:
            yield self.request(url)

    def request(self, url: str, callback=None, **kwargs: Any) -> scrapy.Request:
        """A request to the vendor's real URL; rendered in Chromium when the spider needs JS."""
        meta = kwargs.pop("meta", {})
        if self.render_js:
            meta["playwright"] = True
            if self.wait_for:
                meta["playwright_page_methods"] = [
                    PageMethod("wait_for_selector", self.wait_for,
                               timeout=self._render_wait_seconds() * 1000)]
            meta["playwright_page_init_callback"] = self._init_page
            kwargs.setdefault("errback", self._render_failed)
        return scrapy.Request(url, callback=callback or self.parse, meta=meta, **kwargs)

    def _render_wait_seconds(self) -> float:
        settings = getattr(self, "settings", None)   # None: a spider made without a crawler
        return (settings.getfloat("RENDER_WAIT_TIMEOUT", RENDER_WAIT_TIMEOUT) if settings
                else RENDER_WAIT_TIMEOUT)

    async def _init_page(self, page, request) -> None:
        # one route per spider: it answers (replay) or watches (live) every request of the page
        if self._page_route is None:
            self._page_route = PageRoute(self, replay_base_url(self.settings))
        await self._page_route.install(page, request)

    def _render_failed(self, failure) -> None:
        render_failed(self, failure)

    def skip(self, reason: str) -> None:
        """Count a row of the answer left out on purpose, by why ("unitOfMeasure '1 Minute', not
        '1 Hour'"): a crawl that ends with too few offers names these reasons in its verdict, so
        a changed unit or label that drops every row says so (spiders/extensions/monitors.py)."""
        self.crawler.stats.inc_value(f"{SKIPPED_STAT}{reason}")

    def offer(self, response: Response, *, vendor: str | None = None,
              vendor_kind: str | None = None, **fields: Any) -> RawOffer:
        """A RawOffer with the provenance fields filled in from the response. Only a source
        that does not read its vendor directly (an aggregator) names each offer's vendor."""
        if (vendor or vendor_kind) and self.reaches_via == "direct":
            raise ValueError(f"{self.name}: a direct source's offers are its own vendor's")
        observed = captured_at(response) or datetime.now(UTC).isoformat(timespec="seconds")
        basis, as_of = answer_price_basis(response, observed)
        return RawOffer(
            source=self.name, vendor=vendor or self.vendor,
            vendor_kind=vendor_kind or self.vendor_kind,
            url=response.url, raw_ref=hashlib.sha256(response.body).hexdigest(),
            observed_at=observed, price_basis=basis, prices_as_of=as_of,
            **self.written_fields(fields),
        )

    def written_fields(self, fields: dict[str, Any]) -> dict[str, Any]:
        """`fields` plus what the source declares once for all its offers; a value the spider
        set wins. Nothing is read out of the texts here: normalization reads each text once."""
        fields = dict(fields)
        if self.range_end:
            fields.setdefault("range_end", self.range_end)
        if self.price_per_card:
            fields.setdefault("price_per_card", True)
        if self.effective_at:
            fields.setdefault("effective_at", self.effective_at)
        if self.reaches_via != "direct":   # a direct source's items stay as they were
            fields.setdefault("reaches_via", self.reaches_via)
        # what the source's name does not say (normalization reads the name's default otherwise)
        if self.time_zone() != source_time_zone(self.name):
            fields.setdefault("local_time_zone", self.time_zone())
        if self.regions_key() != self.name:
            fields.setdefault("region_key", self.regions_key())
        return fields
