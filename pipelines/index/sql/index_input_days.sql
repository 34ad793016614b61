-- The days each market's index inputs hold (a day is published once a later one has landed).
select
    market,
    count(distinct index_date) as input_days,
    max(index_date) as last_day
from intermediate.int_index_offer_days
group by market
order by market
