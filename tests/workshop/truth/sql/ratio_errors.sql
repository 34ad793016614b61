/* One row per measured pair of a ratio mart whose offer carries an injected ratio: the mart's
   ratio against the injected one (relative error), and whether the mart paired the offer with
   the reference the simulator priced it from. */
select
    'slice' as measure, s.day, s.slice_offer_id as offer_id,
    s.slice_to_whole_ratio as measured_ratio, t.ratio as injected_ratio,
    s.whole_offer_id = t.reference_offer_id as same_reference
from marts.slice_to_whole_ratio as s
inner join truth.offer_effects as t on s.slice_offer_id = t.offer_id and t.effect = 'slice_ratio'
union all
select
    'server' as measure, m.day, m.server_offer_id as offer_id,
    m.server_to_single_ratio as measured_ratio, t.ratio as injected_ratio,
    m.single_offer_id = t.reference_offer_id as same_reference
from marts.multi_gpu_discount as m
inner join truth.offer_effects as t on m.server_offer_id = t.offer_id and t.effect = 'server_ratio'
union all
select
    'spot' as measure, p.day, p.spot_offer_id as offer_id,
    p.spot_to_on_demand_ratio as measured_ratio, t.ratio as injected_ratio,
    p.on_demand_offer_id = t.reference_offer_id as same_reference
from marts.spot_discount as p
inner join truth.offer_effects as t on p.spot_offer_id = t.offer_id and t.effect = 'spot_ratio'
union all
select
    'monthly' as measure, h.day, h.monthly_offer_id as offer_id,
    1 - h.saving_pct / 100 as measured_ratio, t.ratio as injected_ratio,
    h.hourly_offer_id = t.reference_offer_id as same_reference
from marts.monthly_vs_hourly_saving as h
inner join
    truth.offer_effects as t
    on h.monthly_offer_id = t.offer_id and t.effect = 'monthly_ratio'
