-- One row per source for the header's folded list: what it is, how much it landed, and when.
select
    source,
    any_value(vendor) as vendor,
    any_value(vendor_kind) as vendor_kind,
    count(*) as observations,
    count(distinct offer_id) as offers,
    min(observed_at) as first_seen,
    max(observed_at) as last_seen
from observations
group by source
order by source
