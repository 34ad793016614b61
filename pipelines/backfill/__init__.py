"""Backfill: real price history from public price archives' git histories (`gpuprices
backfill`), loaded as the crawls a spider would have left and published by the pipeline's own
normalization, checks and models at each commit's time.

One module per part: `archives` (the archives, and the one home of which carry a calendar
signal), `git_walk` (the versions of an archive's files, from git), `selection` (--since,
--until, --clouds, --every), one parser per format (`skypilot` with `skypilot_gcp`,
`cloud_gpus`, `full_stack`, `gcp_pricing`, `alibaba_priceserver`, `featurize_doc`, `ustc_saids`,
`ikkem`; `markdown_tables` the documentation pages' tables; `offers` what they return),
`vendors` (an archive's cloud -> the vendor, as our own spider names it), `items` (offers ->
raw items and crawls), `load` (the backfill: idempotent, resumable) and `publish` (the
pipeline's steps, run by Dagster in this process).
"""
