/* The crawls that can hide an observation from a page (staging.stg_shown_observations): not
   opted in (raw.crawls.opted_in) and stating a basis no default page shows
   (hidden_by_default: undated, illustrative, mixed), or stating none (a crawl re-read from the
   raw archive: its source's latest stated basis stands for it), or carrying an observation that
   states such a basis itself. A crawl not listed here hides nothing (opted in, or a shown basis
   and no row stating a hidden one), so the view joins this short list instead of every crawl of
   the history: on the simulator's history it is empty, on the public record a few dozen crawls.
   Incremental by merge: only the crawls of the rebuilt days' observations are read; a crawl's
   opted_in and basis are written with it and never change, and a crawl once listed stays listed
   (a later row of it can only add a reason). */
-- grain: crawl_id
-- incremental: crawl_id by merge
with rebuilt_crawls as (    -- the crawls of the rebuilt days' observations
    select
        crawl_id,
        bool_or(coalesce(hidden_by_default(price_basis), false)) as states_hidden_basis
    from observations
    where observed_hour >= since_hour(0)
    group by crawl_id
)

select
    c.crawl_id,
    c.price_basis     -- the crawl's own basis (null: re-read from the raw archive)
from rebuilt_crawls as r
inner join raw.crawls as c on r.crawl_id = c.crawl_id
where
    not coalesce(c.opted_in, false)
    and (
        c.price_basis is null
        or hidden_by_default(c.price_basis)
        or r.states_hidden_basis
    )
