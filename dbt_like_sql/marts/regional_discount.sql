/* Regional discount: one row per card, offer kind, billing period, day and region (country and
   region group: province in China, country elsewhere) with whole-card offers (gpu_fraction 1, any
   GPU count): how much cheaper the region is than the reference (China: tier-1 cities; elsewhere:
   the US) at the SAME vendor for the same offer line and configuration (machine per GPU, else
   SKU), the reference taken outside the region itself: a region that is the whole reference (the
   US; a card listed in one region only) has no row, its reason in marts.held_pairs, and a ratio
   outside the plausible range (intermediate.int_pair_rules) is held there too. A line's ratio
   (region / reference) is the median of its daily ratios over its paired days of the trailing 14
   days
   (intermediate.int_regional_line_window; one day on a new install); a vendor's ratio is the
   median of its line ratios; the region's ratio is the median across the vendors paired that
   day, so a vendor with many lines or many regional copies counts once, and a vendor present on
   one side only counts not at all. error_bound_pp states the error to expect against the lasting
   gap: each list price wanders around its level (+/- 1 % assumed, or what the market's lines or
   the paired vendors' own have been seen to move over 28 days, if more), and the median over n
   paired vendors narrows that by sqrt(n). A region with offers but no vendor that also has a
   reference offer of the same line keeps its row with a NULL discount and vendors_paired = 0.
   Incremental by day: a row reads its own day of the intermediate models (whose windows read
   earlier days only; since_day() is 0001-01-01 in a full build). */
-- grain: gpu_model, offer_kind, billing_period, day, country, region_group
-- audit: ratio_in_order: ratio_low > ratio_high
-- audit: not_its_own_reference: list_contains(reference_region_groups, region_group)
-- incremental: day
with settings as (
    -- the least wander assumed of one list price around its level (%), until the market has
    -- shown more: a ratio of two such prices can sit 2 x this from the lasting gap
    select 1.0 as price_wander_floor_pct
),

pairs as (
    select *
    from intermediate.int_regional_pairs
    where gpu_fraction = 1
        and observed_date >= since_day()
        and not own_reference       -- a region is never its own reference (marts.held_pairs)
),

windows as (
    select *
    from intermediate.int_regional_line_window
    where gpu_fraction = 1
        and observed_date >= since_day()
),

-- how far the market's regional ratios move (pp): the 90th percentile over every line paired
-- that day (every card, fraction and region) of its 28-day wander; a few re-priced lines do not
-- move it, and slow movers borrow the amplitude that quicker ones have shown
market_wander as (
    select
        observed_date,
        quantile_cont(wander_pp, 0.9) as wander_pp
    from intermediate.int_regional_line_window
    where observed_date >= since_day()
    group by observed_date
),

vendor_ratios as (
    select
        p.observed_date,
        p.gpu_model,
        p.offer_kind,
        p.billing_period,
        p.country,
        p.region_group,
        p.vendor,
        median(w.window_ratio) as vendor_ratio,         -- NULL: no paired line
        median(w.wander_pp) as vendor_wander_pp,        -- its lines' own 28-day wander
        max(w.window_days) as window_days,
        median(p.region_price_cny_per_gpu_hour) filter (where p.price_ratio is not null)
            as paired_region_price,
        median(p.reference_price_cny_per_gpu_hour) as paired_reference_price,
        median(p.region_price_cny_per_gpu_hour) as any_region_price
    from pairs as p
    left join windows as w
        on p.observed_date = w.observed_date
        and p.vendor = w.vendor
        and p.offer_line = w.offer_line
        and p.machine_config = w.machine_config
        and p.country = w.country
        and p.region_group = w.region_group
    group by
        p.observed_date, p.gpu_model, p.offer_kind, p.billing_period, p.country,
        p.region_group, p.vendor
),

evidence as (
    select
        observed_date,
        gpu_model,
        offer_kind,
        billing_period,
        country,
        region_group,
        any_value(reference) as reference,
        count(distinct vendor) as vendors,
        count(distinct vendor) filter (where price_ratio is not null) as vendors_paired,
        coalesce(list_unique(flatten(
            list(region_offer_ids || reference_offer_ids) filter (where price_ratio is not null)
        )), 0) as offers,
        coalesce(sum(distinct_offers) filter (where price_ratio is not null), 0)
            as distinct_offers,
        list_sort(list_distinct(flatten(
            list(reference_region_groups) filter (where price_ratio is not null)
        ))) as reference_region_groups
    from pairs
    group by observed_date, gpu_model, offer_kind, billing_period, country, region_group
),

region_ratios as (
    select
        observed_date,
        gpu_model,
        offer_kind,
        billing_period,
        country,
        region_group,
        median(vendor_ratio) as median_vendor_ratio,
        min(vendor_ratio) as ratio_low,
        max(vendor_ratio) as ratio_high,
        count(vendor_ratio) as vendors_with_ratio,
        max(vendor_wander_pp) as vendor_wander_pp,
        max(window_days) as window_days,
        median(paired_region_price) as paired_region_price,
        median(paired_reference_price) as paired_reference_price,
        median(any_region_price) as any_region_price
    from vendor_ratios
    group by observed_date, gpu_model, offer_kind, billing_period, country, region_group
)

select
    e.observed_date as day,
    e.gpu_model,
    e.offer_kind,
    e.billing_period,
    e.country,
    e.region_group,                                     -- province in China, country elsewhere
    'same vendor' as comparison,                        -- each vendor against itself
    e.reference,                                        -- 'CN tier-1 cities' | 'US'
    e.reference_region_groups,                          -- where the reference prices are from
    e.vendors,                                          -- vendors with whole cards in the region
    e.vendors_paired,                                   -- ... that also list the line there
    e.offers,                                           -- distinct offer ids paired (both sides)
    -- distinct (vendor, line, price) paired: a price copied to many regions is one
    e.distinct_offers::bigint as distinct_offers,
    -- median over paired vendors of their region price (all vendors if none)
    coalesce(r.paired_region_price, r.any_region_price)::decimal(18, 6)
        as median_price_cny_per_gpu_hour,
    -- the same vendors' reference price; NULL: no vendor paired
    r.paired_reference_price::decimal(18, 6)
        as reference_price_cny_per_gpu_hour,
    r.ratio_low,                                        -- lowest vendor ratio (region/reference)
    r.ratio_high,                                       -- highest vendor ratio
    -- positive = cheaper than the reference; from the median vendor ratio
    (100 * (1 - r.median_vendor_ratio))::double as discount_pct,
    -- the error to expect of discount_pct against the lasting gap (pp): how far one vendor's
    -- ratio can sit from it (2 x the assumed wander, or the market's or a paired vendor's seen
    -- wander if larger), narrowed by the median over the paired vendors
    (
        greatest(2 * s.price_wander_floor_pct, m.wander_pp, r.vendor_wander_pp)
        / sqrt(nullif(r.vendors_with_ratio, 0))
    )::double as error_bound_pp,                        -- the error to expect, pp
    r.window_days                                       -- most paired days behind a line (1-14)
from evidence as e
cross join settings as s
inner join region_ratios as r
    on e.observed_date = r.observed_date
    and e.gpu_model = r.gpu_model
    and e.offer_kind = r.offer_kind
    and e.billing_period = r.billing_period
    and e.country = r.country
    and e.region_group = r.region_group
left join market_wander as m on e.observed_date = m.observed_date
order by day, e.gpu_model, e.offer_kind, e.billing_period, e.country, e.region_group
