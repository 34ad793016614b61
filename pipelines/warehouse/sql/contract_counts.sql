-- A model's contract checked in one statement over the rows a condition keeps (all, or those
-- the step rebuilt; contract_scope.py): how many rows it read, the keys of its grain held twice
-- (grain_duplicates.sql over those rows, or 0 without a grain) and each audit's bad rows, one
-- count per audit. A view's rows are materialized, so the view is computed once, not once per
-- audit and once for its grain.
with checked as {materialized} (
    select * from {table}
    where {kept}
)

select
    count(*) as checked_rows,
    ({grain}) as grain_duplicates,
    {audits}
from checked
