-- Tables written by the Python assets. Idempotent: run before every write.
create schema if not exists raw;

-- One row per crawl of one source: the monitor's verdict and what became of its offers. No
-- primary key (pipelines/warehouse/db.py UNKEYED_HISTORY): a crawl_id is made once per crawl and
-- every insert skips the ones already there.
create table if not exists raw.crawls (
    crawl_id varchar not null,
    run_id varchar,
    source varchar not null,
    mode varchar not null,                 -- 'replay' | 'raw' | 'live' | 'simulated'
    started_at timestamptz,
    finished_at timestamptz,
    passed boolean not null,
    offers integer not null,
    requests integer,
    failures varchar[],
    -- when its offers were published (null: pending), and how many became observations (its rows
    -- that joined `observations`, or were there already from an earlier crawl of the same offer
    -- and hour: a replay, a re-crawled hour)
    normalized_at timestamptz,
    normalized_rows integer,
    -- how many of its offers normalization refused; each problem is stored once in `quarantine`,
    -- under the first crawl that showed it, so a replayed crawl counts its problems here but adds
    -- no quarantine rows
    quarantined_rows integer
);
-- 'passed' | 'failed' | 'skipped' (a source whose required API key is not set, or an opt-in
-- source the run did not name: spiders/default_sources.py)
alter table raw.crawls add column if not exists status varchar;
-- Where its prices come from (spiders/price_basis.py): 'live', or the replayed snapshot's
-- 'captured' | 'published' | 'illustrative' | 'mixed', 'simulated'; null for a crawl re-read from
-- the raw archive (its bytes are an earlier crawl's). prices_as_of: the date of published prices.
alter table raw.crawls add column if not exists price_basis varchar;
alter table raw.crawls add column if not exists prices_as_of date;
-- true: the run named this source (`--source`, GPUPRICES_OPT_IN), so its modeled prices may be
-- shown (staging.stg_shown_observations); false or null (a crawl from before the column): they
-- are not
alter table raw.crawls add column if not exists opted_in boolean;
-- The first UTC day of each normalized crawl's observations (null: it has none), found once per
-- crawl by the SQL model runner: finding it scans the crawl_id of every observation, so the
-- incremental models of a run share one scan. No primary key, as for the history tables
-- (warehouse/db.py): one row per crawl ever made, and DuckDB rewrote the whole key index at every
-- checkpoint (0.5 s at 56 days of 83 sources); the runner replaces a crawl's row itself
-- (cache_crawl_first_days.sql).
create table if not exists raw.crawl_first_days (
    crawl_id varchar not null,
    normalized_at timestamptz not null,
    first_day date
);
-- The crawls whose raw offers the current observation_batch was built from, with what became of
-- them; `observations` marks exactly these crawls normalized, in the transaction that publishes
-- their rows. A crawl loaded after the batch was built is not here: it stays pending.
create table if not exists raw.batch_crawls (
    crawl_id varchar primary key,
    normalized_rows integer not null,
    quarantined_rows integer not null
);
-- The decision that let a batch crawl's new level in ('confirmed' | 'accepted'; null: none):
-- the blocking check on source levels leaves such a crawl's rows out of its comparison.
alter table raw.batch_crawls add column if not exists level_settled_by varchar;
-- Every decision about a crawl a blocking rule held back (docs/robustness.md, "Blast radius"):
-- held by a check, then settled by a rule ('confirmed', 'reverted', 'cleared'), alerted on when
-- it stays unresolved, or accepted / rejected by a person. While held, the crawl's raw.crawls
-- row has status 'held' (passed, not normalized); it is judged again every run.
create table if not exists raw.crawl_decisions (
    crawl_id varchar not null,
    source varchar not null,
    decided_at timestamptz not null,
    -- 'held' | 'confirmed' | 'reverted' | 'cleared' | 'unresolved' | 'accepted' | 'rejected'
    decision varchar not null,
    -- 'rule:<name>' (a check, or a settlement rule) | 'person:<user>'
    decided_by varchar not null,
    -- what held it: the check, the figure the rule judged and its bound; null for a settlement
    check_name varchar,
    figure varchar,
    bound varchar,
    reason varchar not null
);
-- Every offer a passing crawl yielded, exactly as the spider emitted it. Unique by (crawl_id,
-- item_no) without a key (pipelines/warehouse/db.py says why): a crawl's offers load once, in
-- the transaction that inserts its raw.crawls row.
create table if not exists raw.offers (
    crawl_id varchar not null,
    item_no integer not null,
    source varchar not null,
    item json not null
);

-- Unique by (offer_id, observed_hour) without a key (pipelines/warehouse/db.py says why):
-- publish_batch.sql skips what is there, the check observations_unique_per_offer_hour watches.
create table if not exists observations (
    observed_at timestamptz not null,
    observed_hour timestamptz not null,
    source varchar not null,
    vendor varchar not null,
    vendor_kind varchar not null,
    region_code varchar not null,
    country varchar not null,
    province_or_state varchar,
    city varchar,
    is_tier1_city boolean not null,
    sku varchar not null,
    gpu_model varchar not null,
    gpu_variant varchar,
    gpu_count integer not null,
    gpu_fraction decimal(9, 6) not null,
    vram_gb decimal(9, 2) not null,
    offer_kind varchar not null,
    billing_period varchar not null,
    price_amount decimal(18, 6) not null,
    currency varchar not null,
    price_per_gpu_hour_cny decimal(18, 6) not null,
    price_per_gpu_hour_usd decimal(18, 6) not null,
    fx_rate_date date not null,
    available boolean,
    url varchar not null,
    raw_ref varchar not null,
    offer_id varchar not null,
    crawl_id varchar not null
);

-- The machine that comes with an offer where its source states it (null: not stated), read from
-- the vendor's words by spiders/parsing/machine.py: vCPUs, memory in GiB, local disk in decimal
-- GB. Added after the first release, so older databases gain them here, at the end.
alter table observations add column if not exists vcpus decimal(9, 2);
alter table observations add column if not exists memory_gib decimal(12, 2);
alter table observations add column if not exists disk_gb decimal(12, 2);

-- The rows normalized in the current run, validated before they join `observations`.
create table if not exists observation_batch as select * from observations limit 0;  -- noqa: AM09
alter table observation_batch add column if not exists vcpus decimal(9, 2);
alter table observation_batch add column if not exists memory_gib decimal(12, 2);
alter table observation_batch add column if not exists disk_gb decimal(12, 2);
-- How the source reached the offer (the spider's reaches_via): 'direct', or 'aggregator' |
-- 'second_path' | 'archive', counted once by staging.stg_observations (docs/signals.md); null in
-- rows from before the column: direct.
alter table observations add column if not exists reaches_via varchar;
alter table observation_batch add column if not exists reaches_via varchar;
-- The zone of the offer's billing calendar (spiders/parsing/calendars.py: its spider's
-- local_time_zone, else the house rule), written by normalization; null in rows from before the
-- column: staging.stg_observations applies the same rule to them.
alter table observations add column if not exists local_time_zone varchar;
alter table observation_batch add column if not exists local_time_zone varchar;

create table if not exists quarantine (
    source varchar not null,
    crawl_id varchar not null,
    item_no integer not null,
    -- the step that refused it: 'card' | 'price' | 'region' | 'currency' | 'bounds' | ...
    stage varchar not null,
    reason varchar not null,
    raw_item json not null,
    quarantined_at timestamptz not null,
    -- sha256 of raw_item's text: with source and stage, what identifies a problem, so replaying
    -- the same captured bytes (the same item text, observed_at included) adds no row again
    raw_item_sha256 varchar,
    primary key (crawl_id, item_no)
);
-- Databases made before raw_item_sha256: the column, filled in once. Rows an older version
-- stored again for every replay are left as they were (not deleted).
alter table quarantine add column if not exists raw_item_sha256 varchar;
update quarantine set raw_item_sha256 = sha256(raw_item::varchar)
where raw_item_sha256 is null;
-- Where a backfilled row comes from (pipelines/backfill/): the public price archive
-- ('skypilot-catalog' | 'cloud-gpus' | 'full-stack'), the git commit whose version of the file
-- was read, the file's path in the archive and the row's line in that version (1 = the first
-- line; a CSV's header is line 1); null on a crawled row.
alter table observations add column if not exists archive varchar;
alter table observations add column if not exists archive_commit varchar;
alter table observations add column if not exists archive_file varchar;
alter table observations add column if not exists archive_line integer;
alter table observation_batch add column if not exists archive varchar;
alter table observation_batch add column if not exists archive_commit varchar;
alter table observation_batch add column if not exists archive_file varchar;
alter table observation_batch add column if not exists archive_line integer;
-- Whether a crawl's observation times carry a calendar signal: false for a backfilled curated
-- table (its commit time is when someone edited it, not when a price held), so the month-end
-- marts leave its source out (intermediate.int_sources_without_calendar); null: true.
alter table raw.crawls add column if not exists calendar_signal boolean;
-- Where each observation's price comes from (spiders/price_basis.py), from the response it was
-- read from: 'live'; a replayed snapshot entry's 'captured' | 'published' | 'undated' |
-- 'illustrative' | 'mixed'; a backfilled archive version's 'published'; 'simulated'. null in rows
-- from before the columns. prices_as_of: the date the price held (a live price: the day it was
-- read; a snapshot entry's: its record's date; an archive's: its version's commit date); null
-- when no one could date it (undated, illustrative).
alter table observations add column if not exists price_basis varchar;
alter table observations add column if not exists prices_as_of date;
alter table observation_batch add column if not exists price_basis varchar;
alter table observation_batch add column if not exists prices_as_of date;
