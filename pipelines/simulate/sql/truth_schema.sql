-- The simulator's truth: what was injected, so every signal can be scored against it.
-- {catalog}: the database's own catalog (a file named truth.db would make `truth.` ambiguous).
create schema if not exists {catalog}.truth;

create table if not exists {catalog}.truth.scenario (   -- one row per simulation
    seed integer,
    noise_pct double,
    start_at timestamptz,
    days integer,                 -- null: a database simulated before the truth tables existed
    every_hours integer,
    offers integer,               -- simulated offers, clones included
    effects json,                 -- list of {"effect": ..., parameters...}
    created_at timestamptz
);

-- One row per injected effect per affected offer.
create table if not exists {catalog}.truth.offer_effects (
    -- dip | trend | drop | fx_move | churn_vanish | churn_appear | regional_gap | region_copy |
    -- slice_ratio | server_ratio | spot_ratio | monthly_ratio
    effect varchar not null,
    offer_id varchar not null,    -- the offer the effect was applied to (as in observations)
    source varchar,
    vendor varchar,
    -- What it is measured against: the same vendor's tier-1 offer (gap), the whole card (slice),
    -- the single card (server), on-demand (spot), the hourly offer (monthly), the original
    -- (region copy); null otherwise.
    reference_offer_id varchar,
    -- Dip depth, trend % per 30 days, drop %, fx move %, regional gap % (positive = cheaper
    -- than the reference).
    size_pct double,
    -- Injected price ratio, offer / reference: per GPU-hour for server, spot and monthly;
    -- instance price / whole-card price for slices.
    ratio double,
    starts_at timestamptz,        -- when it applies (null: always)
    ends_at timestamptz,
    time_zone varchar,            -- the calendar a month-end effect follows: Asia/Shanghai | UTC
    detail json
);
