/* Where each source's prices come from, from its latest passing crawl that states it (a crawl
   re-read from the raw archive states none: its bytes are an earlier crawl's): read live from the
   vendor, or replayed from a snapshot whose manifest sums up its entries' bases (captured,
   published, undated, illustrative or mixed); or simulated. The source-level view
   (`gpuprices sources`, the report's source table); an offer carries its own basis
   (marts.latest_prices). price_basis_label is the one wording every page shows (the macro in
   pipelines/warehouse/sql/price_basis_macros.sql): a modeled price is never taken for a quote. */
with latest as (
    -- of the passing crawls that state a basis, each source's latest finish (a finish beats
    -- none), and the latest crawl_id of the crawls that finished then: one group-by over the
    -- crawls, not a semi join and a window (the crawls grow with every hour of history)
    select
        source,
        arg_max(
            {
                'price_basis': price_basis,
                'prices_as_of': prices_as_of
            },
            {
                'has_finish': finished_at is not null,
                'finished_at': finished_at,
                'crawl_id': crawl_id
            }
        ) as stated
    from raw.crawls
    where passed and price_basis is not null
    group by source
)

select
    l.source,
    -- live | captured | published | undated | illustrative | mixed | simulated
    l.stated.price_basis,
    -- the date of published prices (null: live, undated, illustrative, ...)
    l.stated.prices_as_of,
    price_basis_label(l.stated.price_basis, l.stated.prices_as_of) as price_basis_label,
    -- a price someone can act on: read live, captured, or published (dated) by the vendor
    is_real_price(l.stated.price_basis) as is_real_price
from latest as l
