-- alert_held_observations when the database has no marts.held_observations yet: nothing held.
create or replace temp table alert_held_observations (
    offer_id varchar, observed_at timestamptz, confirmed_at timestamptz
)
