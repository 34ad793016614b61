-- The truth rows of one simulation (sim_truth: every column as text or double, times ISO).
insert into {catalog}.truth.offer_effects
select
    effect, offer_id, source, vendor, reference_offer_id, size_pct::double, ratio::double,
    starts_at::timestamptz, ends_at::timestamptz, time_zone, detail::json
from sim_truth
