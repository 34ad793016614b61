"""The crawl step's head start for the later steps (pipelines/warm_up.py): the ECB rates that
normalizing converts with are looked up on a thread while the crawl runs (the bundled file parsed
there only when fx_rate has not remembered them)."""

from datetime import UTC, datetime

import pytest

from pipelines.warm_up import warm_up_later_steps
from spiders.parsing import currencies


@pytest.fixture
def empty_memo(tmp_path, monkeypatch):
    monkeypatch.setattr(currencies, "FX_MEMO", tmp_path / "fx_rates.json")
    monkeypatch.setattr(currencies, "_unsaved", set())
    currencies._memo.cache_clear()
    currencies._converter.cache_clear()
    yield
    currencies._memo.cache_clear()


def _warm_up_rates() -> None:
    threads = warm_up_later_steps()
    assert all(t.daemon for t in threads)            # never keeps a finished run's process alive
    next(t for t in threads if t.name == "fx-rates-warm-up").join(timeout=120)


def test_todays_rates_are_looked_up_before_normalizing_asks_for_them(empty_memo):
    _warm_up_rates()
    assert currencies._converter.cache_info().currsize == 1     # parsed on the thread
    today = datetime.now(UTC).date()
    currencies.fx_rate("EUR", "USD", today)
    currencies.fx_rate("JPY", "CNY", today)
    assert currencies._converter.cache_info().misses == 1       # normalizing reuses it


def test_a_later_process_finds_them_remembered_and_parses_nothing(empty_memo):
    _warm_up_rates()
    currencies._save_memo()                                     # this process ends
    currencies._memo.cache_clear()
    currencies._converter.cache_clear()
    _warm_up_rates()
    currencies.fx_rate("USD", "CNY", datetime.now(UTC).date())
    assert currencies._converter.cache_info().currsize == 0


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


def test_the_chart_template_is_made_after_gx_on_its_thread():
    from pipelines.report import charts

    charts._template_json.cache_clear()
    threads = warm_up_later_steps()
    next(t for t in threads if t.name == "gx-warm-up").join(timeout=300)
    assert charts._template_json.cache_info().currsize == 1   # the report step reuses it
