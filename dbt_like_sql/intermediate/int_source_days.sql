/* Source days: one row per source and UTC day it has any observation, with the calendar the
   source belongs to (whose looks it shares): 'crawl' for a live crawl, the archive itself for a
   backfilled one ('cloud-gpus' for 'cloud-gpus:aws'). Sources x days, a few rows a day: the
   small table intermediate.int_source_calendars measures each calendar's cadence from (over all
   its days, without reading every offer-day), and marts.chart_points' days take their calendar
   from (intermediate.int_chart_line_days). The one home of the calendar rule.
   Incremental by day: a row reads its own day only (since_day(): 0001-01-01 in a full build). */
-- grain: source, day
-- incremental: day
select
    source,
    observed_date as day,
    bool_or(reaches_via = 'archive') as from_archive,   -- read from a public price archive
    case
        when bool_or(reaches_via = 'archive') then split_part(source, ':', 1) else 'crawl'
    end as calendar                                     -- 'crawl', or the archive
from intermediate.int_offer_daily
where observed_date >= since_day()
group by source, observed_date
