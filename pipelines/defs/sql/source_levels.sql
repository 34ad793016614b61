-- Per source (and card) in this batch: its volume against the median of its last
-- $trailing_crawls published crawls, and its median price against its last published crawl.
-- The batch's sources are those of the crawls it was built from (raw.batch_crawls), not every
-- pending crawl: a crawl loaded after the batch was built waits for the next batch.
-- A source with no history gets nulls, which pass. An archive's source (every crawl of it in
-- the batch loaded from an archive's versions) has no volume ratio: a chunk holds many of its
-- versions against a median per version, and a version whose rows are all refused is what the
-- archive said then (a curated table's 'Europe/North America'), not a crawler gone wrong; its
-- price level is still checked.
with pending as (
    select
        c.source,
        bool_and(c.mode = 'archive') as from_archive
    from raw.batch_crawls as b
    inner join raw.crawls as c on b.crawl_id = c.crawl_id
    group by 1
),

batch_volume as (
    select source, count(*) as batch_rows
    from observation_batch
    group by 1
),

recent_crawls as (
    select
        source,
        normalized_rows,
        row_number() over (partition by source order by crawl_id desc) as recency
    from raw.crawls
    where passed and normalized_at is not null and normalized_rows > 0
),

history as (
    select source, median(normalized_rows) as trailing_median_rows
    from recent_crawls
    where recency <= $trailing_crawls
    group by 1
),

level_now as (
    select source, gpu_model, median(price_per_gpu_hour_cny) as median_now
    from observation_batch
    group by all
),

level_before as (
    select source, gpu_model, median(price_per_gpu_hour_cny) as median_before
    from observations as o
    where observed_hour = (
            select max(p.observed_hour) from observations as p
            where p.source = o.source
        )
    group by all
)

select
    p.source,
    n.gpu_model,
    coalesce(v.batch_rows, 0) as batch_rows,
    h.trailing_median_rows,
    case
        when not p.from_archive then coalesce(v.batch_rows, 0) / h.trailing_median_rows
    end as volume_ratio,
    n.median_now::double as median_now,
    b.median_before::double as median_before,
    (n.median_now / b.median_before)::double as price_level_ratio
from pending as p
left join batch_volume as v on p.source = v.source
left join history as h on p.source = h.source
left join level_now as n on p.source = n.source
left join level_before as b on p.source = b.source and n.gpu_model = b.gpu_model
