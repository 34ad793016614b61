-- Per crawl of the batch (raw.batch_crawls) and card: its volume against the median of its
-- source's last $trailing_crawls published crawls, and its median price against its source's
-- last published hour; one crawl at a time, so that a rule that refuses one crawl holds that
-- crawl alone (pipelines/quality/blast_radius.py). A crawl's volume
-- is its offers that normalized (raw.batch_crawls.normalized_rows), whichever crawl of the batch
-- kept an offer seen twice. A source with no history gets nulls, which pass. An archive's crawl
-- has no volume ratio: a chunk holds many of its versions against a median per version, and a
-- version whose rows are all refused is what the archive said then (a curated table's 'Europe/
-- North America'), not a crawler gone wrong; its price level is still checked.
-- level_settled_by: the decision that let the crawl's new level in (the blocking check on source
-- levels, the safety net after the judging, leaves such a crawl out).
with batch as (
    select
        b.crawl_id,
        b.level_settled_by,
        c.source,
        c.mode = 'archive' as from_archive,
        b.normalized_rows
    from raw.batch_crawls as b
    inner join raw.crawls as c on b.crawl_id = c.crawl_id
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
    select crawl_id, gpu_model, median(price_per_gpu_hour_cny) as median_now
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
    b.crawl_id,
    b.source,
    n.gpu_model,
    b.level_settled_by,
    b.normalized_rows::double as crawl_rows,
    h.trailing_median_rows,
    case
        when not b.from_archive then b.normalized_rows / h.trailing_median_rows
    end as volume_ratio,
    n.median_now::double as median_now,
    l.median_before::double as median_before,
    (n.median_now / l.median_before)::double as price_level_ratio
from batch as b
left join history as h on b.source = h.source
left join level_now as n on b.crawl_id = n.crawl_id
left join level_before as l on b.source = l.source and n.gpu_model = l.gpu_model
