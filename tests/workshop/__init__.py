"""The workshop: what measures and probes the product, apart from it (issue 40). The benchmark
(`make bench`, bench/), the signal truth harness (`make truth`, truth/), the crash loop and the
overlap probe (crash_loop.py, crash_loop_checks.py, overlap_probe.py; docs/robustness.md) and
their SQL (sql/). No module under pipelines/ or spiders/ imports it (tests/test_house_rules.py);
the simulator they drive is the product's own (pipelines/simulate/, `gpuprices simulate`).
Nothing here is collected by pytest: no file is named test_*.py."""
