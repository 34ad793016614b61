-- A merge-grain model's rules (`-- merge: <column> least|greatest` or `= <expression>`): each
-- such column of a new row is set from it (n) and the stored row of the same key (o), e.g. a
-- first sighting keeps the earlier; SqlModel.incremental_statements fills in the rest.
update merge_rows as n
set {rules}
from {table} as o
where o.{column} = n.{column}
