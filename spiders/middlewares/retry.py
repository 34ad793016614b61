"""Retries with backoff: honour a server's Retry-After, else back off exponentially.

Scrapy's RetryMiddleware retries at once. Here the retried request waits first (only that
request: the wait is an asyncio sleep), as long as the server asked in Retry-After (capped by
RETRY_AFTER_MAX), or RETRY_BACKOFF_BASE x 2^(n-1) seconds (capped by RETRY_BACKOFF_MAX). The
waits are summed in the stat `retry/backoff_seconds`.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from scrapy import Request
from scrapy.downloadermiddlewares.retry import RetryMiddleware
from scrapy.http import Response
from scrapy.utils.response import response_status_message


def retry_after_seconds(value: bytes | str | None, now: datetime | None = None) -> float | None:
    """`Retry-After: 120` or an HTTP date -> seconds to wait; None when absent or unreadable."""
    if not value:
        return None
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    text = text.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class BackoffRetryMiddleware(RetryMiddleware):
    def __init__(self, settings) -> None:
        super().__init__(settings)
        self.backoff_base = settings.getfloat("RETRY_BACKOFF_BASE", 1.0)
        self.backoff_max = settings.getfloat("RETRY_BACKOFF_MAX", 30.0)
        self.retry_after_max = settings.getfloat("RETRY_AFTER_MAX", 60.0)

    def _delay(self, retry: Request, response: Response | None) -> float:
        asked = retry_after_seconds(response.headers.get("Retry-After")) if response else None
        if asked is not None:
            return min(asked, self.retry_after_max)
        exponent = retry.meta.get("retry_times", 1) - 1
        return min(self.backoff_base * 2 ** exponent, self.backoff_max)

    async def _wait_then(self, retry: Request, response: Response | None) -> Request:
        delay = self._delay(retry, response)
        if delay > 0:
            self.crawler.stats.inc_value("retry/backoff_seconds", delay)
            await asyncio.sleep(delay)
        return retry

    async def process_response(self, request: Request, response: Response) -> Request | Response:
        if request.meta.get("dont_retry", False) or response.status not in self.retry_http_codes:
            return response
        retry = self._retry(request, response_status_message(response.status))
        return await self._wait_then(retry, response) if retry else response

    async def process_exception(self, request: Request, exception: Exception) -> Request | None:
        if (request.meta.get("dont_retry", False)
                or not isinstance(exception, self.exceptions_to_retry)):
            return None
        retry = self._retry(request, exception)
        return await self._wait_then(retry, None) if retry else None
