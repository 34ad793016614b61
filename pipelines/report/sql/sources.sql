-- One row per source for the header's folded list: what it is, how much it landed, when, and
-- where the prices the page shows from it come from (live, a capture, published prices, or a
-- modeled snapshot): the basis of its shown observations (their own, else its source's), so a
-- source whose modeled or undated offers are hidden is not named for them.
with shown as (
    select
        o.source,
        o.vendor,
        o.vendor_kind,
        o.offer_id,
        o.observed_at,
        o.reaches_via,
        o.prices_as_of,
        coalesce(o.price_basis, b.price_basis) as shown_basis
    from staging.stg_shown_observations as o  -- what a page may show: no un-asked-for modeled price
    left join intermediate.int_source_price_basis as b on o.source = b.source
),

by_source as (
    select
        source,
        any_value(vendor) as vendor,
        any_value(vendor_kind) as vendor_kind,
        count(*) as observations,
        count(distinct offer_id) as offers,
        min(observed_at) as first_seen,
        max(observed_at) as last_seen,
        -- one basis when every shown price has it; real ones of several kinds read as published
        case
            when count(distinct shown_basis) = 1 then any_value(shown_basis)
            when bool_and(is_real_price(shown_basis)) then 'published'
            when count(shown_basis) > 0 then 'mixed'
        end as price_basis,
        max(prices_as_of) as prices_as_of,
        -- how the source reaches its offers; a template's count in no signal or claim
        any_value(reaches_via) as reaches_via
    from shown
    group by source
)

select
    source,
    vendor,
    vendor_kind,
    observations,
    offers,
    first_seen,
    last_seen,
    price_basis,
    reaches_via,
    coalesce(price_basis_label(price_basis, prices_as_of), 'not stated') as price_basis_label
from by_source
order by source
