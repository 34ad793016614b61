/* One row per marts.month_end_dip group (source, vendor, card, variant, region, offer kind) of a
   simulated database, with what the simulator injected into its offers (truth.offer_effects) and
   what the mart concluded: the group's recurring verdict and, over its complete months, how many
   months' own verdicts hold or do not hold. category: 'dip' (a month-end dip of dip_size_pct was
   injected), 'trend' (a steady trend, no dip), 'churn' (listings vanish or appear at month end
   in its source, no price move), 'fx' (only exchange-rate moves touch it), 'noise' (nothing but
   noise). */
with offer_groups as (
    select distinct offer_id, source, vendor, gpu_model, gpu_variant, region_code, offer_kind
    from observations
    where billing_period = 'hour'
),

group_truth as (
    select
        g.source, g.vendor, g.gpu_model, g.gpu_variant, g.region_code, g.offer_kind,
        coalesce(max(e.size_pct) filter (where e.effect = 'dip'), 0) as dip_size_pct,
        coalesce(bool_or(e.effect = 'trend'), false) as has_trend,
        coalesce(bool_or(e.effect like 'churn%'), false) as has_churn,
        coalesce(bool_or(e.effect = 'fx_move'), false) as has_fx_move
    from offer_groups as g
    left join truth.offer_effects as e on g.offer_id = e.offer_id
    group by all
),

churned_sources as (
    select distinct source from truth.offer_effects
    where effect like 'churn%'
),

verdicts as (
    select
        source, vendor, gpu_model, gpu_variant, region_code, offer_kind,
        any_value(local_time_zone) as local_time_zone,  -- the calendar the group is judged in
        any_value(dip_verdict) as dip_verdict,          -- the same on every row of the group
        max(months_observed) as months_observed,
        max(offer_months) as offer_months,
        count(*) filter (where offers_compared > 0) as complete_months,
        count(*) filter (where month_verdict = 'holds') as months_holding,
        count(*) filter (where month_verdict = 'does not hold') as months_not_holding,
        min(p_value) as p_value,
        max(strength_pct) as strength_pct
    from marts.month_end_dip
    group by all
)

select
    v.*,
    t.dip_size_pct,
    case
        when t.dip_size_pct > 0 then 'dip'
        when t.has_trend then 'trend'
        when t.has_churn or v.source in (select c.source from churned_sources as c) then 'churn'
        when t.has_fx_move then 'fx'
        else 'noise'
    end as category
from verdicts as v
inner join group_truth as t
    on v.source = t.source and v.vendor = t.vendor and v.gpu_model = t.gpu_model
    and v.gpu_variant is not distinct from t.gpu_variant and v.region_code = t.region_code
    and v.offer_kind = t.offer_kind
