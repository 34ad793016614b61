/* The sources whose observation times carry no calendar signal: a backfilled curated table's
   (pipelines/backfill/archives.py, the one home of which archives those are, writes
   raw.crawls.calendar_signal on every crawl it loads). Its commit time is when someone edited
   the table, so the day of the month, or the hour of the day, it was observed says nothing of
   prices: the calendar signals (the month-end dip and capacity, the month phases, off-peak
   hours) leave these sources out. Tested in tests/backfill/test_calendar_signal.py. */
select distinct c.source
from raw.crawls as c
where c.calendar_signal = false
