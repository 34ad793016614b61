-- The first and last day of every history chart the report draws: the card charts of the cards
-- most vendors list (parameter 1: how many) and the market charts of the families drawn
-- (parameter 2: a list).
select
    'card ' || gpu_model as chart,
    min(day) as first_day,
    max(day) as last_day
from marts.card_history
where card_rank <= ?::integer
group by gpu_model
union all
select
    chart || ' ' || gpu_family as chart,
    min(day) as first_day,
    max(day) as last_day
from marts.chart_points
where list_contains(?::varchar[], gpu_family)
group by chart, gpu_family
order by chart
