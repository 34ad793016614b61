/* Where each source's prices come from, from its latest passing crawl that states it (a crawl
   re-read from the raw archive states none: its bytes are an earlier crawl's): read live from the
   vendor, or replayed from a snapshot whose manifest sums up its entries' bases (captured,
   published, undated, illustrative or mixed); or simulated. The source-level view
   (`gpuprices sources`, the report's source table); an offer carries its own basis
   (marts.latest_prices). price_basis_label is the one wording every page shows (the macro in
   pipelines/warehouse/sql/price_basis_macros.sql): a modeled price is never taken for a quote. */
with stating as (   -- the passing crawls that state a basis: one row per source and hour
    select
        source,
        price_basis,
        prices_as_of,
        finished_at,
        crawl_id
    from raw.crawls
    where passed and price_basis is not null
),

latest_finish as (  -- each source's latest finish (null: none of its crawls states one)
    select
        source,
        max(finished_at) as finished_at
    from stating
    group by source
),

latest as (
    -- the crawls that finished then, the latest crawl_id of them: the same row as a window over
    -- every crawl ordered by finished_at desc nulls last, crawl_id desc, but the sort is of a
    -- few rows per source, not of the whole history of crawls
    select
        s.source,
        s.price_basis,
        s.prices_as_of,
        s.finished_at
    from stating as s
    semi join latest_finish as f
        on s.source = f.source and s.finished_at is not distinct from f.finished_at
    qualify row_number() over (partition by s.source order by s.crawl_id desc) = 1
)

select
    source,
    -- live | captured | published | undated | illustrative | mixed | simulated
    price_basis,
    prices_as_of,     -- the date of published prices (null: live, undated, illustrative, ...)
    price_basis_label(price_basis, prices_as_of) as price_basis_label,
    -- a price someone can act on: read live, captured, or published (dated) by the vendor
    is_real_price(price_basis) as is_real_price
from latest
