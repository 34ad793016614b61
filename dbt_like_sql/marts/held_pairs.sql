/* Held pairs: one row per comparison, day and pair that was NOT published, with the reason: a
   pair of two configurations, of a machine its source does not state, with a ratio outside the
   comparison's plausible range (intermediate.int_pair_rules), and, for the regional discount, a
   region that is the reference itself or has no reference offer of the vendor's line and
   configuration outside it. The pairing marts (slice_to_whole_ratio, multi_gpu_discount,
   spot_discount, monthly_vs_hourly_saving, regional_discount) publish only the other pairs.
   pair_key names the pair: the priced offer's offer_id, or for a regional line
   vendor|line|configuration|region group. Incremental by day: a row reads its own day only. */
-- grain: comparison, day, pair_key
-- audit: has_reason: held_reason is null
-- incremental: day
select
    comparison,                                         -- int_like_for_like_pairs, or regional
    observed_date as day,
    offer_id as pair_key,                               -- the priced offer
    source,
    vendor,
    region_group,
    gpu_model,
    offer_line,
    [offer_id] as offer_ids,                            -- the priced side's offers
    [partner_offer_id] as partner_offer_ids,            -- ... and its partner's
    price_cny_per_gpu_hour::decimal(18, 6) as price_cny_per_gpu_hour,
    partner_price_cny_per_gpu_hour::decimal(18, 6) as partner_price_cny_per_gpu_hour,
    ratio,                                              -- offer / partner; NULL: no partner price
    held_reason
from intermediate.int_like_for_like_pairs
where observed_date >= since_day()
    and held_reason is not null
union all
select
    'regional' as comparison,
    observed_date as day,
    concat_ws('|', offer_line, coalesce(machine_config, '-'), country, region_group) as pair_key,
    null as source,                                     -- a vendor's sources count as one
    vendor,
    region_group,
    gpu_model,
    offer_line,
    region_offer_ids as offer_ids,
    reference_offer_ids as partner_offer_ids,
    region_price_cny_per_gpu_hour as price_cny_per_gpu_hour,
    reference_price_cny_per_gpu_hour as partner_price_cny_per_gpu_hour,
    measured_ratio as ratio,
    held_reason
from intermediate.int_regional_pairs
where observed_date >= since_day()
    and held_reason is not null
order by day, comparison, pair_key
