/* Observations with the fields every signal derives: card family, UTC day and month, the vendor's
   local calendar (time zone, local day and month), the region group signals compare (province in
   China, country elsewhere), the instance's own hourly price, and the offer line (what an offer
   is, apart from where and at what price) that like-for-like comparisons pair on. */
-- materialized: view
with zoned as (
    select
        o.*,
        -- The vendor's billing calendar: Beijing time for offers in China and for every Chinese
        -- vendor's source (named *_cn), UTC elsewhere. Zones must be UTC or east of it: the
        -- incremental local-day models rebuild from the UTC day of the new observations.
        case
            when o.country = 'CN' or o.source like '%\_cn' escape '\' then 'Asia/Shanghai'
            else 'UTC'
        end as local_time_zone
    from observations as o
)

select
    -- every column of observations passes through, however many it has (hence the noqa)
    z.*,  -- noqa: AM04
    split_part(z.gpu_model, '-', 1) as gpu_family,      -- A100, H100, H800, RTX4090, RTX4090D
    timezone('UTC', z.observed_at)::date as observed_date,
    date_trunc('month', timezone('UTC', z.observed_at))::date as observed_month,
    timezone(z.local_time_zone, z.observed_at)::date as local_date,
    date_trunc('month', timezone(z.local_time_zone, z.observed_at))::date as local_month,
    case when z.country = 'CN' then coalesce(z.province_or_state, 'CN') else z.country end
        as region_group,
    z.price_per_gpu_hour_cny * z.gpu_count * z.gpu_fraction as instance_price_cny_per_hour,
    -- The offer line: the same vendor's same thing, wherever and whenever it is listed.
    concat_ws(
        '|', z.vendor, z.gpu_model, coalesce(z.gpu_variant, '-'), z.gpu_count,
        z.gpu_fraction::double, z.vram_gb::double, z.offer_kind, z.billing_period
    ) as offer_line
from zoned as z
