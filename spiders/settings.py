"""Scrapy settings shared by every gpuprices spider.

Environment variables (all optional):
  GPUPRICES_REPLAY_URL   base URL of the snapshot replay server; when set, every request is served
                         from recorded snapshots on loopback instead of the vendor's site.
  GPUPRICES_DATA_DIR     where data/raw/ (the raw archive) lives; default: <repo>/data
  GPUPRICES_USER_AGENT   override the User-Agent (keep a contact URL in it).
  GPUPRICES_CHROMIUM     path of the Chromium binary (default /usr/bin/chromium).
"""

import os

from scrapy.settings import default_settings

BOT_NAME = "gpuprices"
SPIDER_MODULES = ["spiders.vendors"]
NEWSPIDER_MODULE = "spiders.vendors"

# Honest identification: who we are and where to complain.
USER_AGENT = os.environ.get(
    "GPUPRICES_USER_AGENT",
    "gpuprices/0.1 (+https://github.com/gpuprices/gpuprices; GPU rental price tracker)",
)
ROBOTSTXT_OBEY = True

# Polite by default; AutoThrottle adapts to the server's latency. A replayed crawl asks the
# loopback replay server, not the vendor: it starts without the delay (AutoThrottle still adapts,
# each vendor host still has its own download slot, spiders/middlewares/replay.py).
CONCURRENT_REQUESTS = 8
CONCURRENT_REQUESTS_PER_DOMAIN = 2
AUTOTHROTTLE_ENABLED = True
LIVE_AUTOTHROTTLE_START_DELAY = 0.5
AUTOTHROTTLE_START_DELAY = 0.0 if os.environ.get("GPUPRICES_REPLAY_URL") else \
    LIVE_AUTOTHROTTLE_START_DELAY
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 2.0
DOWNLOAD_TIMEOUT = 30
# A price page or API page is kilobytes to a few MB. Scrapy's default limit (1 GiB) would let a
# broken or hostile server fill memory; above 16 MiB a download is refused (from Content-Length
# before the body, else as soon as that much has arrived) and the crawl fails. A source that
# really fetches big files (AWS's bulk price-list CSVs) raises its own limit in custom_settings.
DOWNLOAD_MAXSIZE = 16 * 1024 * 1024
DOWNLOAD_WARNSIZE = 4 * 1024 * 1024
RETRY_ENABLED = True
RETRY_TIMES = 2
RETRY_HTTP_CODES = [500, 502, 503, 504, 522, 524, 408, 429]
RETRY_BACKOFF_BASE = 1.0   # seconds before the first retry when the server gives no Retry-After
RETRY_BACKOFF_MAX = 30.0
RETRY_AFTER_MAX = 60.0     # a longer Retry-After is cut to this (the crawl has a deadline)
# A spider that keeps failing stops instead of hammering the site.
CLOSESPIDER_ERRORCOUNT = 20
CLOSESPIDER_TIMEOUT = 600

DOWNLOADER_MIDDLEWARES = {
    # Replay runs right after robots.txt (100), so robots.txt is asked of the vendor's URL (and
    # answered by the replay server); the archive sits closest to the downloader, recording
    # every body fetched under its live URL.
    "spiders.middlewares.replay.ReplayMiddleware": 110,
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
    "spiders.middlewares.retry.BackoffRetryMiddleware": 550,
    "spiders.middlewares.replay.RestoreLiveUrlMiddleware": 900,
    "spiders.middlewares.raw_archive.RawArchiveMiddleware": 950,
}
EXTENSIONS = {
    "spiders.extensions.monitors.OfferMonitor": 500,
}
# Scrapy's own extensions less the two we turn off (below) and never use. Dropped from the base,
# not set to None in EXTENSIONS: Scrapy imports every EXTENSIONS key, None ones too, and their
# imports cost each crawl process CPU at start-up (remote control pulls in aiohttp, ~0.1 s).
EXTENSIONS_BASE = {
    name: order for name, order in default_settings.EXTENSIONS_BASE.items()
    if name not in ("scrapy.extensions.remote_control.RemoteControl",
                    "scrapy.extensions.telnet.TelnetConsole")
}

FEED_EXPORT_ENCODING = "utf-8"
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False  # Scrapy 2.19's remote-control server: not wanted here
LOG_LEVEL = "INFO"
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"

CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--no-first-run", "--disable-quic", "--no-default-browser-check",
]

# How long a rendered page may take to show what a spider waits for (its `wait_for` selector,
# seconds): a page whose data request failed never shows it, and the crawl fails on this timeout.
RENDER_WAIT_TIMEOUT = 20.0

# Playwright is a setting, not a code path: a JS-rendered source merges this into custom_settings.
PLAYWRIGHT_SETTINGS = {
    "DOWNLOAD_HANDLERS": {
        "http": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler",
        "https": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler",
    },
    "PLAYWRIGHT_BROWSER_TYPE": "chromium",
    "PLAYWRIGHT_LAUNCH_OPTIONS": {
        "executable_path": os.environ.get("GPUPRICES_CHROMIUM", "/usr/bin/chromium"),
        "headless": True,
        "args": CHROMIUM_ARGS,
        "timeout": 30_000,
    },
    "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": 30_000,
    "PLAYWRIGHT_MAX_CONTEXTS": 1,
    "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": 4,
}
