-- Whether the database was simulated (`gpuprices demo` / `simulate` record their scenario in
-- truth.scenario): 1 when it was, 0 for real data.
select count(*)
from information_schema.tables
where table_schema = 'truth' and table_name = 'scenario'
