-- Market coverage of the collected observations against the Sources issue's targets.
-- Run: .venv/bin/duckdb -readonly data/prices.db < docs/coverage.sql   (tests/e2e runs it too)
with families as (
    select split_part(gpu_model, '-', 1) as family, count(distinct vendor) as vendors
    from observations group by 1
), measures as (
    select 'A100 vendors' as target, (select vendors from families where family = 'A100') as measured, 4 as at_least
    union all select 'H100 vendors', (select vendors from families where family = 'H100'), 4
    union all select 'H800 vendors', (select vendors from families where family = 'H800'), 4
    union all select 'RTX4090 vendors', (select vendors from families where family = 'RTX4090'), 4
    union all select 'vendors with slice offers',
        (select count(distinct vendor) from observations where gpu_fraction < 1), 3
    union all select 'vendors with spot offers',
        (select count(distinct vendor) from observations where offer_kind = 'spot'), 3
    union all select 'vendors with monthly prices',
        (select count(distinct vendor) from observations where billing_period = 'month'), 4
    union all select 'Chinese provinces',
        (select count(distinct province_or_state) from observations where country = 'CN'), 6
    union all select 'regions outside China',
        (select count(distinct region_code) from observations where country <> 'CN'), 5
)
select target, measured, at_least, coalesce(measured, 0) >= at_least as ok from measures;
