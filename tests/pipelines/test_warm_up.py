"""The crawl step's head start for the later steps (pipelines/warm_up.py): the ECB rates that
normalizing converts with are parsed on a thread while the crawl runs, once per process."""

from pipelines.warm_up import warm_up_later_steps
from spiders.parsing import currencies


def test_the_rates_are_loaded_before_normalizing_asks_for_them():
    currencies._converter.cache_clear()
    threads = warm_up_later_steps()
    assert all(t.daemon for t in threads)            # never keeps a finished run's process alive
    rates = next(t for t in threads if t.name == "fx-rates-warm-up")
    rates.join(timeout=120)
    assert currencies._converter.cache_info().currsize == 1
    currencies.fx_rate("EUR", "USD", currencies._converter().bounds["USD"].last_date)
    assert currencies._converter.cache_info().misses == 1   # normalizing reuses it
