"""The read side: what the command line (pipelines/cli/) and the Python API (pipelines/api.py)
both stand on. No click here: errors are this package's own (errors.py), and each face turns
them into its own (exit codes and usage errors, or exceptions as they are).

  published.py  opening the published database read-only (open_published, cannot_open)
  rows.py       a query's rows as dicts (records), for every reader of the database
  choices.py    kinds and periods with their other spellings, from the tables that define them
  filters.py    card, region, vendor, kind, period and price ceiling as SQL predicates (Filter)
  prices.py     the latest-prices query and its sort orders; the price-history query
  signals.py    the signal marts, listed once (SIGNAL_MARTS), and how they are narrowed
"""
