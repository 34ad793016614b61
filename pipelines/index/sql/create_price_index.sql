-- marts.price_index: the published price index (pipelines/index/chain.py names the columns;
-- docs/price-index.md the method). Rows are only ever appended. Each column's trailing comment is
-- its comment in the published database (pipelines/warehouse/comments.py).
-- Its contract, checked after each publication and blocking the publish (model_contract.py):
-- grain: series_id, index_date, method_version
-- audit: evidence_without_its_reason: (evidence = 'enough') = (evidence_lacking is not null)
-- audit: currency_not_the_markets: currency <> case market when 'china' then 'CNY' else 'USD' end
-- audit: level_not_positive: index_level <= 0 or chain_level <= 0 or base_level <= 0
-- audit: more_vendors: vendors_matched > offers_matched or vendors_listed > offers_listed
-- audit: unknown_chaining: chained not in ('base', 'forward', 'backward')
create schema if not exists marts;
create table if not exists marts.price_index (
    series_id varchar not null,             -- index_card|market|offer_kind|term
    index_card varchar not null,            -- card class: A100-80GB, H100/H800 SXM, RTX4090, ...
    market varchar not null,                -- china (offers listed in CNY) | world (in USD)
    currency varchar not null,              -- the market's currency: CNY | USD
    offer_kind varchar not null,            -- on_demand, spot, ...
    term varchar not null,                  -- the billing period: hour, day, month, ...
    index_date date not null,               -- the vendors' calendar day the row is for
    index_level double,                     -- the level, per GPU-hour (null: not enough evidence)
    level_low double,                       -- 5th percentile of the bootstrap's levels
    level_high double,                      -- 95th percentile of the bootstrap's levels
    change_pct double,                      -- the day's change, % (matched offers only)
    change_low_pct double,                  -- 5th percentile of the bootstrap's changes, %
    change_high_pct double,                 -- 95th percentile of the bootstrap's changes, %
    listing_median double,                  -- median of the day's counted closes per GPU-hour
    chain_level double not null,            -- the chain's running value (also without a level)
    base_date date not null,                -- the series' base day
    base_level double not null,             -- the base day's listing median (the level there)
    offers_matched integer not null,        -- offers with a close on this day and the day before
    vendors_matched integer not null,       -- vendors behind the day's change
    offers_listed integer not null,         -- offers with a counted close that day
    vendors_listed integer not null,        -- vendors with a counted close that day
    vendors_in_series integer not null,     -- vendors that listed in the trailing coverage days
    vendor_coverage double,                 -- vendors_matched / vendors_in_series
    offers_beyond_bound integer not null,   -- relatives beyond max_relative: errors, left out
    offers_held integer not null,           -- offers held back as unconfirmed possible outliers
    offers_stale integer not null,          -- offers whose last look was too early to count
    evidence varchar not null,              -- enough, or not enough evidence
    evidence_lacking varchar,               -- what was missing (null: enough evidence)
    chained varchar not null,               -- base | forward | backward (history loaded later)
    method_version varchar not null,        -- the method's version (intermediate.int_index_rules)
    content_hash varchar not null,          -- SHA-256 of the row's values as canonical JSON
    published_at timestamptz not null,      -- when the row was published; never rewritten
    primary key (series_id, index_date, method_version)
);
