/* The rules of like-for-like pairs (docs/signals.md, "Like for like"), one row per comparison:
   the plausible range of its ratio (the priced offer's price per GPU-hour over its partner's, both
   per whole-GPU equivalent; regional: the region's over the reference's) and why, and how close
   two machines' vCPUs, memory and disk per GPU must be to count as one configuration. A pair
   outside its range, or of two configurations, or of a machine its source does not state, is held
   with a reason (marts.held_pairs), not published. intermediate.int_like_for_like_pairs and
   intermediate.int_regional_pairs read them here. */
with params as (
    select
        0.5 as slice_low,      -- a slice at half its pro-rata share of the whole card
        4.0 as slice_high,     -- ... at four times it (a 1/4 slice dearer than the whole card)
        0.5 as server_low,     -- a server at half the single card's price per GPU
        1.5 as server_high,    -- ... at one and a half times it
        0.05 as spot_low,      -- spot at 5 % of on-demand: a 95 % discount
        1.0 as spot_high,      -- spot at on-demand
        0.25 as monthly_low,   -- a month's package at a quarter of the hourly price, per hour
        1.0 as monthly_high,   -- ... at the hourly price (paying by the hour all month)
        0.5 as regional_low,   -- a region at half the reference's price, same vendor and line
        2.0 as regional_high,  -- ... at twice it
        -- two machines are one configuration when vCPUs, memory and disk per GPU agree within
        -- this share: sources round GiB and GB, nothing more
        0.01 as machine_tolerance
)

select
    r.comparison,
    r.ratio_low,                       -- the least plausible ratio (inclusive)
    r.ratio_high,                      -- the greatest plausible ratio (inclusive)
    r.why,                             -- why the range: what lies outside it
    p.machine_tolerance                -- per-GPU vCPUs, memory, disk agree within this share
from params as p
cross join lateral (
    values
    (
        'slice_to_whole', p.slice_low, p.slice_high,
        'the guides price a slice at 30-50 % of the whole card (1.2-2 x pro rata for a 1/4); '
        || 'below half pro rata or dearer than the whole card it is not a share of that card'
    ),
    (
        'multi_gpu', p.server_low, p.server_high,
        'the guides put a whole server at 70-85 % of n single cards; half price or 1.5 x per '
        || 'card is another product (interconnect, commitment), not the same card in a bigger box'
    ),
    (
        'spot', p.spot_low, p.spot_high,
        'the hyperscalers cap spot at the on-demand price and advertise at most 90-91 % off; '
        || 'spot dearer than on-demand, or at under 5 % of it, is not the same instance'
    ),
    (
        'monthly_vs_hourly', p.monthly_low, p.monthly_high,
        'the guides state 20-40 % saved by a package; a package dearer than paying by the hour '
        || 'all month, or under a quarter of it, is not the same instance on another term'
    ),
    (
        'regional', p.regional_low, p.regional_high,
        'the guides put the widest regional gap at 20-30 % (Inner Mongolia, Guizhou against '
        || 'tier-1 cities); one vendor''s same machine at half or twice its price is another offer'
    )
) as r (comparison, ratio_low, ratio_high, why)
