"""The GPU rental price index (docs/price-index.md): a matched-offer chained index per card
class, market, offer kind and term, published day by day into `marts.price_index` and never
rewritten. `method` computes a series' days, `chain` turns them into rows, `publish` reads the
inputs the SQL models built and appends the new rows."""

from pipelines.index.chain import INDEX_COLUMNS, content_hash
from pipelines.index.method import Rules
from pipelines.index.publish import INDEX_TABLE, Publication, publish_index, read_rules

__all__ = ["INDEX_COLUMNS", "INDEX_TABLE", "Publication", "Rules", "content_hash",
           "publish_index", "read_rules"]
