-- One row per source for the header's folded list: what it is, how much it landed, when, and
-- where its prices come from (live, a capture, published prices, or a modeled snapshot).
select
    o.source,
    any_value(o.vendor) as vendor,
    any_value(o.vendor_kind) as vendor_kind,
    count(*) as observations,
    count(distinct o.offer_id) as offers,
    min(o.observed_at) as first_seen,
    max(o.observed_at) as last_seen,
    any_value(b.price_basis) as price_basis,
    -- how the source reaches its offers; a template's count in no signal or claim
    any_value(o.reaches_via) as reaches_via,
    coalesce(any_value(b.price_basis_label), 'not stated') as price_basis_label
from staging.stg_shown_observations as o  -- what a page may show: no un-asked-for modeled price
left join intermediate.int_source_price_basis as b on o.source = b.source
group by o.source
order by o.source
