"""What every published table and column means, written into the database with COMMENT ON, so
`select column_name, comment from duckdb_columns()` (and duckdb_tables()) explains the data.

The text comes from the SQL itself: a model's header block comment describes its table, and the
trailing `-- ...` comment of a select line its column (read with sqlglot, outermost select only).
A column without its own comment borrows the comment of the same column in the model it reads,
then, for a column of the observations, its meaning there (OBSERVATION_GLOSSARY below), then the
comment of the same column in any model, then the comments of the DDL the Python assets run
(pipelines/warehouse/sql/schema.sql, pipelines/alerts/sql/outbox.sql), then GLOSSARY below.
TABLES describes the tables Python writes; the price index's columns are described by its own
DDL (trailing comments of pipelines/index/sql/create_price_index.sql), the advisor's by
ADVICE_COMMENTS (pipelines/advisor/records.py), beside their columns' types. Every column of
every published table and view has a comment (tests/pipelines/test_published_catalog.py).

The comments parsed from SQL are cached by the digest of each text (model_reads.ParsedCache:
`<models>/__pycache__/model_comments.json`, `pipelines/warehouse/__pycache__/ddl_comments.json`),
so a process that publishes without having built the models does not import sqlglot.

Also the list of internal bookkeeping tables (INTERNAL_TABLES), which the published copy drops.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pipelines.warehouse.model_reads import ParsedCache
from pipelines.warehouse.sql_files import sql_text
from pipelines.warehouse.sql_models import SqlModel, load_models, parsed_sql
from pipelines.warehouse.tables import ADVICE_HISTORY_TABLE, ADVICE_TABLE, INDEX_TABLE
from spiders.parsing.vendor_aliases import VENDOR_KINDS
from spiders.price_basis import CRAWL_BASES

# The runner's and the pipeline's bookkeeping: kept in the working database, dropped from the
# published copy (pipelines/publish.py), since they describe runs, not prices.
INTERNAL_TABLES = ("main.observation_batch", "raw.model_state", "raw.batch_crawls",
                   "raw.batch_suite_passes", "raw.crawl_first_days", "raw.model_contracts",
                   "alerts.state")

TABLES = {
    "main.observations": "Every validated offer observation: one row per offer and hour it was "
                         "seen (the history everything else is built from); never deleted.",
    "main.quarantine": "Offers normalization refused, with the stage and the reason, one row per "
                       "problem (the first crawl that showed it).",
    "raw.crawls": "One row per crawl of one source: the monitor's verdict and what became of "
                  "its offers.",
    "raw.offers": "Every offer a passing crawl yielded, exactly as the spider emitted it (JSON).",
    "raw.crawl_decisions": "Every decision about a crawl a blocking rule held back: held (the "
                           "check, figure, bound), settled by a rule (confirmed, reverted, "
                           "cleared), alerted on (unresolved), or accepted / rejected by a "
                           "person; who, when, why.",
    "alerts.outbox": "Every alert detected, with its delivery status: one row per alert.",
    ADVICE_TABLE: "The cheapest configurations that fit each saved workload "
                               "(pipelines/workloads.yaml), from the latest prices.",
    ADVICE_HISTORY_TABLE: "The best configuration of each workload at each run.",
    INDEX_TABLE: "The GPU rental price index (docs/price-index.md): one row per series "
                         "(card class, market, offer kind, term) and closed day, chained on "
                         "matched offers; rows are only ever appended.",
}

# The observations' columns, which many tables share and mean the same in each: a model's column
# without its own comment (nor its input's) takes this one before another model's.
OBSERVATION_GLOSSARY = {
    "offer_id": "one offer: hash of source, SKU, region, offer kind, billing period, card and "
                "fraction (pipelines/normalize/offer.py; the GPU count is the SKU's)",
    "observed_at": "when the price was seen (UTC; in replay, the snapshot's capture time)",
    "observed_hour": "observed_at truncated to the hour (UTC)",
    "observed_date": "the UTC day", "observed_month": "first day of the UTC month",
    "source": "the spider that read it (a vendor, or one IDC's table)",
    "vendor": "the vendor's name as shown", "vendor_kind": " | ".join(sorted(VENDOR_KINDS)),
    "region_code": "the vendor's own region code", "country": "ISO 3166 country code",
    "province_or_state": "province (China) or state, when the region names one",
    "city": "city, when the region names one", "is_tier1_city": "Beijing, Shanghai, "
    "Guangzhou or Shenzhen (the reference of the regional discount)",
    "region_group": "province in China, country elsewhere",
    "sku": "the vendor's instance or package name",
    "gpu_model": "canonical card, e.g. A100-80GB", "gpu_family": "A100, H100, H800, RTX4090, "
    "RTX4090D", "gpu_variant": "SXM, PCIe, NVL ... (null: the listing did not say)",
    "gpu_count": "GPUs in the instance", "gpu_fraction": "share of each GPU: 1, or a slice",
    "vram_gb": "GPU memory per GPU (or per slice), GB",
    "vcpus": "vCPUs of the instance (null: its source does not state them)",
    "memory_gib": "the instance's memory, GiB (null: not stated)",
    "disk_gb": "the instance's local disk, decimal GB (null: not stated)",
    "offer_kind": "on_demand, spot, reserved, ...",
    "billing_period": "what the listed price buys: hour, day, week, month, year",
    "price_amount": "the price as listed, per billing_period, whole instance",
    "currency": "the listed currency (ISO 4217)",
    "price_per_gpu_hour_cny": "one whole-GPU equivalent for one hour, CNY",
    "price_per_gpu_hour_usd": "one whole-GPU equivalent for one hour, USD",
    "fx_rate_date": "the day of the exchange rates used",
    "available": "in stock (null: the listing does not say)", "url": "where the price is listed",
    "raw_ref": "the raw offer it came from: crawl and item number",
}
# Those, and the columns of the Python-written tables without a DDL comment.
GLOSSARY = {
    **OBSERVATION_GLOSSARY,
    "crawl_id": "the crawl that read it", "item_no": "its position in the crawl's output",
    "run_id": "the run that crawled", "started_at": "when the crawl started",
    "finished_at": "when the crawl finished", "passed": "whether the crawl passed its monitors",
    "offers": "offers the crawl yielded", "requests": "requests the crawl made",
    "failures": "why the crawl failed its monitors", "status": "what became of it",
    "item": "the offer as the spider emitted it (JSON)",
    "stage": "the step that refused it: card, price, region, currency, bounds, ...",
    "reason": "why", "raw_item": "the offer as the spider emitted it (JSON)",
    "quarantined_at": "when it was refused", "raw_item_sha256": "sha256 of raw_item's text",
    "title": "the notification's title", "sent_at": "when every channel had it",
    "computed_at": "when the advice was computed", "workload": "the saved workload's name",
    # columns of the marts whose select line carries no comment
    "day": "the UTC day the signal is computed for",
    "first_seen_at": "the offer's first observation (UTC)",
    "last_seen_at": "the offer's last observation (UTC)",
    "ci_high": "upper end of the interval of the median (order statistics)",
    "depth_ci_high_pct": "upper end of the order-statistic interval of the depth, %",
    "median_recovery_pct": "median recovery of the price after the month end, %",
    "baseline_available_offers": "offers in stock in the mid-month baseline window",
    "month_end_available_offers": "offers in stock in the month-end window",
    "next_start_available_offers": "offers in stock at the next month's start",
    "median_price_cny_per_gpu_hour": "median across vendors, CNY per GPU-hour",
    "day_price_cny_per_hour": "the daytime price, CNY per hour",
    "slice_offer_id": "the slice's offer", "slice_sku": "the slice's SKU",
    "slice_vram_gb": "the slice's GPU memory, GB", "spot_offer_id": "the spot offer",
    "spot_sku": "the spot offer's SKU", "on_demand_sku": "the on-demand offer's SKU",
    "monthly_offer_id": "the monthly package's offer", "monthly_sku": "the package's SKU",
    "hourly_sku": "the hourly offer's SKU", "server_offer_id": "the multi-GPU server's offer",
    "server_sku": "the multi-GPU server's SKU",
    "instance_price_cny_per_hour": "the whole instance for one hour, CNY",
    "previous_observed_at": "when the previous price was seen (UTC)",
    "previous_price_cny_per_gpu_hour": "the previous price, CNY per GPU-hour",
    "previous_available": "stock at the previous look",
    "price_change_cny_per_gpu_hour": "the change from the previous price, CNY per GPU-hour",
    "price_change_pct_cny": "the change from the previous price, % (CNY)",
    "close_fx_rate_date": "the day of the exchange rates of the close",
    "close_instance_price_cny_per_hour": "the instance's closing price, CNY per hour",
    "whole_sku": "the whole card's SKU", "whole_offer_line": "the whole card's offer line",
    "reference_offer_ids": "the offers of the reference region",
    "median_ci_upper_rank": "rank of the upper end of the median's interval",
    "normalized_at": "when the crawl's offers were published (null: pending)",
    "normalized_rows": "how many of its offers became observations",
    "quarantined_rows": "how many of its offers normalization refused",
    "created_at": "when the alert was detected",
    "delivered_to": "ids (URL hashes) of the channels that have it",
    # the columns schema.sql and outbox.sql add with `alter table` (their comments precede them)
    "reaches_via": "how the source reached the offer: direct, aggregator, second_path, archive",
    "local_time_zone": "the zone of the offer's billing calendar (its local days)",
    "archive": "the public price archive a backfilled row comes from (null: crawled)",
    "archive_commit": "the archive's git commit whose file was read",
    "archive_file": "the file's path in the archive", "archive_line": "the row's line in it",
    "price_basis": "where the price comes from: " + " | ".join(CRAWL_BASES),
    "prices_as_of": "the date the price held", "opted_in": "the run named this source",
    "calendar_signal": "whether observation times carry a calendar signal (null: true)",
    "route": "the rule's channel tags (null: the default channels)",
    "channel_status": "per channel, whether it has the alert",
    # raw.crawl_decisions (schema.sql; docs/robustness.md, "Blast radius")
    "decided_at": "when the decision was made (UTC)",
    "decision": "held | confirmed | reverted | cleared | unresolved | accepted | rejected",
    "decided_by": "rule:<name> (a check or a settlement rule) or person:<login>",
    "check_name": "the blocking check that held the crawl (null: a settlement)",
    "figure": "the figure the check judged (null: a settlement)",
    "bound": "the bound the figure broke (null: a settlement)",
}


def _escaped(text: str) -> str:
    return "'" + " ".join(text.split()).replace("'", "''") + "'"


def select_comments(sql: str) -> dict[str, str]:
    """Column name -> trailing comment, for the outermost select of a model's SQL."""
    tree = parsed_sql(sql)
    found = {}
    for projection in getattr(tree, "selects", []):
        text = " ".join(c.strip() for c in projection.comments or [] if c.strip())
        if text and not text.lower().startswith("noqa"):
            found[projection.alias_or_name] = text
    return found


@cache
def _select_comments_cache() -> ParsedCache:
    from spiders.layout import SQL_DIR

    return ParsedCache(SQL_DIR / MODEL_COMMENTS_CACHE, select_comments)


def cached_select_comments(sql: str) -> dict[str, str]:
    """select_comments from the cache model_comments keeps (read here, never written: a step that
    builds some of the models must not leave the others out of it), parsed when not in it."""
    return _select_comments_cache().get(sql)


def ddl_comments(text: str) -> dict[str, str]:
    """Column name -> comment, from the `create table` statements of a DDL file's text."""
    import sqlglot
    from sqlglot import exp

    found: dict[str, str] = {}
    for statement in sqlglot.parse(text, dialect="duckdb"):
        schema = statement.this if isinstance(statement, exp.Create) else None
        for column in getattr(schema, "expressions", []) if isinstance(schema, exp.Schema) else []:
            text = " ".join(c.strip() for c in getattr(column, "comments", None) or [])
            if isinstance(column, exp.ColumnDef) and text:
                found.setdefault(column.name, text)
    return found


@cache
def _models() -> tuple[SqlModel, ...]:
    from spiders.layout import SQL_DIR

    return tuple(load_models(SQL_DIR))


HERE = Path(__file__).resolve().parent
# the DDL of the Python tables whose comments describe columns: schema.sql and the outbox's feed
# the glossary, the price index's describe its own table
GLOSSARY_DDL = (HERE / "sql" / "schema.sql", HERE.parent / "alerts" / "sql" / "outbox.sql")
INDEX_DDL = HERE.parent / "index" / "sql" / "create_price_index.sql"


@cache
def _ddl_files_comments() -> dict[Path, dict[str, str]]:
    """ddl_comments of each DDL file above, through their cache."""
    parsed = ParsedCache(HERE / "__pycache__" / "ddl_comments.json", ddl_comments)
    found = {path: parsed.get(path.read_text(encoding="utf-8"))
             for path in (*GLOSSARY_DDL, INDEX_DDL)}
    parsed.save()
    return found


@cache
def _ddl_glossary() -> dict[str, str]:
    found = dict(GLOSSARY)
    for path in GLOSSARY_DDL:
        found.update(_ddl_files_comments()[path])
    return found


@cache
def _python_table_columns() -> dict[str, dict[str, str]]:
    """{table: {column: comment}} of the tables Python writes that describe their own columns."""
    from pipelines.advisor.records import ADVICE_COMMENTS

    return {INDEX_TABLE: dict(_ddl_files_comments()[INDEX_DDL]),
            ADVICE_TABLE: dict(ADVICE_COMMENTS), ADVICE_HISTORY_TABLE: dict(ADVICE_COMMENTS)}


# beside the models' files: dbt_like_sql/__pycache__/
MODEL_COMMENTS_CACHE = Path("__pycache__") / "model_comments.json"


def model_comments(models: tuple[SqlModel, ...]) -> dict[str, dict[str, str]]:
    """select_comments of each model, by table, through the cache beside the models' files."""
    if not models:
        return {}
    parsed = ParsedCache(models[0].path.parent.parent / MODEL_COMMENTS_CACHE, select_comments)
    own = {m.table: parsed.get(m.sql) for m in models}
    parsed.save()
    return own


def wanted_comments(models: tuple[SqlModel, ...] | None = None
                    ) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """(table -> comment, table -> {column -> comment}) for every model and Python table."""
    models = _models() if models is None else models
    own = model_comments(models)
    anywhere: dict[str, str] = {}
    for columns in own.values():
        for name, text in columns.items():
            anywhere.setdefault(name, text)
    tables = {m.table: m.description for m in models} | dict(TABLES)
    columns: dict[str, dict[str, str]] = dict(_python_table_columns())
    for model in models:
        upstream = {}
        for read in model.reads:
            upstream.update({k: v for k, v in own.get(read, {}).items() if k not in upstream})
        # the model's own, then the model it reads', then the observations' meaning, then any
        # model's: offer_id is not "the priced offer" of one pairing model
        columns[model.table] = anywhere | OBSERVATION_GLOSSARY | upstream | own[model.table]
        if model.alias:      # the view main.<alias> is the same table
            tables[f"main.{model.alias}"] = model.description
            columns[f"main.{model.alias}"] = columns[model.table]
    return tables, columns


def apply_comments(con) -> int:
    """COMMENT ON every table, view and column whose comment differs from the wanted one (none:
    no write at all). Returns how many comments were written."""
    tables, columns = wanted_comments()
    fallback = _ddl_glossary()
    present = con.execute(sql_text(__file__, "comment_targets")).fetchall()
    kinds = {name: kind for name, kind, _ in present}
    statements = [f"comment on {kinds[name]} {name} is {_escaped(tables[name])}"
                  for name, _, comment in present
                  if name in tables and (comment or "") != " ".join(tables[name].split())]
    for schema, table, column, comment in con.execute(
            sql_text(__file__, "column_comments")).fetchall():
        name = f"{schema}.{table}"
        text = columns.get(name, {}).get(column) or fallback.get(column)
        if name in kinds and text and (comment or "") != " ".join(text.split()):
            statements.append(f"comment on column {name}.{column} is {_escaped(text)}")
    if statements:      # one call: a new or recreated table's comments (the runner's full
        # rebuilds replace rows in place and keep theirs: model_batch.py)
        con.execute(";\n".join(["begin", *statements, "commit"]))
    return len(statements)
