-- mission_families(): the card families the signals, the claims and the report focus on
-- (spiders/parsing/card_catalog.py MISSION_FAMILIES, their one home), as a list: the runner fills
-- it in (create_mission_families_macro) and stores the macro in the database, as it does
-- since_day().
create or replace macro mission_families() as {families}::varchar[];
