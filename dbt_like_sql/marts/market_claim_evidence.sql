/* Market-claim evidence: one row per claim (marts.market_claims) and DISTINCT evidence unit: the
   values each claim's median and interval are computed from, so every verdict can be traced to
   the offers behind it. A unit is one vendor's offer line with one value: the region copies of
   an offer (same vendor, line and value listed in several regions) are one unit, with every
   copy's offer id and region listed. Each claim reads the latest day (month, holiday) of the
   table it measures; scopes follow the guides' words, see docs/market-claims.md. Claims about no
   named card look at the four mission families only (A100, H100, H800, RTX 4090). */
with latest_offers as (
    select *
    from intermediate.int_offer_daily
    where observed_date = (select max(observed_date) from intermediate.int_offer_daily)
),

prices as (       -- price claims: the offer's own price, as the guide quotes it
    select *, close_price_cny_per_gpu_hour::double as per_gpu_hour,
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

slices as (
    select *, split_part(gpu_model, '-', 1) as gpu_family
    from marts.slice_to_whole_ratio
    where day = (select max(day) from marts.slice_to_whole_ratio) and gpu_fraction = 0.25
),

servers as (
    select *, split_part(gpu_model, '-', 1) as gpu_family
    from marts.multi_gpu_discount
    where day = (select max(day) from marts.multi_gpu_discount) and server_gpu_count = 8
),

savings as (
    select *, split_part(gpu_model, '-', 1) as gpu_family
    from marts.monthly_vs_hourly_saving
    where day = (select max(day) from marts.monthly_vs_hourly_saving)
),

spot as (
    select *, split_part(gpu_model, '-', 1) as gpu_family
    from marts.spot_discount
    where day = (select max(day) from marts.spot_discount)
),

regions as (
    select *, split_part(gpu_model, '-', 1) as gpu_family
    from intermediate.int_regional_pairs
    where observed_date = (select max(observed_date) from intermediate.int_regional_pairs)
        and country = 'CN' and region_group in ('Inner Mongolia', 'Guizhou')
        and price_ratio is not null and offer_kind <> 'spot'
),

dips as (
    select *, split_part(gpu_model, '-', 1) as gpu_family
    from marts.month_end_dip
    where dip_pct is not null
        and month = (select max(month) from marts.month_end_dip where dip_pct is not null)
),

releases as (
    select *, split_part(gpu_model, '-', 1) as gpu_family
    from marts.month_end_capacity
    where available_release_pct is not null
        and month = (select max(month) from marts.month_end_capacity
                     where available_release_pct is not null)
),

stable as (       -- offer-months followed through at least 10 day-to-day changes in days 2-22
    select *
    from marts.month_phase_stability
    where start_mid_changes >= 10 and offer_kind <> 'spot'
        and gpu_family in ('A100', 'H100', 'H800', 'RTX4090')
),

holidays as (
    select *
    from marts.holiday_discount
    where offer_kind <> 'spot' and gpu_family in ('A100', 'H100', 'H800', 'RTX4090')
),

nights as (
    select *
    from marts.off_peak_discount
    where offer_kind = 'on_demand' and gpu_family in ('A100', 'H100', 'H800', 'RTX4090')
),

evidence as (     -- claim, day, vendor, line, region, offer ids, value, offers
    select 'a100_80gb_beijing_hourly' as claim_id, observed_date as measured_on, vendor,
           offer_line, region_group, [offer_id] as offer_ids, per_gpu_hour as value,
           1 as offers
    from whole_hourly where gpu_model = 'A100-80GB' and region_group = 'Beijing'
    union all
    select 'slice_20gb_hourly', observed_date, vendor, offer_line, region_group, [offer_id],
           instance_hour, 1
    from china_slices where vram_gb = 20
    union all
    select 'slice_40gb_hourly', observed_date, vendor, offer_line, region_group, [offer_id],
           instance_hour, 1
    from china_slices where vram_gb = 40
    union all
    select 'slice_share_of_whole', day, vendor, offer_line, region_group, [slice_offer_id],
           100 * slice_to_whole_ratio, 1
    from slices where gpu_family in ('A100', 'H100', 'H800', 'RTX4090')
    union all
    select 'quarter_a100_share_of_whole', day, vendor, offer_line, region_group,
           [slice_offer_id], 100 * slice_to_whole_ratio, 1
    from slices where gpu_family = 'A100'
    union all
    select 'half_a100_hourly', observed_date, vendor, offer_line, region_group, [offer_id],
           instance_hour, 1
    from china_slices where gpu_fraction = 0.5
    union all
    select 'a100_80gb_monthly', observed_date, vendor, offer_line, region_group, [offer_id],
           round(instance_hour * 730, 2), 1             -- the monthly price as listed
    from china_monthly where gpu_count = 1
    union all
    select 'server_8gpu_monthly', observed_date, vendor, offer_line, region_group, [offer_id],
           round(instance_hour * 730, 2), 1
    from china_monthly where gpu_count = 8
    union all
    select 'server_8gpu_share_of_single', day, vendor, offer_line, region_group,
           [server_offer_id], 100 * server_to_single_ratio, 1
    from servers where gpu_family in ('A100', 'H100', 'H800', 'RTX4090')
    union all
    select 'jiangsu_a100_80gb_hourly', observed_date, vendor, offer_line, region_group,
           [offer_id], per_gpu_hour, 1
    from whole_hourly where gpu_model = 'A100-80GB' and region_group = 'Jiangsu'
    union all
    select 'jiangsu_h800_hourly', observed_date, vendor, offer_line, region_group, [offer_id],
           per_gpu_hour, 1
    from whole_hourly where gpu_family = 'H800' and region_group = 'Jiangsu'
    union all
    select 'monthly_package_saving', day, vendor, offer_line, region_group, [monthly_offer_id],
           saving_pct, 1
    from savings where gpu_family in ('A100', 'H100', 'H800', 'RTX4090') and offer_kind <> 'spot'
    union all
    select 'inner_mongolia_guizhou_discount', observed_date, vendor, offer_line, region_group,
           region_offer_ids, 100 * (1 - price_ratio), region_offers
    from regions where gpu_family in ('A100', 'H100', 'H800', 'RTX4090')
    union all
    select 'spot_share_of_regular', day, vendor, offer_line, region_group, [spot_offer_id],
           100 * spot_to_on_demand_ratio, 1
    from spot where gpu_family in ('A100', 'H100', 'H800', 'RTX4090')
    union all
    -- month end: one unit per group (vendor, card, variant, kind) and region; its value the
    -- group's median depth that month
    select 'month_end_dips', month, vendor,
           concat_ws('|', vendor, gpu_model, coalesce(gpu_variant, '-'), offer_kind), region_group,
           [concat_ws('|', source, region_code)], dip_pct, offers_compared
    from dips where gpu_family in ('A100', 'H100', 'H800', 'RTX4090') and offer_kind <> 'spot'
    union all
    select 'month_end_capacity_release', month, vendor,
           concat_ws('|', vendor, gpu_model, coalesce(gpu_variant, '-'), offer_kind), region_group,
           [concat_ws('|', source, region_code)], available_release_pct,
           ceil(greatest(baseline_listed_offers, month_end_listed_offers))::bigint
    from releases where gpu_family in ('A100', 'H100', 'H800', 'RTX4090')
        and offer_kind <> 'spot'
    union all
    select 'month_start_mid_month_stable', local_month, vendor, offer_line, region_group,
           [offer_id], start_mid_mean_abs_change_pct, 1
    from stable where local_month = (select max(local_month) from stable)
    union all
    select 'holiday_promotions', holiday_first_day, vendor, offer_line, region_group, [offer_id],
           holiday_discount_pct, 1
    from holidays where holiday_first_day = (select max(holiday_first_day) from holidays)
    union all
    select 'off_peak_discounts', local_date, vendor, offer_line, region_group, [offer_id],
           night_discount_pct, 1
    from nights where local_date = (select max(local_date) from nights)
),

units as (        -- region copies of one value of one vendor's line count once
    select
        claim_id,
        any_value(measured_on) as measured_on,
        vendor,
        offer_line,
        round(value, 6) as value,
        count(*) as copies,
        sum(offers) as offers,
        list_sort(list_distinct(flatten(list(offer_ids)))) as offer_ids,
        list_sort(list_distinct(list(region_group))) as region_groups
    from evidence
    where value is not null
    group by claim_id, vendor, offer_line, round(value, 6)
)

select
    claim_id,                                           -- the claim (marts.market_claims)
    measured_on,                                        -- day, month or holiday measured
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
