-- The closes the index reads (intermediate.int_index_offer_days): counted, fresh and not held,
-- with the history each came from (the source's prefix: gpu-rental-prices, gcp-pricing, ...; a
-- source crawled directly is 'live').
select
    series_id,
    index_date,
    offer_id,
    vendor,
    close_price_amount as price,
    case when source like '%:%' then split_part(source, ':', 1) else 'live' end as history
from intermediate.int_index_offer_days
where fresh and not held
order by series_id, index_date, offer_id
