-- Whether the published database says where each source's prices come from (older ones do not).
select count(*) > 0
from information_schema.tables
where table_schema = 'intermediate' and table_name = 'int_source_price_basis'
