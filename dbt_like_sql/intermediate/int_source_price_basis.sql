/* Where each source's prices come from, from its latest passing crawl that states it (a crawl
   re-read from the raw archive states none: its bytes are an earlier crawl's): read live from the
   vendor, or replayed from a snapshot whose manifest sums up its entries' bases (captured,
   published, undated, illustrative or mixed); or simulated. The source-level view
   (`gpuprices sources`, the report's source table); an offer carries its own basis
   (marts.latest_prices). price_basis_label is the one wording every page shows (the macro in
   pipelines/warehouse/sql/price_basis_macros.sql): a modeled price is never taken for a quote. */
with latest as (
    select
        source,
        price_basis,
        prices_as_of,
        finished_at
    from raw.crawls
    where passed and price_basis is not null
    qualify row_number() over (
            partition by source order by finished_at desc nulls last, crawl_id desc
        ) = 1
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
