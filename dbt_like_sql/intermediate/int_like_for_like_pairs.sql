/* Like-for-like pairs: one row per comparison, offer and UTC day, the offer against the one partner
   it is priced against: an offer of the same day, source, vendor and region that differs from it
   only in what the comparison measures. The pairing marts (slice_to_whole_ratio,
   multi_gpu_discount, spot_discount, monthly_vs_hourly_saving) read their rows here; what each
   comparison pairs is one row of the `comparisons` CTE and one line of each role below:
   * slice_to_whole: a slice (gpu_fraction < 1) against a whole single card of the same card model
     and variant, offer kind and billing period;
   * multi_gpu: a server of whole cards (gpu_count > 1) against the same single card;
   * spot: a spot offer against an on-demand one of the same billing period and of its own SKU (the
     vendor's instance type) or else of its line (card model and variant, GPU count, slice
     fraction, VRAM);
   * monthly_vs_hourly: a monthly offer against an hourly one of the same offer kind and line.
   An unnamed variant (NULL) pairs only with an unnamed one. The partner: the one with the offer's
   own SKU first where the comparison prefers it (pairing 'sku', else 'line'; the card comparisons
   say 'card'), then the cheapest per GPU-hour, ties to the lowest offer_id. An offer without a
   partner that day has no row. Counted offers only, on both sides. Incremental by day: a row
   depends on its own day only (since_day() is 0001-01-01 in a full build). */
-- incremental: observed_date
with comparisons as (
    select
        c.comparison,
        c.same_offer_kind,      -- the partner has the offer's kind (on-demand, spot, ...)
        c.same_billing_period,  -- ... its billing period (hour, month)
        c.same_line,            -- ... its GPU count, slice fraction and VRAM (else the card only)
        c.prefers_sku,          -- a partner with the offer's own SKU comes first
        c.sku_outside_line      -- a partner with the offer's own SKU pairs even outside its line
    from (
        values
        ('slice_to_whole', true, true, false, false, false),
        ('multi_gpu', true, true, false, false, false),
        ('spot', false, true, true, true, true),
        ('monthly_vs_hourly', true, false, true, true, false)
    ) as c (
        comparison, same_offer_kind, same_billing_period, same_line, prefers_sku, sku_outside_line
    )
),

offers as (
    select *
    from intermediate.int_offer_daily
    where observed_date >= since_day()
        and counted  -- counted once: a non-direct twin of a direct offer is left out
),

-- the offers each comparison prices
priced as (
    select
        c.*,
        o.*
    from offers as o
    inner join comparisons as c
        on case c.comparison
            when 'slice_to_whole' then o.gpu_fraction < 1
            when 'multi_gpu' then o.gpu_fraction = 1 and o.gpu_count > 1
            when 'spot' then o.offer_kind = 'spot'
            when 'monthly_vs_hourly' then o.billing_period = 'month'
        end
),

-- the offers each comparison prices them against
partners as (
    select
        c.comparison,
        o.*
    from offers as o
    inner join comparisons as c
        on case c.comparison
            when 'slice_to_whole' then o.gpu_fraction = 1 and o.gpu_count = 1
            when 'multi_gpu' then o.gpu_fraction = 1 and o.gpu_count = 1
            when 'spot' then o.offer_kind = 'on_demand' and o.close_price_cny_per_gpu_hour > 0
            when 'monthly_vs_hourly'
                then o.billing_period = 'hour' and o.close_price_cny_per_gpu_hour > 0
        end
)

select
    s.comparison,                                       -- see the header
    s.observed_date,
    s.source,
    s.vendor,
    s.vendor_kind,                                      -- idc|marketplace|gpu_cloud|hyperscaler
    s.region_code,
    s.region_group,
    s.gpu_model,
    s.gpu_variant,                                      -- NULL: the listing did not say
    s.gpu_count,
    s.gpu_fraction,
    s.vram_gb,
    s.offer_kind,
    s.billing_period,
    s.offer_line,                                       -- the priced offer's line
    s.offer_id,                                         -- the priced offer
    s.sku,
    s.close_price_cny_per_gpu_hour as price_cny_per_gpu_hour, -- the day's close, CNY/GPU-h
    s.close_instance_price_cny_per_hour as instance_price_cny_per_hour,
    p.offer_id as partner_offer_id,                     -- the offer it is priced against
    p.sku as partner_sku,                               -- the partner's SKU
    p.close_price_cny_per_gpu_hour
        as partner_price_cny_per_gpu_hour,              -- the partner's close, CNY/GPU-h
    case
        when not s.prefers_sku then 'card'
        when s.sku = p.sku then 'sku'
        else 'line'
    end as pairing                                      -- 'sku' | 'line' | 'card'
from priced as s
inner join partners as p
    on s.comparison = p.comparison
    and s.observed_date = p.observed_date
    and s.source = p.source
    and s.vendor = p.vendor
    and s.region_code = p.region_code
    and (s.offer_kind = p.offer_kind or not s.same_offer_kind)
    and (s.billing_period = p.billing_period or not s.same_billing_period)
    and (
        (
            s.gpu_model = p.gpu_model
            and s.gpu_variant is not distinct from p.gpu_variant
            and (
                not s.same_line
                or (
                    s.gpu_count = p.gpu_count
                    and s.gpu_fraction = p.gpu_fraction
                    and s.vram_gb = p.vram_gb
                )
            )
        )
        or (s.sku_outside_line and s.sku = p.sku)
    )
qualify
    row_number() over (
        partition by s.comparison, s.offer_id, s.observed_date
        order by
            (s.prefers_sku and s.sku = p.sku) desc,
            p.close_price_cny_per_gpu_hour asc,
            p.offer_id asc
    ) = 1
order by s.observed_date, s.comparison, s.offer_id
