"""What the run's later steps load once per process, loaded on threads while the crawl step waits
for its Scrapy processes (the run's own process is otherwise idle then): Great Expectations for
the checks (pipelines/quality/gx_validate.py, about 3 s of CPU; in a process of its own under
`gpuprices run`, gx_worker.py), then, on the same thread, the report's chart template
(pipelines/report/charts.py: read from its memo, or made in about 0.5 s), and the ECB rates that
normalizing converts prices with (spiders/parsing/currencies.py: today's rates, remembered between
processes; parsing the bundled file, about 0.3 s, only when they are not). The step waits for
them before it goes on: two threads importing the same packages at once can meet a module the
other left half made ("partially initialized module 'sqlalchemy.orm.exc'": GX and Dagster's event
log both import SQLAlchemy), and one process runs one thread's Python at a time anyway. Only a
head start: a warm-up that fails leaves the step that needs the thing to load it, and report its
own error."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from datetime import UTC, datetime

from pipelines.quality import gx_validate, gx_worker


def _load_rates() -> None:
    """Today's rate of every known currency into CNY and USD, as normalizing asks for them:
    fx_rate remembers its lookups between processes (spiders/parsing/__pycache__/fx_rates.json),
    so only the first run of a day parses the bundled file, here rather than in normalizing."""
    from spiders.parsing.currencies import KNOWN_CURRENCIES, fx_rate

    today = datetime.now(UTC).date()
    for currency in sorted(KNOWN_CURRENCIES):
        for to in ("CNY", "USD"):
            # normalizing meets any error of this again, and says it where it matters
            with contextlib.suppress(Exception):
                fx_rate(currency, to, today)


def _load_checks_then_charts() -> None:
    """GX, then the chart template: one after the other (they share imports, e.g. numpy). GX not
    here when a GX worker process validates for this one (gx_worker.py: `gpuprices run`)."""
    if not gx_worker.running():
        gx_validate.warm_up()
    with contextlib.suppress(Exception):   # the report step meets any error again, and says it
        from pipelines.report.charts import warm_up as charts_warm_up

        charts_warm_up()


def warm_up_later_steps() -> list[threading.Thread]:
    threads = [threading.Thread(target=_load_checks_then_charts, name="gx-warm-up", daemon=True),
               threading.Thread(target=_load_rates, name="fx-rates-warm-up", daemon=True)]
    for thread in threads:
        thread.start()
    return threads


@contextlib.contextmanager
def warming_up() -> Iterator[None]:
    """The warm-ups run during the block (a wait), and the block's end waits for them."""
    threads = warm_up_later_steps()
    try:
        yield
    finally:
        for thread in threads:
            thread.join()
