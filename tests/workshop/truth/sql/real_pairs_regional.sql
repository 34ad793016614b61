/* One row per marts.regional_discount row with a discount on a published prices.db, with whether
   the region holds offers of the reference itself that day (the US; a Chinese province with
   tier-1 city offers), whether its vendor ratios lie outside the plausible range (`pair_rules`,
   registered by real_pairs.py), and the mart's own columns. */
with own_reference as (
    select distinct observed_date, region_group
    from intermediate.int_offer_daily
    where (country = 'CN' and is_tier1_city) or country = 'US'
)

select
    d.*,
    o.region_group is not null as region_in_reference,
    d.ratio_low < r.ratio_low or d.ratio_high > r.ratio_high as out_of_range
from marts.regional_discount as d
inner join pair_rules as r on r.comparison = 'regional'
left join own_reference as o on d.day = o.observed_date and d.region_group = o.region_group
where d.discount_pct is not null
