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


def test_the_block_ends_when_the_warm_ups_have(monkeypatch):
    # the step's own thread must not import beside them (a half-made module, issue 45)
    import threading

    from pipelines import warm_up

    started: list[threading.Thread] = []

    def slow_ones() -> list[threading.Thread]:
        started.extend(threading.Thread(target=threading.Event().wait, args=(0.3,))
                       for _ in range(2))
        for thread in started:
            thread.start()
        return started

    monkeypatch.setattr(warm_up, "warm_up_later_steps", slow_ones)
    with warm_up.warming_up():
        assert any(t.is_alive() for t in started)
    assert not any(t.is_alive() for t in started)
