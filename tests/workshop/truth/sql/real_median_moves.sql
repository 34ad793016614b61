-- The listing median's daily moves: per calendar-dated archive, card and day, the median
-- on-demand price per GPU-hour of the offers listed (USD, the archives' currency), and its
-- relative move from the archive's previous day (`make truth-real`, real_market.py: the
-- distribution an index's own moves are read against).
with calendar_sources as (
    select distinct source
    from raw.crawls
    where calendar_signal
),

medians as (
    select
        split_part(d.source, ':', 1) as archive,
        d.gpu_model,
        d.observed_date,
        median(d.close_price_usd_per_gpu_hour) as median_usd
    from intermediate.int_offer_daily as d
    inner join calendar_sources as c on d.source = c.source
    where d.offer_kind = 'on_demand' and d.close_price_usd_per_gpu_hour > 0
    group by all
),

archive_days as (
    select
        archive,
        observed_date,
        lag(observed_date) over (partition by archive order by observed_date) as previous_date
    from (select distinct archive, observed_date from medians) as listed_days
)

select
    m.archive,
    m.gpu_model,
    m.observed_date,
    m.median_usd,
    p.median_usd as previous_median_usd,
    m.median_usd / p.median_usd - 1 as relative_move
from medians as m
inner join archive_days as a on m.archive = a.archive and m.observed_date = a.observed_date
inner join medians as p
    on m.archive = p.archive and m.gpu_model = p.gpu_model and a.previous_date = p.observed_date
order by m.archive, m.gpu_model, m.observed_date
