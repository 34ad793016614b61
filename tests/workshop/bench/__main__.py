"""`python -m tests.workshop.bench` (`make bench`)."""

from tests.workshop.bench.command import main

main()
