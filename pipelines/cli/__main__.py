"""`python -m pipelines.cli ...` is `gpuprices ...`."""

from pipelines.cli import main

main()
