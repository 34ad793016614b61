-- The price index's hourly series of the report's cards (marts.price_index; the rows of the
-- method that published last): each day's level and interval and the day's listing median, as
-- percent of the series' base day (its level and its median), so markets in CNY and USD share
-- an axis.
select
    p.index_card,
    p.market,
    p.offer_kind,
    p.series_id,
    p.index_date,
    p.currency,
    p.index_level,
    p.vendors_matched,
    p.offers_matched,
    p.evidence_lacking,
    100 * p.index_level / p.base_level as level_pct,
    100 * p.level_low / p.base_level as low_pct,
    100 * p.level_high / p.base_level as high_pct,
    100 * p.listing_median / max(
        case when p.index_date = p.base_date then p.listing_median end
    ) over (partition by p.series_id) as median_pct
from marts.price_index as p
where
    p.term = 'hour'
    and list_contains(?, p.index_card)
    and p.method_version = (
        select arg_max(l.method_version, l.published_at) from marts.price_index as l
    )
order by p.index_card, p.market, p.offer_kind, p.index_date
