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

-- since_local_hour(): the first UTC hour a local day rebuilt can start in: since_day()'s local
-- midnight in UTC+14, the easternmost offset in the time zone database (a local-day model reads
-- from it, not from the whole UTC day before); the beginning of time in a full build.
create or replace macro since_local_hour() as
since_hour(0) - interval 14 hours;

-- A folded model (`-- fold:` in its header, sql_models.py): in an hourly update the runner also
-- sets `fold_hour`, the first UTC hour of the observations loaded since the model's last build,
-- and `fold_built_at`, that build's time. fold_hour() is that hour; the beginning of time when
-- unset (a full build, a rebuild from a day, a DuckDB shell), so a filter on it reads
-- everything the since_hour() filter beside it reads.
create or replace macro fold_hour() as
coalesce(getvariable('fold_hour')::timestamptz, timestamptz '0001-01-01 00:00:00+00');

-- folding(): whether this build folds (fold_hour set). A folded model reads whole days for the
-- offers refolded_offers() names only then; otherwise every offer's days are read whole in one
-- scan, and the constant false filter spares the rest of the query even its scans.
create or replace macro folding() as
getvariable('fold_hour') is not null;

-- refolded_offers(first_hour): the offers whose stored day rows a fold cannot update from the
-- new hour's looks alone, so their days are read whole from first_hour on (the model's own
-- since_hour bound): those with a look at or after fold_hour() not of a crawl normalized since
-- the last build (fold_built_at: a second crawl of the hour, a late crawl; a look of no recorded
-- crawl), so that every look folded is new and after every stored one; and those with a look
-- reached another way than direct or template, whose `counted` a direct look of the same UTC day
-- can flip (staging.stg_observations). Read from `observations` itself: a superset of the shown
-- rows, and reading a day whole is always exact. None when not folding(). (first_hour is the
-- parameter: RF02/RF03 take it for an unqualified column.)
create or replace macro refolded_offers(first_hour) as table
    select o.offer_id
    from observations as o
    anti join (
        select c.crawl_id from raw.crawls as c
        where c.normalized_at >= getvariable('fold_built_at')::timestamptz
    ) as c on o.crawl_id = c.crawl_id
    where
        folding()
        and o.observed_hour >= greatest(first_hour, fold_hour())  -- noqa: RF02, RF03
    union
    select o.offer_id
    from observations as o
    where
        folding()
        and o.observed_hour >= first_hour  -- noqa: RF03
        and coalesce(o.reaches_via, 'direct') not in ('direct', 'template');
