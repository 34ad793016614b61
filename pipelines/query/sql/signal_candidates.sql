-- What each comparison signal could pair, among the counted latest prices (marts.latest_prices)
-- a reader's filter matches ({matched}: pipelines/query/filters.py): the offers on one side of each
-- comparison, so an empty signal says whether there was nothing to compare or nothing to compare
-- with (pipelines/query/comparisons.py).
select
    count(*) as offers,
    count(*) filter (where gpu_fraction < 1) as slices,
    count(*) filter (where offer_kind = 'spot') as spot,
    count(*) filter (where billing_period = 'month') as monthly,
    count(*) filter (where gpu_count > 1) as multi_gpu,
    count(*) filter (
        where offer_kind = 'on_demand' and billing_period = 'hour' and gpu_fraction = 1
    ) as hourly_whole
from marts.latest_prices
where counted and {matched}
