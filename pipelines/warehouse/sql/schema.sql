-- Tables written by the Python assets. Idempotent: run before every write.
create schema if not exists raw;

-- One row per crawl of one source: the monitor's verdict and what became of its offers.
create table if not exists raw.crawls (
    crawl_id varchar primary key,
    run_id varchar,
    source varchar not null,
    mode varchar not null,                 -- 'replay' | 'raw' | 'live' | 'simulated'
    started_at timestamptz,
    finished_at timestamptz,
    passed boolean not null,
    offers integer not null,
    requests integer,
    failures varchar[],
    normalized_at timestamptz,
    normalized_rows integer,
    quarantined_rows integer
);
-- 'passed' | 'failed' | 'skipped' (a source whose required API key is not set)
alter table raw.crawls add column if not exists status varchar;
-- The first UTC day of each normalized crawl's observations (null: it has none), found once per
-- crawl by the SQL model runner: finding it scans the crawl_id of every observation, so the
-- incremental models of a run share one scan.
create table if not exists raw.crawl_first_days (
    crawl_id varchar primary key,
    normalized_at timestamptz not null,
    first_day date
);
-- Every offer a passing crawl yielded, exactly as the spider emitted it.
create table if not exists raw.offers (
    crawl_id varchar not null,
    item_no integer not null,
    source varchar not null,
    item json not null,
    primary key (crawl_id, item_no)
);

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
    crawl_id varchar not null,
    primary key (offer_id, observed_hour)
);

-- The rows normalized in the current run, validated before they join `observations`.
create table if not exists observation_batch as select * from observations limit 0;

create table if not exists quarantine (
    source varchar not null,
    crawl_id varchar not null,
    item_no integer not null,
    -- the step that refused it: 'card' | 'price' | 'region' | 'currency' | 'bounds' | ...
    stage varchar not null,
    reason varchar not null,
    raw_item json not null,
    quarantined_at timestamptz not null,
    primary key (crawl_id, item_no)
);
