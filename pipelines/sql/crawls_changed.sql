-- The crawls of the attached working database `work` whose raw.crawls row may differ from the one
-- the attached generation `gen` holds: every row past the $held rows the generation holds (rows
-- are only added, never deleted), and every row that was still open in the generation. A row is
-- written after its insert only while it is open, passing and not yet normalized: the batch that
-- normalizes it (mark_normalized.sql, count_quarantined.sql, built from passing crawls whose
-- normalized_at is null), a decision about a held crawl, a rejection (both refuse any other
-- crawl: pipelines/cli/reject.py); a failed, skipped, rejected or normalized row is final.
select w.crawl_id
from work.raw.crawls as w
where w.rowid >= $held
union
select g.crawl_id
from gen.raw.crawls as g
where g.passed and g.normalized_at is null
