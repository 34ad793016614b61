-- A folded model's rules (`-- merge: <column> least|greatest|= <expression>`): a new row (n)
-- read from the new looks only (the fold's `when` condition: every one after the stored row's
-- looks) takes each such column from itself and the stored row (o) of the same key; a row read
-- from the whole day replaces the stored one as it is. SqlModel.incremental_statements fills in
-- the rest; the day bound lets DuckDB skip the stored table's older row groups.
update merge_rows as n
set {rules}
from {table} as o
where {same_key} and o.{column} >= date '{since}' and ({fold_when})
