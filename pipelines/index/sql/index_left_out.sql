-- Why observations are in no index series (`gpuprices index`'s empty answer): each observation's
-- first reason, with how many observations and sources it holds; 'in' are the ones the index's
-- inputs can hold (intermediate.int_index_offer_days narrows them to fresh whole-card closes).
with classed as (
    select
        o.source,
        case
            -- a curated table's dates are edits, not days a price held
            when o.source in (select s.source from intermediate.int_sources_without_calendar as s)
                then 'curated'
            when index_use_forbidden(regexp_replace(o.source, '^[^:]*:', ''), o.vendor)
                then 'forbidden'
            when not o.counted then 'counted_elsewhere'
            when o.gpu_fraction < 1 then 'slice'
            when o.currency not in ('CNY', 'USD') then 'currency'
            else 'in'
        end as reason
    from staging.stg_observations as o
)

select
    reason,
    count(*) as observations,
    count(distinct source) as sources
from classed
group by reason
order by reason
