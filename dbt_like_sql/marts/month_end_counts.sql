/* Month-end counts, one row (the report's month-end section): how many offer groups the
   month-end marts judge, on each group's latest month (the row that carries the group's
   verdict): dip groups, and of them how many the verdict holds, does not hold, or cannot tell
   yet (with the median months still needed); the same for capacity released at month end; and
   the latest month of marts.month_end_dip. The evidence rules are the marts' own: their verdict
   columns say what they concluded, so nothing here repeats a threshold. */
-- grain: latest_month
-- audit: dips_add_up: dips_holding + dips_not_holding + dips_undecided <> dip_groups
with latest_dip as (
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
        count(*) filter (where dip_verdict = 'holds') as dips_holding,
        count(*) filter (where dip_verdict = 'does not hold') as dips_not_holding,
        count(*) filter (where dip_verdict = 'not enough evidence') as dips_undecided,
        median(months_needed) filter (where dip_verdict = 'not enough evidence')
            as dip_months_needed
    from latest_dip
),

capacity as (
    select
        count(*) as capacity_groups,
        count(*) filter (where release_verdict = 'holds') as capacity_released,
        count(*) filter (where release_verdict = 'does not hold') as capacity_not_released,
        count(*) filter (where release_verdict = 'not enough evidence') as capacity_undecided
    from latest_capacity
),

latest_month as (
    select max(month) as latest_month
    from marts.month_end_dip
)

select
    d.dip_groups,                   -- offer groups of marts.month_end_dip
    d.dips_holding,                 -- of them, the groups whose dip_verdict holds
    d.dips_not_holding,             -- ... does not hold
    d.dips_undecided,               -- ... has not enough evidence yet
    d.dip_months_needed,            -- the undecided groups' median months_needed
    c.capacity_groups,              -- offer groups of marts.month_end_capacity
    c.capacity_released,            -- of them, the groups whose release_verdict holds
    c.capacity_not_released,        -- ... does not hold
    c.capacity_undecided,           -- ... has not enough evidence yet
    m.latest_month                  -- the latest month of marts.month_end_dip
from dips as d
cross join capacity as c
cross join latest_month as m
