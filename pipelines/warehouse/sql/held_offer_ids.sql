-- The offers of marts.latest_prices whose latest price is held back as a possible outlier:
-- marts.price_outliers holds it until a later crawl confirms it (docs/data-quality.md). The one
-- definition for every reader that lists or recommends current prices (not_held_predicate()).
select h.offer_id
from marts.price_outliers as h
where h.outlier_status = 'held'
