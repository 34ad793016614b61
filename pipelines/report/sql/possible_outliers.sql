-- Possible price outliers (marts.price_outliers): offers whose latest price is more than the
-- outlier limit away from their card's cross-vendor median, those held back from the cheapest
-- offers and the alerts first, then those a later crawl confirmed; the farthest first.
select
    *,
    greatest(times_card_median, 1 / times_card_median) as factor_from_median
from marts.price_outliers
where outlier_status <> 'ok'
order by outlier_status = 'confirmed', factor_from_median desc, offer_id asc
