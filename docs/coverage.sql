-- Market coverage of the collected observations against the Sources issue's targets.
-- Run: .venv/bin/duckdb -readonly data/prices.db < docs/coverage.sql   (tests/e2e runs it too)
with card_families as (
    select
        split_part(gpu_model, '-', 1) as card_family,
        count(distinct vendor) as vendors
    from observations
    group by split_part(gpu_model, '-', 1)
),

family_targets as (
    select
        t.card_family,
        t.at_least,
        t.row_order
    from (
        values ('A100', 4, 1), ('H100', 4, 2), ('H800', 4, 3), ('RTX4090', 4, 4)
    ) as t (card_family, at_least, row_order)
),

spread as (
    select
        count(distinct vendor) filter (where gpu_fraction < 1) as slice_vendors,
        count(distinct vendor) filter (where offer_kind = 'spot') as spot_vendors,
        count(distinct vendor) filter (where billing_period = 'month') as monthly_vendors,
        count(distinct province_or_state) filter (where country = 'CN') as provinces,
        count(distinct region_code) filter (where country <> 'CN') as foreign_regions
    from observations
),

measures as (
    select
        t.row_order,
        t.card_family || ' vendors' as measure,
        f.vendors as measured,
        t.at_least
    from family_targets as t
    left join card_families as f on t.card_family = f.card_family
    union all
    select
        5 as row_order,
        'vendors with slice offers' as measure,
        s.slice_vendors as measured,
        3 as at_least
    from spread as s
    union all
    select
        6 as row_order,
        'vendors with spot offers' as measure,
        s.spot_vendors as measured,
        3 as at_least
    from spread as s
    union all
    select
        7 as row_order,
        'vendors with monthly prices' as measure,
        s.monthly_vendors as measured,
        4 as at_least
    from spread as s
    union all
    select
        8 as row_order,
        'Chinese provinces' as measure,
        s.provinces as measured,
        6 as at_least
    from spread as s
    union all
    select
        9 as row_order,
        'regions outside China' as measure,
        s.foreign_regions as measured,
        5 as at_least
    from spread as s
)

select
    measure as target,
    measured,
    at_least,
    coalesce(measured, 0) >= at_least as ok
from measures
order by row_order;
