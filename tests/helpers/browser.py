"""Debian's Chromium through Playwright, headless, with the crawler's flags: the browser the
report tests open pages in (GPUPRICES_CHROMIUM moves it)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Browser, sync_playwright

from spiders.settings import CHROMIUM_ARGS

CHROMIUM = os.environ.get("GPUPRICES_CHROMIUM", "/usr/bin/chromium")


@contextmanager
def chromium() -> Iterator[Browser]:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
