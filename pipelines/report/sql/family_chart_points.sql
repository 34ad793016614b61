-- The points of the price-history charts of the card families drawn (parameter: a list), from
-- marts.chart_points.
select
    chart,
    gpu_family,
    series,
    day,
    price,
    offers,
    vendors
from marts.chart_points
where list_contains(?::varchar[], gpu_family)
order by chart, gpu_family, series, day
