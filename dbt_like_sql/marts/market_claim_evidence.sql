/* Market-claim evidence: one row per claim (marts.market_claims) and DISTINCT evidence unit: the
   values each claim's median and interval are computed from, so every verdict can be traced to
   the offers behind it. A unit is one vendor's offer line with one value: the region copies of
   an offer (same vendor, line and value listed in several regions) are one unit, with every
   copy's offer id and region listed. Claims are scored on the current market: each offer's (a
   pair mart's: each pair's) latest observation within price_horizon_days() (price_age_macros.sql)
   of the newest day of the table it measures. The horizon counts back from that newest day, not
   from today, so a fixed history (a test's, a replayed record's) is scored the same any day.
   Each row keeps the day it was measured on. The month-based claims (month end, month phase,
   holiday, off-peak) keep their own rule: the latest month, holiday or local day. Scopes follow
   the guides' words, see docs/market-claims.md. Claims about no named card look at the four
   mission families only (mission_families(): spiders/parsing/card_catalog.py MISSION_FAMILIES).
   The minimum of changes and the unit's precision: the `params` CTE.
   Rebuilt in full every hour, but bounded: it reads each table from the first day of its horizon
   on (its newest day minus price_horizon_days(): 180 days), and of the month-based tables their
   latest month, holiday or local day; DuckDB pushes those first days (scalar subqueries) into
   the scans, so at a history longer than the horizon the offer-days before it are skipped. */
-- grain: claim_id, vendor, offer_line, value
-- audit: has_offers: copies < 1 or offers is null
with params as (
    select
        -- Claims that name no card look at the four mission families only.
        mission_families() as mission_families,
        -- Month-phase stability counts an offer-month followed through 10+ day-to-day changes in
        -- days 2-22: a mean over fewer changes says little about a stable or moving price.
        10 as stable_min_changes,
        -- A monthly price back from its price per GPU-hour: a month is 730 h (8760 / 12), as in
        -- HOURS_PER_PERIOD of spiders/parsing/prices.py that turned it hourly.
        730 as hours_per_month,
        -- Values equal to 1e-6 are one unit: a region copy of an offer must collapse with it,
        -- not differ by a float's last digit.
        6 as value_decimals
),

-- The current market: the first day within the horizon of "now" of each table, counted back from
-- the table's newest day (horizon_first_day(), price_age_macros.sql: it still skips the row
-- groups older than the newest day).
horizon_start as (
    select
        horizon_first_day('intermediate.int_offer_daily', 'observed_date') as offers_from,
        horizon_first_day('marts.slice_to_whole_ratio', 'day') as slices_from,
        horizon_first_day('marts.multi_gpu_discount', 'day') as servers_from,
        horizon_first_day('marts.monthly_vs_hourly_saving', 'day') as savings_from,
        horizon_first_day('marts.spot_discount', 'day') as spot_from,
        horizon_first_day('intermediate.int_regional_pairs', 'observed_date') as regions_from
),

latest_days as (    -- each offer's latest counted day within the horizon of the newest day
    select
        o.offer_id,
        max(o.observed_date) as observed_date
    from intermediate.int_offer_daily as o
    where o.observed_date >= (select h.offers_from from horizon_start as h)
        and o.counted  -- counted once (staging.stg_observations)
    group by o.offer_id
),

latest_offers as (  -- that day's row (the daily series' grain: offer_id, observed_date); found
    -- by a narrow group-by and a join, not a window over every wide row of the horizon
    select o.*
    from intermediate.int_offer_daily as o
    semi join latest_days as l on o.offer_id = l.offer_id and o.observed_date = l.observed_date
    where o.observed_date >= (select h.offers_from from horizon_start as h)
),

prices as (       -- price claims: the offer's own price, as the guide quotes it
    select
        *,
        close_price_cny_per_gpu_hour::double as per_gpu_hour,
        close_instance_price_cny_per_hour::double as instance_hour
    from latest_offers
    where offer_kind <> 'spot'
),

whole_hourly as (
    select * from prices
    where gpu_count = 1 and gpu_fraction = 1 and offer_kind = 'on_demand'
        and billing_period = 'hour'
),

china_slices as (
    select * from prices
    where gpu_family = 'A100' and gpu_fraction < 1 and country = 'CN'
        and offer_kind = 'on_demand' and billing_period = 'hour'
),

china_monthly as (
    select * from prices
    where gpu_model = 'A100-80GB' and gpu_fraction = 1 and billing_period = 'month'
        and country = 'CN'
),

slices as (  -- each pair's latest day within the horizon
    select s.*, split_part(s.gpu_model, '-', 1) as gpu_family
    from marts.slice_to_whole_ratio as s
    where s.day >= (select h.slices_from from horizon_start as h)
        and s.gpu_fraction = 0.25
    qualify row_number() over (partition by s.slice_offer_id, s.whole_offer_id order by s.day desc)
        = 1
),

servers as (  -- each pair's latest day within the horizon
    select s.*, split_part(s.gpu_model, '-', 1) as gpu_family
    from marts.multi_gpu_discount as s
    where s.day >= (select h.servers_from from horizon_start as h)
        and s.server_gpu_count = 8
    qualify row_number()
            over (partition by s.server_offer_id, s.single_offer_id order by s.day desc)
        = 1
),

savings_days as (  -- each pair's latest day within the horizon
    select s.monthly_offer_id, s.hourly_offer_id, max(s.day) as day
    from marts.monthly_vs_hourly_saving as s
    where s.day >= (select h.savings_from from horizon_start as h)
    group by s.monthly_offer_id, s.hourly_offer_id
),

savings as (  -- that day's row (the table's grain: monthly_offer_id, day), found by a narrow
    -- group-by and a join as latest_offers is: a row_number() over every wide row of the
    -- horizon became an arg_max of whole rows, sized for tens of thousands of pairs. An inner
    -- join (a pair has one row a day), not a semi join: DuckDB built the semi join's hash table
    -- on the horizon's rows (1.3 M at 20,000 offers x a year, 0.19 s) instead of the pairs
    select s.*, split_part(s.gpu_model, '-', 1) as gpu_family
    from savings_days as l
    inner join marts.monthly_vs_hourly_saving as s
        on
        l.monthly_offer_id = s.monthly_offer_id
        and l.hourly_offer_id = s.hourly_offer_id
        and l.day = s.day
    where s.day >= (select h.savings_from from horizon_start as h)
),

spot_days as (  -- each pair's latest day within the horizon
    select s.spot_offer_id, s.on_demand_offer_id, max(s.day) as day
    from marts.spot_discount as s
    where s.day >= (select h.spot_from from horizon_start as h)
    group by s.spot_offer_id, s.on_demand_offer_id
),

spot as (  -- that day's row (the table's grain: spot_offer_id, day), as savings
    select s.*, split_part(s.gpu_model, '-', 1) as gpu_family
    from marts.spot_discount as s
    semi join spot_days as l
        on
        s.spot_offer_id = l.spot_offer_id
        and s.on_demand_offer_id = l.on_demand_offer_id
        and s.day = l.day
    where s.day >= (select h.spot_from from horizon_start as h)
),

regions as (       -- each pair (line in a region against tier-1) latest within the horizon
    select r.*, split_part(r.gpu_model, '-', 1) as gpu_family
    from intermediate.int_regional_pairs as r
    where r.observed_date >= (select h.regions_from from horizon_start as h)
        and r.country = 'CN' and r.region_group in ('Inner Mongolia', 'Guizhou')
        and r.price_ratio is not null and r.offer_kind <> 'spot'
    qualify row_number() over (
            partition by
                r.vendor, r.offer_line, r.gpu_model, r.gpu_variant, r.gpu_count,
                r.gpu_fraction,
                r.vram_gb,
                r.offer_kind,
                r.billing_period,
                r.country,
                r.region_group,
                r.reference
            order by r.observed_date desc
        ) = 1
),

dips as (
    select m.*, split_part(m.gpu_model, '-', 1) as gpu_family
    from marts.month_end_dip as m
    where m.dip_pct is not null
        and m.month = (
            select max(d.month) from marts.month_end_dip as d
            where d.dip_pct is not null
        )
),

releases as (
    select m.*, split_part(m.gpu_model, '-', 1) as gpu_family
    from marts.month_end_capacity as m
    where m.available_release_pct is not null
        and m.month = (
            select max(d.month) from marts.month_end_capacity as d
            where d.available_release_pct is not null
        )
),

stable as (       -- offer-months followed through enough day-to-day changes in days 2-22
    select *
    from marts.month_phase_stability
    where start_mid_changes >= (select p.stable_min_changes from params as p)
        and offer_kind <> 'spot'
        and list_contains((select p.mission_families from params as p), gpu_family)
),

holidays as (
    select *
    from marts.holiday_discount
    where offer_kind <> 'spot'
        and list_contains((select p.mission_families from params as p), gpu_family)
),

nights as not materialized (
    -- inlined where it is read, so that its latest day (below) is found in the newest row groups
    -- of off_peak_discount and that day's rows by a scan that skips the others, instead of
    -- copying every row of every local day first
    select *
    from marts.off_peak_discount
    where offer_kind = 'on_demand'
        -- the macro itself, not params' column: a scalar subquery here is a nested-loop join
        -- of every row of the table's history (its latest day is found below) to params
        and list_contains(mission_families(), gpu_family)
),

evidence as (     -- claim, day, vendor, line, region, offer ids, value, offers
    select
        'a100_80gb_beijing_hourly' as claim_id, observed_date as measured_on, vendor, offer_line,
        region_group, [offer_id] as offer_ids, per_gpu_hour as value, 1 as offers
    from whole_hourly
    where gpu_model = 'A100-80GB' and region_group = 'Beijing'
    union all
    select
        'slice_20gb_hourly' as claim_id, observed_date as measured_on, vendor, offer_line,
        region_group, [offer_id] as offer_ids, instance_hour as value, 1 as offers
    from china_slices
    where vram_gb = 20
    union all
    select
        'slice_40gb_hourly' as claim_id, observed_date as measured_on, vendor, offer_line,
        region_group, [offer_id] as offer_ids, instance_hour as value, 1 as offers
    from china_slices
    where vram_gb = 40
    union all
    select
        'slice_share_of_whole' as claim_id, day as measured_on, vendor, offer_line, region_group,
        [slice_offer_id] as offer_ids, 100 * slice_to_whole_ratio as value, 1 as offers
    from slices
    where list_contains((select p.mission_families from params as p), gpu_family)
    union all
    select
        'quarter_a100_share_of_whole' as claim_id, day as measured_on, vendor, offer_line,
        region_group, [slice_offer_id] as offer_ids, 100 * slice_to_whole_ratio as value,
        1 as offers
    from slices
    where gpu_family = 'A100'
    union all
    select
        'half_a100_hourly' as claim_id, observed_date as measured_on, vendor, offer_line,
        region_group, [offer_id] as offer_ids, instance_hour as value, 1 as offers
    from china_slices
    where gpu_fraction = 0.5
    union all
    select
        'a100_80gb_monthly' as claim_id, observed_date as measured_on, vendor, offer_line,
        region_group, [offer_id] as offer_ids,
        -- the monthly price as listed
        round(instance_hour * (select p.hours_per_month from params as p), 2) as value,
        1 as offers
    from china_monthly
    where gpu_count = 1
    union all
    select
        'server_8gpu_monthly' as claim_id, observed_date as measured_on, vendor, offer_line,
        region_group, [offer_id] as offer_ids,
        round(instance_hour * (select p.hours_per_month from params as p), 2) as value,
        1 as offers
    from china_monthly
    where gpu_count = 8
    union all
    select
        'server_8gpu_share_of_single' as claim_id, day as measured_on, vendor, offer_line,
        region_group, [server_offer_id] as offer_ids, 100 * server_to_single_ratio as value,
        1 as offers
    from servers
    where list_contains((select p.mission_families from params as p), gpu_family)
    union all
    select
        'jiangsu_a100_80gb_hourly' as claim_id, observed_date as measured_on, vendor, offer_line,
        region_group, [offer_id] as offer_ids, per_gpu_hour as value, 1 as offers
    from whole_hourly
    where gpu_model = 'A100-80GB' and region_group = 'Jiangsu'
    union all
    select
        'jiangsu_h800_hourly' as claim_id, observed_date as measured_on, vendor, offer_line,
        region_group, [offer_id] as offer_ids, per_gpu_hour as value, 1 as offers
    from whole_hourly
    where gpu_family = 'H800' and region_group = 'Jiangsu'
    union all
    select
        'monthly_package_saving' as claim_id, day as measured_on, vendor, offer_line,
        region_group, [monthly_offer_id] as offer_ids, saving_pct as value, 1 as offers
    from savings
    where list_contains((select p.mission_families from params as p), gpu_family)
        and offer_kind <> 'spot'
    union all
    select
        'inner_mongolia_guizhou_discount' as claim_id, observed_date as measured_on, vendor,
        offer_line, region_group, region_offer_ids as offer_ids,
        100 * (1 - price_ratio) as value, region_offers as offers
    from regions
    where list_contains((select p.mission_families from params as p), gpu_family)
    union all
    select
        'spot_share_of_regular' as claim_id, day as measured_on, vendor, offer_line, region_group,
        [spot_offer_id] as offer_ids, 100 * spot_to_on_demand_ratio as value, 1 as offers
    from spot
    where list_contains((select p.mission_families from params as p), gpu_family)
    union all
    -- month end: one unit per group (vendor, card, variant, kind) and region; its value the
    -- group's median depth that month
    select
        'month_end_dips' as claim_id, month as measured_on, vendor,
        concat_ws('|', vendor, gpu_model, coalesce(gpu_variant, '-'), offer_kind) as offer_line,
        region_group, [concat_ws('|', source, region_code)] as offer_ids, dip_pct as value,
        offers_compared as offers
    from dips
    where list_contains((select p.mission_families from params as p), gpu_family)
        and offer_kind <> 'spot'
    union all
    select
        'month_end_capacity_release' as claim_id, month as measured_on, vendor,
        concat_ws('|', vendor, gpu_model, coalesce(gpu_variant, '-'), offer_kind) as offer_line,
        region_group, [concat_ws('|', source, region_code)] as offer_ids,
        available_release_pct as value,
        ceil(greatest(baseline_listed_offers, month_end_listed_offers))::bigint as offers
    from releases
    where list_contains((select p.mission_families from params as p), gpu_family)
        and offer_kind <> 'spot'
    union all
    select
        'month_start_mid_month_stable' as claim_id, s.local_month as measured_on, s.vendor,
        s.offer_line, s.region_group, [s.offer_id] as offer_ids,
        s.start_mid_mean_abs_change_pct as value, 1 as offers
    from stable as s
    where s.local_month = (select max(x.local_month) from stable as x)
    union all
    select
        'holiday_promotions' as claim_id, h.holiday_first_day as measured_on, h.vendor,
        h.offer_line, h.region_group, [h.offer_id] as offer_ids, h.holiday_discount_pct as value,
        1 as offers
    from holidays as h
    where h.holiday_first_day = (select max(x.holiday_first_day) from holidays as x)
    union all
    select
        'off_peak_discounts' as claim_id, n.local_date as measured_on, n.vendor, n.offer_line,
        n.region_group, [n.offer_id] as offer_ids, n.night_discount_pct as value, 1 as offers
    from nights as n
    where
        n.local_date = (
            select x.local_date from nights as x
            order by x.local_date desc limit 1
        )
),

units as (        -- region copies of one value of one vendor's line count once
    select
        e.claim_id,
        max(e.measured_on) as measured_on,
        e.vendor,
        e.offer_line,
        round(e.value, p.value_decimals) as value,
        count(*) as copies,
        sum(e.offers) as offers,
        list_sort(list_distinct(flatten(list(e.offer_ids)))) as offer_ids,
        list_sort(list_distinct(list(e.region_group))) as region_groups
    from evidence as e
    cross join params as p
    where e.value is not null
    group by e.claim_id, e.vendor, e.offer_line, round(e.value, p.value_decimals)
)

select
    claim_id,                                           -- the claim (marts.market_claims)
    measured_on,                                        -- day (latest copy's), month, holiday
    vendor,
    offer_line,                                         -- the vendor's line (group at month end)
    value,                                              -- the claim's unit: CNY or %
    copies,                                             -- rows collapsed into this unit (regions)
    offers,                                             -- offers behind the unit
    offer_ids,                                          -- their ids (month end: source|region)
    region_groups,                                      -- where the copies are listed
    row_number() over (partition by claim_id order by value, vendor, offer_line)
        as value_rank,                                  -- 1 = lowest value of the claim
    count(*) over (partition by claim_id) as distinct_offers  -- n of the claim's interval
from units
order by claim_id, value_rank
