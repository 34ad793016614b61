/* The crawls that can hide an observation from a page (staging.stg_shown_observations): not
   opted in (raw.crawls.opted_in) and stating a basis no default page shows
   (hidden_by_default: undated, illustrative, mixed), or stating none (a crawl re-read from the
   raw archive: its source's latest stated basis stands for it), or carrying an observation that
   states such a basis itself. A crawl not listed here hides nothing (opted in, or a shown basis
   and no row stating a hidden one), so the view joins this short list instead of every crawl of
   the history: on the simulator's history it is empty, on the public record a few dozen crawls.
   Incremental by merge: only the crawls of the rebuilt days' observations are read; a crawl's
   opted_in and basis are written with it and never change, and a crawl once listed stays listed
   (a later row of it can only add a reason). The crawls are read by a filter against the short
   list, not joined: a join to all of raw.crawls hashes every crawl of the history each hour,
   even to find none (0.02 s at a year; the filter 0.007 s). */
-- grain: crawl_id
-- incremental: crawl_id by merge
with rebuilt_crawls as (    -- the crawls of the rebuilt days' observations
    select
        crawl_id,
        bool_or(coalesce(hidden_by_default(price_basis), false)) as states_hidden_basis
    from observations
    where observed_hour >= since_hour(0)
    group by crawl_id
),

listed as (                 -- the ones that can hide a row, if not opted in
    select c.crawl_id
    from raw.crawls as c
    semi join rebuilt_crawls as r on c.crawl_id = r.crawl_id
    where c.price_basis is null or hidden_by_default(c.price_basis)
    union
    select crawl_id
    from rebuilt_crawls
    where states_hidden_basis
)

select
    crawl_id,
    price_basis     -- the crawl's own basis (null: re-read from the raw archive)
from raw.crawls
where
    not coalesce(opted_in, false)
    and list_contains((select coalesce(list(l.crawl_id), []) from listed as l), crawl_id)
