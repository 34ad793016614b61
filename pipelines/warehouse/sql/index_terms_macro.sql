-- index_use_forbidden(vendor_key, vendor): whether the vendor's terms forbid using its prices in
-- an index or a price comparison (spiders/terms.csv, index_use = forbidden), by its vendor key
-- (a source's name, an archive's 'cloud-gpus:<key>' after the colon) or by the vendor name an
-- aggregator's offer carries. The runner fills in the lists from the table (create_terms_macro)
-- and stores the macro in the database, as it does since_day(): a build, a view, the published
-- copy and the DuckDB shell all find it.
create or replace macro index_use_forbidden(vendor_key, vendor) as
list_contains({excluded_keys}::varchar[], vendor_key)
or list_contains({excluded_vendors}::varchar[], vendor);
