"""What tests share, one module per job; test modules import from here, never from each other
(conftest.py files hold fixtures only).

- observations: the observation factory `obs`, places as normalization writes them, and the SQL
  models built over hand-made rows (`build`, `build_only`, `insert`, `records`, `approx`)
- responses: recorded snapshot files as real Scrapy responses (`file_response`), a spider
  replayed over its snapshot in-process (`replay_spider`)
- spider_contract: the invariants every spider's offers meet (`check_contract`, and each
  source's paths, declared quarantines and known exceptions)
- crawl: one real `scrapy crawl` in a subprocess over the replay server (`run_crawl`)
- receivers: a JSON webhook and an SMTP mailbox on 127.0.0.1 (`Receiver`, `Mailbox`)
- runs: `gpuprices` in a subprocess, as a user runs it, and reading what it published; the runs
  a session shares among the tests that only read them (`shared_run`, `SharedRun.copy_to`)
- published: a small published database for the reading commands; `gpuprices` in-process
- alert_histories: price histories landed as the loader lands them, alert rules, the outbox
- advisor_offers: current offers as marts.latest_prices has them (`row`)
- report_market: a few days of a small market with hostile values, and the report built on it
- simulated: normalized offers for the simulator (`make_offer`), reading a simulated database
"""
