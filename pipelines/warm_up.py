"""What the run's later steps load once per process, loaded on daemon threads while the crawl step
waits for its Scrapy processes (the run's own process is otherwise idle then): Great
Expectations for the checks (pipelines/quality/gx_checks.py, about 2 s of CPU) and the ECB
reference rates that normalizing converts prices with (spiders/parsing/currencies.py: parsing the
bundled file, about 0.3 s). Only a head start: a warm-up that fails leaves the step that needs the
thing to load it, and report its own error."""

from __future__ import annotations

import contextlib
import threading
from datetime import UTC, datetime

from pipelines.quality.gx_checks import warm_up_in_background


def _load_rates() -> None:
    from spiders.parsing.currencies import fx_rate

    # normalizing meets any error of this again, and says it where it matters
    with contextlib.suppress(Exception):
        fx_rate("EUR", "USD", datetime.now(UTC).date())   # any pair loads the whole file


def warm_up_later_steps() -> list[threading.Thread]:
    rates = threading.Thread(target=_load_rates, name="fx-rates-warm-up", daemon=True)
    rates.start()
    return [warm_up_in_background(), rates]
