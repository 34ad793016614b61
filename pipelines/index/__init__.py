"""The GPU rental price index (docs/price-index.md): a matched-offer chained index per card
class, market, offer kind and term, published day by day into `marts.price_index` and never
rewritten. `method` computes a series' days, `chain` turns them into rows, `publish` reads the
inputs the SQL models built and appends the new rows.

The names below load with their module on first use: `gpuprices` imports `absence` for its
`index` command, and pandas (what `chain` and `publish` need) would otherwise load with every
command, `gpuprices run` too, before its crawl starts (pipelines/crawl_ahead.py)."""

from importlib import import_module

# name -> the module of this package that defines it
_HOMES = {"INDEX_COLUMNS": "chain", "content_hash": "chain", "Rules": "method",
          "INDEX_TABLE": "publish", "Publication": "publish", "publish_index": "publish",
          "read_rules": "publish"}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
