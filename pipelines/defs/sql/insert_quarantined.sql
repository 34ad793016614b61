-- The batch's refused offers (the registered frame `quarantined`), one row per problem per
-- captured item: a problem is its source, stage and raw item text (sha256). One already recorded
-- by another crawl (a replay of the same captured bytes, a re-crawled hour) is not added again;
-- of two crawls in this batch showing it, the earlier one records it. A crawl normalized again
-- (its batch was blocked, so it stayed pending) keeps the rows it was first quarantined with.
insert into quarantine by name
with refused as (
    select
        source, crawl_id, item_no, stage, reason, raw_item, quarantined_at,
        sha256(raw_item) as raw_item_sha256
    from quarantined
),

first_shown as (
    select
        *,
        min(crawl_id) over (
            partition by source, stage, raw_item_sha256
        ) as first_crawl_id
    from refused
)

select
    f.source, f.crawl_id, f.item_no, f.stage, f.reason, f.raw_item, f.quarantined_at,
    f.raw_item_sha256
from first_shown as f
where
    f.crawl_id = f.first_crawl_id
    and not exists (
        select 1 from quarantine as q
        where
            q.source = f.source
            and q.stage = f.stage
            and q.raw_item_sha256 = f.raw_item_sha256
            and q.crawl_id != f.crawl_id
    )
on conflict do nothing
