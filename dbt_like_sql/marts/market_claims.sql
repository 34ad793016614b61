/* Market claims: one row per rule of thumb of the design brief (section 1), measured on the latest
   day (month for the month-end dip) of the table each measure reads, with a verdict: 'holds',
   'does not hold', or 'not enough data' when no row supports the measure. */
-- alias: market_claims
with latest_offers as (
    select *
    from intermediate.int_offer_daily
    where observed_date = (select max(observed_date) from intermediate.int_offer_daily)
),

latest_slices as (
    select *
    from marts.slice_to_whole_ratio
    where day = (select max(day) from marts.slice_to_whole_ratio)
),

latest_servers as (
    select *
    from marts.multi_gpu_discount
    where day = (select max(day) from marts.multi_gpu_discount)
),

latest_savings as (
    select *
    from marts.monthly_vs_hourly_saving
    where day = (select max(day) from marts.monthly_vs_hourly_saving)
),

latest_regions as (
    select *
    from marts.regional_discount
    where day = (select max(day) from marts.regional_discount)
),

latest_spot as (
    select *
    from marts.spot_discount
    where day = (select max(day) from marts.spot_discount)
),

latest_dips as (
    select *
    from marts.month_end_dip
    where month = (select max(month) from marts.month_end_dip)
),

measures as (
    select
        1 as claim_no,
        'a100_80gb_beijing_hourly' as claim_id,
        'A100 80 GB whole card costs 50-80 CNY/h in Beijing' as claim,
        'median price of whole single-card A100-80GB hourly on-demand offers in Beijing, '
        || 'CNY/h' as measure,
        median(close_price_cny_per_gpu_hour)::double as measured_value,
        50.0 as expected_low,
        80.0 as expected_high,
        false as low_exclusive,
        count(*) as evidence_rows
    from latest_offers
    where gpu_model = 'A100-80GB' and gpu_fraction = 1 and gpu_count = 1
        and offer_kind = 'on_demand' and billing_period = 'hour' and region_group = 'Beijing'

    union all
    select
        2,
        'slice_20gb_hourly',
        'A 20 GB slice costs 20-30 CNY/h',
        'median instance price of A100 slices with 20 GB of VRAM, hourly on-demand offers in '
        || 'China, CNY/h',
        median(close_instance_price_cny_per_hour)::double,
        20.0,
        30.0,
        false,
        count(*)
    from latest_offers
    where gpu_family = 'A100' and gpu_fraction < 1 and vram_gb = 20 and country = 'CN'
        and offer_kind = 'on_demand' and billing_period = 'hour'

    union all
    select
        3,
        'slice_40gb_hourly',
        'A 40 GB slice costs 30-50 CNY/h',
        'median instance price of A100 slices with 40 GB of VRAM, hourly on-demand offers in '
        || 'China, CNY/h',
        median(close_instance_price_cny_per_hour)::double,
        30.0,
        50.0,
        false,
        count(*)
    from latest_offers
    where gpu_family = 'A100' and gpu_fraction < 1 and vram_gb = 40 and country = 'CN'
        and offer_kind = 'on_demand' and billing_period = 'hour'

    union all
    select
        4,
        'slice_share_of_whole',
        'A slice costs 30-50 % of the whole card of the same model (not a pro-rata fraction)',
        'median slice_to_whole_ratio x 100 over all slices with a whole card at the same '
        || 'vendor and region, %',
        100 * median(slice_to_whole_ratio),
        30.0,
        50.0,
        false,
        count(*)
    from latest_slices

    union all
    select
        5,
        'quarter_a100_share_of_whole',
        'A 1/4 A100 instance costs 1/3-1/2 of the whole card',
        'median slice_to_whole_ratio x 100 of A100 slices with gpu_fraction 0.25, %',
        100 * median(slice_to_whole_ratio),
        100.0 / 3,
        50.0,
        false,
        count(*)
    from latest_slices
    where gpu_model like 'A100%' and gpu_fraction = 0.25

    union all
    select
        6,
        'half_a100_hourly',
        'A 1/2 A100 instance costs about 15 CNY/h',
        'median instance price of A100 half slices (gpu_fraction 0.5), hourly on-demand offers '
        || 'in China, CNY/h',
        median(close_instance_price_cny_per_hour)::double,
        12.0,
        18.0,
        false,
        count(*)
    from latest_offers
    where gpu_family = 'A100' and gpu_fraction = 0.5 and country = 'CN'
        and offer_kind = 'on_demand' and billing_period = 'hour'

    union all
    select
        7,
        'a100_80gb_monthly',
        'A100 80 GB costs 8,000-14,000 CNY/month',
        'median listed monthly price of whole single-card A100-80GB offers (not spot) in '
        || 'China, CNY/month',
        median(round(close_instance_price_cny_per_hour * 730, 2))::double,  -- as listed
        8000.0,
        14000.0,
        false,
        count(*)
    from latest_offers
    where gpu_model = 'A100-80GB' and gpu_fraction = 1 and gpu_count = 1
        and billing_period = 'month' and offer_kind <> 'spot' and country = 'CN'

    union all
    select
        8,
        'server_8gpu_monthly',
        'An 8-GPU A100 80 GB server costs 60,000-80,000 CNY/month',
        'median listed monthly price of 8 x A100-80GB servers (not spot) in China, CNY/month',
        median(round(close_instance_price_cny_per_hour * 730, 2))::double,  -- as listed
        60000.0,
        80000.0,
        false,
        count(*)
    from latest_offers
    where gpu_model = 'A100-80GB' and gpu_fraction = 1 and gpu_count = 8
        and billing_period = 'month' and offer_kind <> 'spot' and country = 'CN'

    union all
    select
        9,
        'server_8gpu_share_of_single',
        'A whole 8-GPU server is discounted to 70-85 % of 8 x the single-card price',
        'median server_to_single_ratio x 100 of 8-GPU servers against a single card at the '
        || 'same vendor and region, %',
        100 * median(server_to_single_ratio),
        70.0,
        85.0,
        false,
        count(*)
    from latest_servers
    where server_gpu_count = 8

    union all
    select
        10,
        'jiangsu_a100_80gb_hourly',
        'Jiangsu hourly: A100 80 GB costs 20-35 CNY/h',
        'median price of whole single-card A100-80GB hourly on-demand offers in Jiangsu, CNY/h',
        median(close_price_cny_per_gpu_hour)::double,
        20.0,
        35.0,
        false,
        count(*)
    from latest_offers
    where gpu_model = 'A100-80GB' and gpu_fraction = 1 and gpu_count = 1
        and offer_kind = 'on_demand' and billing_period = 'hour' and region_group = 'Jiangsu'

    union all
    select
        11,
        'jiangsu_h800_hourly',
        'Jiangsu hourly: H800 costs 40-60 CNY/h',
        'median price of whole single-card H800 hourly on-demand offers in Jiangsu, CNY/h',
        median(close_price_cny_per_gpu_hour)::double,
        40.0,
        60.0,
        false,
        count(*)
    from latest_offers
    where gpu_family = 'H800' and gpu_fraction = 1 and gpu_count = 1
        and offer_kind = 'on_demand' and billing_period = 'hour' and region_group = 'Jiangsu'

    union all
    select
        12,
        'monthly_package_saving',
        'Monthly packages save 20-40 %+ versus paying hourly for a full month',
        'median saving_pct of monthly packages against the hourly price of the same offer '
        || 'line, % (open-ended: at least 20)',
        median(saving_pct),
        20.0,
        null,
        false,
        count(*)
    from latest_savings

    union all
    select
        13,
        'inner_mongolia_guizhou_discount',
        'Inner Mongolia / Guizhou data centres are 20-30 % cheaper than tier-1 cities',
        'median discount_pct of Inner Mongolia and Guizhou against CN tier-1 cities, '
        || 'A100-80GB hourly on-demand, %',
        median(discount_pct),
        20.0,
        30.0,
        false,
        count(discount_pct)                             -- regions with a reference price
    from latest_regions
    where gpu_model = 'A100-80GB' and offer_kind = 'on_demand' and billing_period = 'hour'
        and region_group in ('Inner Mongolia', 'Guizhou')

    union all
    select
        14,
        'spot_share_of_regular',
        'Spot/preemptible instances cost about 20 % of the regular price',
        'median spot_to_on_demand_ratio x 100, %',
        100 * median(spot_to_on_demand_ratio),
        15.0,
        25.0,
        false,
        count(*)
    from latest_spot

    union all
    select
        15,
        'month_end_dips',
        'Around month end some low-price capacity is released (prices dip)',
        'share of month_end_dip groups with at least 2 complete months that show a dip_signal, '
        || '% (holds when above 0)',
        100.0 * count(*) filter (where dip_signal) / nullif(count(*), 0),
        0.0,
        100.0,
        true,                                           -- holds only when strictly above 0
        count(*)
    from latest_dips
    where months_observed >= 2
)

select
    claim_id,                                           -- short slug
    claim,                                              -- the rule of thumb, as the brief says it
    measure,                                            -- what was measured, in words
    round(measured_value, 4)::double as measured_value,
    expected_low::double as expected_low,
    expected_high::double as expected_high,             -- null: open-ended
    evidence_rows,                                      -- rows the measure rests on
    case
        when evidence_rows = 0 or measured_value is null then 'not enough data'
        when measured_value < expected_low then 'does not hold'
        when low_exclusive and measured_value = expected_low then 'does not hold'
        when measured_value > expected_high then 'does not hold'
        else 'holds'
    end as verdict
from measures
order by claim_no
