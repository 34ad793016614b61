"""Tools beside the product, not part of the hourly run: the history simulator, the signal
truth harness (`make truth`) and the benchmark (`make bench`)."""
