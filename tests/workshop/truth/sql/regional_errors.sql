/* One row per marts.regional_discount row of a gapped province that has a discount, with the
   discount the simulator injected: the median over the paired vendors of each vendor's gap (every
   line of a vendor carries the same gap; the mart's ratio of a line is a trailing-window median,
   the gap is the same on every day of it). error_pp = |measured - injected| in percentage
   points; within_bound: error_pp is at most the error the row states (error_bound_pp). */
with o as (select distinct offer_id, vendor, province_or_state from observations),

vendor_gaps as (
    select o.vendor, o.province_or_state as region_group, median(e.size_pct) as gap_pct
    from truth.offer_effects as e
    inner join o on e.offer_id = o.offer_id
    where e.effect = 'regional_gap'
    group by all
),

paired as (
    select
        p.observed_date as day, p.gpu_model, p.offer_kind, p.billing_period, p.region_group,
        p.vendor, g.gap_pct
    from intermediate.int_regional_pairs as p
    inner join vendor_gaps as g on p.vendor = g.vendor and p.region_group = g.region_group
    where p.gpu_fraction = 1 and p.price_ratio is not null   -- what the mart pairs: whole cards
    group by all
),

expected as (
    select
        day, gpu_model, offer_kind, billing_period, region_group,
        100 * (1 - median(1 - gap_pct / 100)) as injected_discount_pct,
        count(*) as vendors_with_truth
    from paired
    group by all
)

select
    r.day, r.gpu_model, r.offer_kind, r.billing_period, r.region_group, r.vendors_paired,
    e.vendors_with_truth,
    r.discount_pct as measured_discount_pct,
    e.injected_discount_pct,
    abs(r.discount_pct - e.injected_discount_pct) as error_pp,
    r.error_bound_pp,
    r.window_days,
    abs(r.discount_pct - e.injected_discount_pct) <= r.error_bound_pp as within_bound
from marts.regional_discount as r
inner join expected as e
    on r.day = e.day and r.gpu_model = e.gpu_model and r.offer_kind = e.offer_kind
    and r.billing_period = e.billing_period and r.region_group = e.region_group
where r.discount_pct is not null
