/* How many offer groups the month-end marts judge, on each group's latest month (the row that
   carries the group's test): dip groups, those with enough evidence, those with a dip signal;
   capacity groups with enough evidence and those releasing capacity. The evidence minimums are
   the marts' own (their `params` CTEs), returned so the page states the numbers it used. */
with params as (
    select
        2 as dip_min_months,
        5 as dip_min_offer_months,
        5 as capacity_min_months
),

latest_dip as (
    select *
    from marts.month_end_dip
    qualify row_number() over (
        partition by source, vendor, gpu_model, gpu_variant, region_code, offer_kind
        order by month desc
    ) = 1
),

latest_capacity as (
    select *
    from marts.month_end_capacity
    qualify row_number() over (
        partition by source, vendor, gpu_model, gpu_variant, region_code, offer_kind
        order by month desc
    ) = 1
),

dips as (
    select
        count(*) as dip_groups,
        count(*) filter (
            where d.months_observed >= p.dip_min_months
            and d.offer_months >= p.dip_min_offer_months
        ) as dip_groups_judged,
        count(*) filter (where d.dip_signal) as dip_signals
    from latest_dip as d
    cross join params as p
),

capacity as (
    select
        count(*) filter (where c.release_signal) as capacity_released,
        count(*) filter (where c.untied_months >= p.capacity_min_months) as capacity_judged
    from latest_capacity as c
    cross join params as p
)

select
    p.*,
    d.*,
    c.*,
    (select max(month) from marts.month_end_dip) as latest_month
from params as p
cross join dips as d
cross join capacity as c
