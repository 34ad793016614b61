import sys

# `--real`: the real-history harness (real.py); otherwise the simulated grid (run.py).
if "--real" in sys.argv[1:]:
    from tests.workshop.truth.real import main
else:
    from tests.workshop.truth.run import main

main()
