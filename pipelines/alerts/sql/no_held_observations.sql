-- alert_held_observations when the database has no marts.price_outliers yet: nothing held.
create or replace temp table alert_held_observations (
    offer_id varchar, observed_at timestamptz, confirmed_at timestamptz
)
