-- The offers "now" views show under three rules, on the same database (`make truth-real`,
-- real_recency.py): 'all' (every counted latest price not held back, no recency rule), 'horizon'
-- (issue 38's: at most price_horizon_days() old) and 'now' (price_is_now: the horizon and still
-- listed by its record), each row with its age, how far it trails its record's newest data and
-- the database's newest as-of date, and whether it ranks among the cheapest of its group as
-- marts.cheapest_offers ranks them (the parameter offers_per_group: the mart's own). The macros
-- are pipelines/warehouse/sql/price_age_macros.sql.
with aged as (
    select
        l.*,
        case when l.country = 'CN' then coalesce(l.province_or_state, 'CN') else l.country end
            as region_group,
        price_as_of(l.prices_as_of, l.last_seen_at) as as_of,
        price_age_days(price_as_of(l.prices_as_of, l.last_seen_at), price_reference_day())
            as age_days,
        days_behind(l.last_seen_at, max(l.last_seen_at) over (partition by price_origin(l.source)))
            as days_behind_record,
        max(price_as_of(l.prices_as_of, l.last_seen_at)) over () as newest_as_of
    from marts.latest_prices as l
),

shown as (
    select a.*
    from aged as a
    left join marts.price_outliers as h
        on a.offer_id = h.offer_id and h.outlier_status = 'held'
    where h.offer_id is null and a.counted
),

rules as (
    select r.rule
    from (values ('all'), ('horizon'), ('now')) as r (rule)
),

kept as (
    select
        r.rule,
        s.*
    from rules as r
    inner join shown as s
        on case r.rule
            when 'all' then true
            when 'horizon' then s.age_days <= price_horizon_days()
            else price_is_now(s.age_days, s.days_behind_record, price_horizon_days())
        end
),

ranked as (
    select
        *,
        row_number() over (
            partition by rule, gpu_model, offer_kind, billing_period, country, region_group
            order by price_per_gpu_hour_cny, vendor, offer_id
        ) as rank
    from kept
)

select
    rule,
    rank <= $offers_per_group as cheapest,
    source,
    as_of,
    newest_as_of,
    age_days,
    days_behind_record,
    newest_as_of - as_of as days_behind_newest
from ranked
