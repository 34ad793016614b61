"""`python -m pipelines.tools.bench` (`make bench`)."""

from pipelines.tools.bench.command import main

main()
