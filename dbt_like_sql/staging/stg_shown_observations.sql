/* The observations a page may show: every one but a modeled or undated price (its own price
   basis, else its crawl's: illustrative, mixed or undated, spiders/price_basis.py
   NOT_SHOWN_BY_DEFAULT, the macro hidden_by_default) that its run did not opt in to
   (raw.crawls.opted_in: the run named the source, spiders/default_sources.py). So a default run
   shows a dated public price or nothing, and the modeled and undated prices an earlier run crawled
   stay in `observations` without reaching the report, `prices`, the feeds, claims, the index,
   alerts or the advisor. A crawl re-read from the raw archive states no basis: its offers' own,
   or its source's latest stated one, stands for it. An observation no crawl describes (a test's)
   is shown. Only the crawls that can hide a row are joined (intermediate.int_hiding_crawls: not
   opted in, and a hidden or no basis, or a row stating a hidden one), not every crawl of the
   history: any other crawl is opted in, or has a shown basis and no row stating a hidden one,
   so its rows are shown as an unknown crawl's are. Every model reads observations through this
   view (staging.stg_observations). */
-- materialized: view
-- every column of observations passes through, however many it has (hence the noqa)
select o.*  -- noqa: AM04
from observations as o
left join intermediate.int_hiding_crawls as c on o.crawl_id = c.crawl_id
left join intermediate.int_source_price_basis as b on o.source = b.source
where
    c.crawl_id is null
    or not coalesce(
        hidden_by_default(coalesce(o.price_basis, c.price_basis, b.price_basis)), false
    )
