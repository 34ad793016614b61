/* Where each source's prices come from, from its latest passing crawl that states it (a crawl
   re-read from the raw archive states none: its bytes are an earlier crawl's): read live from the
   vendor, or replayed from a snapshot whose prices are captured, published (real and dated),
   illustrative (modeled) or mixed; or simulated. price_basis_label is the one wording every page
   shows (the report, `gpuprices prices`, the API): a modeled price is never taken for a quote. */
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
    price_basis,      -- live | captured | published | illustrative | mixed | simulated
    prices_as_of,     -- the date of published prices (null: live, illustrative or simulated)
    case price_basis
        when 'live' then 'live'
        when 'captured'
            then 'replayed capture'
            || coalesce(' of ' || strftime(prices_as_of, '%Y-%m-%d'), '')
        when 'published'
            then 'published prices'
            || coalesce(' as of ' || strftime(prices_as_of, '%Y-%m-%d'), '') || ', replayed'
        when 'mixed'
            then 'modeled snapshot: part published'
            || coalesce(' as of ' || strftime(prices_as_of, '%Y-%m-%d'), '')
            || ', part illustrative'
        when 'illustrative' then 'modeled snapshot: illustrative prices'
        when 'simulated' then 'simulated'
    end as price_basis_label,
    -- a price someone can act on: read live, captured, or published by the vendor
    coalesce(price_basis in ('live', 'captured', 'published'), false) as is_real_price
from latest
