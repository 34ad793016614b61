-- Every row of a select, counted (the select is filled in; it may end in a comment line): the
-- query scan_counts.py profiles.
select count(*) as row_count
from (
    {select}
) as counted
