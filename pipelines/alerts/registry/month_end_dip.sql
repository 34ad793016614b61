/* a group of `marts.month_end_dip` (source × card × variant × region × kind) whose
   `dip_verdict` holds (its months against its offers' own noise, see
   [signals.md](signals.md#month-end-dip-martsmonth_end_dip)), for its latest complete month
   when that month's own `month_verdict` holds */
-- key: source, gpu_model, gpu_variant, region_code, offer_kind, month
-- Rule `month_end_dip`: the groups marts.month_end_dip_alerts says to alert about, but an
-- archive's (a backfill, the public price record): its months are history, not this run's news.
with archive_sources as (
    select distinct c.source
    from raw.crawls as c
    where c.mode = 'archive'
)

select d.*
from marts.month_end_dip_alerts as d
anti join archive_sources as a on d.source = a.source
order by d.source, d.gpu_model, d.region_code, d.offer_kind
