-- Where each source's prices come from, in the words every page shows (the API's frame.attrs).
select
    source,
    price_basis_label
from intermediate.int_source_price_basis
order by source
