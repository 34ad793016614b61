-- The keys of a model's grain held by more than one row (model_contract.audit_failures fills in
-- the table and its grain's columns): a model keeps its grain when this returns nothing.
select
    {keys},
    count(*) as copies
from {table}
group by all
having count(*) > 1
