-- Where a price comes from, in the one wording every page shows (the report, `gpuprices prices`,
-- the API), written once for a source (intermediate.int_source_price_basis) and for an offer
-- (marts.latest_prices): a modeled price is never taken for a quote, an undated one never for a
-- dated one. Stored in the database, as the incremental filter is (views call it).

-- price_basis_label(basis, as_of): 'published prices as of 2026-05-13, replayed', ...
create or replace macro price_basis_label(basis, as_of) as
case basis
    when 'live' then 'live'
    when 'captured'
        then 'replayed capture' || coalesce(' of ' || strftime(as_of, '%Y-%m-%d'), '')
    when 'published'
        then 'published prices'
        || coalesce(' as of ' || strftime(as_of, '%Y-%m-%d'), '') || ', replayed'
    when 'undated' then 'published prices, date unknown, replayed'
    when 'mixed'
        then 'modeled snapshot: part published'
        || coalesce(' as of ' || strftime(as_of, '%Y-%m-%d'), '')
        || ', part illustrative'
    when 'illustrative' then 'modeled snapshot: illustrative prices'
    when 'simulated' then 'simulated'
end;

-- is_real_price(basis): a price someone can act on, read live, captured, or published (dated)
-- by the vendor; spiders/price_basis.py REAL_PRICE_BASES says the same in Python
-- (tests/sql/test_price_basis.py keeps the two equal)
create or replace macro is_real_price(basis) as
coalesce(basis in ('live', 'captured', 'published'), false);

-- hidden_by_default(basis): a price no default page shows (undated, illustrative or mixed) unless
-- the run that crawled it opted in; spiders/price_basis.py NOT_SHOWN_BY_DEFAULT says the same in
-- Python (tests/sql/test_shown_observations.py keeps the two equal). Null for a null basis.
create or replace macro hidden_by_default(basis) as
basis in ('undated', 'illustrative', 'mixed');
