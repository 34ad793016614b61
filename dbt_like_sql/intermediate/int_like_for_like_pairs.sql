/* Like-for-like pairs: one row per comparison, offer and UTC day, the offer against the one partner
   it is priced against: an offer of the same day, source, vendor and region that differs from it
   only in what the comparison measures. The pairing marts (slice_to_whole_ratio,
   multi_gpu_discount, spot_discount, monthly_vs_hourly_saving) publish the rows without a
   held_reason; marts.held_pairs lists the others. What each comparison pairs is one row of the
   `comparisons` CTE and one line of each role below:
   * slice_to_whole: a slice (gpu_fraction < 1) against a whole single card of the same card model
     and variant, offer kind and billing period;
   * multi_gpu: a server of whole cards (gpu_count > 1) against the same single card;
   * spot: a spot offer against an on-demand one of the same billing period and of its own SKU (the
     vendor's instance type) or else of its line (card model and variant, GPU count, slice
     fraction, VRAM);
   * monthly_vs_hourly: a monthly offer against an hourly one of the same offer kind and line.
   An unnamed variant (NULL) pairs only with an unnamed one. The machine must match too
   (configuration): vCPUs, memory and disk per GPU (per whole-GPU equivalent, so a server of n
   cards matches n single cards of the same machine) within intermediate.int_pair_rules'
   tolerance, or both offers are the same SKU (the vendor's own name for one instance type) with
   no stated machine against it. The partner: the one with the offer's own SKU first where the
   comparison prefers it (pairing 'sku', else 'line'; the card comparisons say 'card'), then one of
   the same configuration, then the cheapest per GPU-hour, ties to the lowest offer_id. The pair
   is held (held_reason) when its configurations differ, when either machine is not stated (a
   guess is no pair), or when its ratio lies outside the comparison's plausible range
   (intermediate.int_pair_rules). An offer without a partner that day has no row. Counted offers
   only, on both sides. Incremental by day: a row depends on its own day only (since_day() is
   0001-01-01 in a full build). */
-- grain: comparison, offer_id, observed_date
-- audit: not_itself: offer_id = partner_offer_id
-- audit: out_of_range: held_reason is null and ratio not between ratio_low and ratio_high
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
),

rules as (
    select * from intermediate.int_pair_rules
),

-- every partner an offer could be priced against, with how their machines compare: only what the
-- choice reads (a comparison's offers times their partners is the model's largest set of rows;
-- the offer's other columns are joined back to its one chosen partner in `paired`)
candidates as (
    select
        s.comparison,
        s.observed_date,
        s.offer_id,
        s.prefers_sku,
        s.sku,
        s.vcpus,
        s.memory_gib,
        s.disk_gb,
        p.offer_id as p_offer_id,
        p.sku as p_sku,
        p.close_price_cny_per_gpu_hour as p_price,
        s.gpu_count * s.gpu_fraction as s_gpus,         -- whole-GPU equivalents
        p.gpu_count * p.gpu_fraction as p_gpus,
        p.vcpus as p_vcpus,
        p.memory_gib as p_memory_gib,
        p.disk_gb as p_disk_gb,
        r.machine_tolerance
    from priced as s
    inner join partners as p
        on s.comparison = p.comparison
        and s.observed_date = p.observed_date
        and s.source = p.source
        and s.vendor = p.vendor
        and s.region_code = p.region_code
        and s.offer_id <> p.offer_id                    -- never an offer against itself
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
    inner join rules as r on s.comparison = r.comparison
),

-- each machine spec per whole-GPU equivalent: 'same', 'differs' or NULL (a side does not state it)
compared as (
    select
        *,
        case
            when vcpus is null or p_vcpus is null then null
            when abs(vcpus / s_gpus - p_vcpus / p_gpus)
                <= machine_tolerance * greatest(vcpus / s_gpus, p_vcpus / p_gpus) then 'same'
            else 'differs'
        end as vcpus_per_gpu,
        case
            when memory_gib is null or p_memory_gib is null then null
            when abs(memory_gib / s_gpus - p_memory_gib / p_gpus)
                <= machine_tolerance * greatest(memory_gib / s_gpus, p_memory_gib / p_gpus)
                then 'same'
            else 'differs'
        end as memory_per_gpu,
        case
            when disk_gb is null and p_disk_gb is null then 'same'  -- neither source states disks
            when disk_gb is null or p_disk_gb is null then null
            when abs(disk_gb / s_gpus - p_disk_gb / p_gpus)
                <= machine_tolerance * greatest(disk_gb / s_gpus, p_disk_gb / p_gpus) then 'same'
            else 'differs'
        end as disk_per_gpu
    from candidates
),

configured as (
    select
        *,
        case
            when 'differs' in (vcpus_per_gpu, memory_per_gpu, disk_per_gpu) then 'differs'
            when sku = p_sku then 'same_sku'
            when vcpus_per_gpu = 'same' and memory_per_gpu = 'same' and disk_per_gpu = 'same'
                then 'same_machine'
            else 'not_stated'
        end as machine_config
    from compared
),

-- each offer's partner: the first in the order the header gives (own SKU first where preferred,
-- then a same configuration, then the cheapest per GPU-hour, then the lowest offer_id; a NULL
-- last, as `order by` puts it). One pass over the candidates by an aggregate: a window's sort of
-- every candidate cost most of this model at 20,000 offers. offer_id is the grain of a day's
-- offers, so the order has no ties.
chosen as (
    select
        comparison,
        offer_id,
        observed_date,
        arg_min(
            {
                p_offer_id: p_offer_id,
                p_sku: p_sku,
                p_price: p_price,
                p_gpus: p_gpus,
                p_vcpus: p_vcpus,
                p_memory_gib: p_memory_gib,
                p_disk_gb: p_disk_gb,
                vcpus_per_gpu: vcpus_per_gpu,
                memory_per_gpu: memory_per_gpu,
                disk_per_gpu: disk_per_gpu,
                machine_config: machine_config
            },
            {
                own_sku: case
                    when prefers_sku and sku = p_sku then 0
                    when not (prefers_sku and sku = p_sku) then 1
                    else 2
                end,
                same_config: case
                    when machine_config in ('same_sku', 'same_machine') then 0 else 1
                end,
                price_unknown: p_price is null,
                price: coalesce(p_price, 0),
                p_offer_id: p_offer_id
            }
        ) as partner
    from configured
    group by comparison, offer_id, observed_date
),

-- the priced offer with its chosen partner and the comparison's rules
paired as (
    select
        s.*,
        s.gpu_count * s.gpu_fraction as s_gpus,
        -- the partner's columns, named by its struct's fields in `chosen` (hence the noqa)
        unnest(c.partner),  -- noqa: AL03
        r.ratio_low,
        r.ratio_high
    from chosen as c
    inner join priced as s
        on c.comparison = s.comparison
        and c.offer_id = s.offer_id
        and c.observed_date = s.observed_date
    inner join rules as r on c.comparison = r.comparison
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
    s.p_offer_id as partner_offer_id,                   -- the offer it is priced against
    s.p_sku as partner_sku,                             -- the partner's SKU
    s.p_price as partner_price_cny_per_gpu_hour,        -- the partner's close, CNY/GPU-h
    case
        when not s.prefers_sku then 'card'
        when s.sku = s.p_sku then 'sku'
        else 'line'
    end as pairing,                                     -- 'sku' | 'line' | 'card'
    s.machine_config,                                   -- same_sku|same_machine|differs|not_stated
    (s.close_price_cny_per_gpu_hour / nullif(s.p_price, 0))::double
        as ratio,                                       -- per GPU-equivalent: offer / partner
    s.ratio_low,                                        -- its plausible range (int_pair_rules)
    s.ratio_high,
    case
        when s.machine_config = 'differs'
            then 'configuration differs per GPU: ' || concat_ws(
                ', ',
                case
                    when s.vcpus_per_gpu = 'differs' then format(
                        'vCPUs {} vs {}', round(s.vcpus / s.s_gpus, 2)::double,
                        round(s.p_vcpus / s.p_gpus, 2)::double
                    )
                end,
                case
                    when s.memory_per_gpu = 'differs' then format(
                        'memory {} vs {} GiB', round(s.memory_gib / s.s_gpus, 2)::double,
                        round(s.p_memory_gib / s.p_gpus, 2)::double
                    )
                end,
                case
                    when s.disk_per_gpu = 'differs' then format(
                        'disk {} vs {} GB', round(s.disk_gb / s.s_gpus, 2)::double,
                        round(s.p_disk_gb / s.p_gpus, 2)::double
                    )
                end
            )
        when s.machine_config = 'not_stated'
            then 'configuration not stated: '
            || case
                when s.vcpus is null and s.memory_gib is null
                    and s.p_vcpus is null and s.p_memory_gib is null
                    then 'neither offer states its vCPUs and memory'
                when s.vcpus_per_gpu is null or s.memory_per_gpu is null
                    then 'one offer does not state its vCPUs and memory'
                else 'one offer does not state its disk'
            end
        when s.p_price <= 0 then 'partner price not positive'
        when s.close_price_cny_per_gpu_hour / s.p_price not between s.ratio_low and s.ratio_high
            then format(
                'ratio {} outside the plausible range {}-{} (intermediate.int_pair_rules)',
                round(s.close_price_cny_per_gpu_hour / s.p_price, 4)::double,
                s.ratio_low, s.ratio_high
            )
    end as held_reason                                  -- NULL: published
from paired as s
order by s.observed_date, s.comparison, s.offer_id
