-- The incremental filter, written once: the runner sets the variable `since` to the first day
-- an incremental build rebuilds (SqlModel.rebuild_start) and resets it after; a full build, a
-- view or a plain DuckDB shell leaves it unset. Models read it only through these macros, so an
-- unset `since` reads everything. Stored in the database (not temporary): views call them too,
-- in the published copy and in the shell. Constant within a query, so a filter
-- `observed_hour >= since_hour(0)` still skips the older row groups by their min/max.

-- since_day(): the first UTC day rebuilt; 0001-01-01 in a full build.
create or replace macro since_day() as
coalesce(getvariable('since')::date, date '0001-01-01');

-- since_hour(days_before): the first UTC hour to read, days_before days before since_day()
-- (a local day east of UTC starts on the UTC day before); the beginning of time in a full build.
create or replace macro since_hour(days_before) as
coalesce(
    (getvariable('since')::date - to_days(days_before))::timestamptz,
    timestamptz '0001-01-01 00:00:00+00'
);
