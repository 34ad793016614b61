-- The header's facts: the observed time range, its UTC days, and how many sources and offers.
select
    min(observed_at) as first_observed,
    max(observed_at) as last_observed,
    count(distinct timezone('UTC', observed_at)::date) as days,
    count(distinct source) as sources,
    count(distinct offer_id) as offers
from staging.stg_shown_observations  -- what a page may show
