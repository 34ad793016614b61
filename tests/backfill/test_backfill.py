"""A backfill end to end, through the pipeline's own normalization, checks and models: a
catalog of 300 commits in SkyPilot's format and a curated table of each format, loaded into a
data directory that already has crawled rows. Every row is found at its commit's time with its
provenance; a second backfill adds nothing; the raw archive keeps each version once; a cloud
also crawled live is counted once; the incremental marts equal a full rebuild."""

from __future__ import annotations

import gzip
import shutil
import subprocess
from datetime import UTC

import duckdb

from pipelines.backfill.load import backfill
from pipelines.backfill.publish import publish_pending
from pipelines.warehouse.sql_models import load_models, run_model
from spiders.layout import SQL_DIR, raw_object_path, work_db_path
from tests.backfill.conftest import CATALOG_COMMITS, CURATED_DAYS, read

MODELS = load_models(SQL_DIR)


def test_every_catalog_row_is_an_observation_at_its_commit_time(backfilled, archives):
    root, stats = backfilled
    assert stats["skypilot-catalog"].read == CATALOG_COMMITS + CATALOG_COMMITS // 3 + 50
    by_source = dict(read(root, """
        select source, count(*) from observations where archive = 'skypilot-catalog'
        group by 1"""))
    # aws: one on-demand and two zones' spot per commit; gcp: the a2 host + its A100, on
    # demand and spot, every third commit; lambda every sixth
    assert by_source == {"skypilot:aws": 3 * CATALOG_COMMITS, "skypilot:gcp": 2 * 100,
                         "skypilot:lambda_cloud": 50}
    log = subprocess.run(["git", "-C", str(archives["skypilot-catalog"]), "log",
                          "--format=%H %ct"], capture_output=True, text=True, check=True).stdout
    committed = {sha: int(ts) for sha, ts in (line.split() for line in log.splitlines())}
    rows = read(root, """select archive_commit, observed_at, observed_hour, crawl_id
                         from observations where archive = 'skypilot-catalog'""")
    assert len({r[0] for r in rows}) == CATALOG_COMMITS
    for commit, observed_at, observed_hour, crawl_id in rows:
        assert int(observed_at.timestamp()) == committed[commit]
        assert observed_hour == observed_at.replace(minute=0, second=0, microsecond=0)
        assert crawl_id.endswith(commit[:12])


def test_each_row_names_the_line_it_was_read_from(backfilled, archives):
    root, _ = backfilled
    rows = read(root, """
        select archive, archive_commit, archive_file, archive_line, sku, offer_kind
        from observations where archive is not null""")
    assert {r[0] for r in rows} == {"skypilot-catalog", "cloud-gpus", "full-stack"}
    texts: dict[tuple, list[str]] = {}
    for archive, commit, path, line, sku, _ in rows:
        if (commit, path) not in texts:
            texts[(commit, path)] = subprocess.run(
                ["git", "-C", str(archives[archive]), "show", f"{commit}:{path}"],
                capture_output=True, text=True, check=True).stdout.splitlines()
        text = texts[(commit, path)][line - 1]
        assert sku.split(" ")[0] in text or text.strip().startswith('"name"'), (sku, text)
    live = read(root, "select archive, archive_commit, archive_file, archive_line, reaches_via "
                      "from observations where source = 'aws'")
    assert live == [(None, None, None, None, "direct")] * 2


def test_sources_name_the_archive_and_the_cloud_and_are_reached_via_the_archive(backfilled):
    root, _ = backfilled
    sources = dict(read(root, """select source, any_value(reaches_via || '|' || vendor)
                                 from observations group by 1"""))
    assert sources["skypilot:aws"] == "archive|Amazon Web Services"
    assert sources["cloud-gpus:aws"] == "archive|Amazon Web Services"
    assert sources["full-stack:gcp"] == "archive|Google Cloud"
    assert sources["cloud-gpus:tensordock"] == "archive|TensorDock"
    assert sources["aws"] == "direct|Amazon Web Services"


def test_a_cloud_crawled_live_is_counted_once(backfilled):
    root, _ = backfilled
    counted = read(root, """
        select observed_date, bool_or(counted), bool_and(counted)
        from staging.stg_observations
        where source = 'skypilot:aws' and offer_kind = 'on_demand'
        group by 1 order by 1""")
    by_day = {str(day): (any_, all_) for day, any_, all_ in counted}
    assert by_day["2025-02-10"] == (False, False)      # the live crawl saw it that day
    assert all(v == (True, True) for d, v in by_day.items() if d != "2025-02-10")
    assert read(root, """select count(*) from staging.stg_observations
                         where source = 'skypilot:aws' and offer_kind = 'spot' and not counted
                      """) == [(0,)]             # no live spot twin


def test_curated_tables_are_read_whole(backfilled):
    root, stats = backfilled
    assert stats["cloud-gpus"].read == stats["full-stack"].read == CURATED_DAYS
    assert read(root, """select source, count(*) from observations
                         where archive in ('cloud-gpus', 'full-stack') group by 1 order by 1
                      """) == [("cloud-gpus:aws", CURATED_DAYS),
                               ("cloud-gpus:lambda_cloud", CURATED_DAYS),
                               ("cloud-gpus:tensordock", CURATED_DAYS),
                               ("full-stack:aws", CURATED_DAYS),
                               ("full-stack:gcp", 2 * CURATED_DAYS)]
    assert read(root, "select distinct calendar_signal, source like 'skypilot:%' from raw.crawls "
                      "where mode = 'archive' order by 1") == [(False, False), (True, True)]


def test_a_second_backfill_adds_nothing(backfilled, archives, tmp_path):
    shared, first = backfilled
    root = shutil.copytree(shared, tmp_path / "data")     # it writes: on a copy
    before = read(root, "select (select count(*) from observations), (select count(*) from "
                        "raw.crawls), (select count(*) from raw.offers), "
                        "(select count(*) from quarantine)")
    for name, repo in archives.items():
        again = backfill(name, repo, lambda: publish_pending(root), root=root)
        assert (again.read, again.rows_added, again.offers) == (0, 0, 0)
        assert again.already_read == first[name].versions
    assert read(root, "select (select count(*) from observations), (select count(*) from "
                      "raw.crawls), (select count(*) from raw.offers), "
                      "(select count(*) from quarantine)") == before


def test_the_raw_archive_keeps_each_version_once_by_content(backfilled, archives):
    root, _ = backfilled
    versions = read(root, "select distinct archive, archive_commit, archive_file, raw_ref "
                          "from observations where archive is not null order by 2, 3")
    objects = {sha for *_, sha in versions}
    # aws' prices repeat every 35 commits (5 x 7), so fewer objects than versions
    assert len(objects) < len(versions)
    for archive, commit, path, sha in versions[::10]:
        kept = gzip.decompress(raw_object_path(sha, root).read_bytes())
        shown = subprocess.run(["git", "-C", str(archives[archive]), "show", f"{commit}:{path}"],
                               capture_output=True, check=True).stdout
        assert kept == shown
    stored = {p.name.removesuffix(".gz") for p in (root / "raw" / "objects").rglob("*.gz")}
    assert objects <= stored and len(stored) <= len(versions)


def test_the_incremental_marts_equal_a_full_rebuild(backfilled, tmp_path):
    root, _ = backfilled
    copy = tmp_path / "rebuilt.db"
    shutil.copy(work_db_path(root), copy)
    con = duckdb.connect(str(copy))
    try:
        con.execute("attach ? as inc (read_only)", [str(work_db_path(root))])
        for model in MODELS:
            run_model(con, model, full=True)
        differing = []
        for model in MODELS:
            if model.materialized == "view":
                continue
            columns = [c for c, in con.execute(
                "select column_name from duckdb_columns() where database_name = 'rebuilt' and "
                "schema_name = ? and table_name = ? order by column_index",
                model.table.split(".")).fetchall()]
            order = ", ".join(f'"{c}"' for c in columns)
            mine = con.execute(f"select * from inc.{model.table} order by {order}").fetchall()
            full = con.execute(f"select * from rebuilt.{model.table} order by {order}").fetchall()
            if mine != full:
                differing.append(model.table)
        assert not differing
        assert con.execute("select count(*) from inc.marts.price_history where source like "
                           "'skypilot:%'").fetchone()[0] > 0
    finally:
        con.close()


def test_observation_times_are_utc_commit_times_not_the_load_time(backfilled):
    root, _ = backfilled
    (first, last), = read(root, "select min(observed_at), max(observed_at) from observations "
                                "where archive is not null")
    assert first.astimezone(UTC).year == 2025 and last.astimezone(UTC).month <= 3


def test_an_archive_offer_carries_its_versions_date_as_its_prices_as_of(backfilled):
    """Each backfilled observation is a published price as of its version's commit date (UTC),
    and marts.latest_prices gives an archive offer its latest version's date, not its crawl's or
    its source's; the crawled rows say live, as of the day they were read."""
    root, _ = backfilled
    rows = read(root, "select price_basis, prices_as_of, observed_at from observations "
                      "where archive is not null")
    assert rows and {r[0] for r in rows} == {"published"}
    assert all(as_of == observed.astimezone(UTC).date() for _, as_of, observed in rows)
    latest = read(root, """
        select p.prices_as_of, max(o.observed_at)
        from marts.latest_prices as p join observations as o using (offer_id)
        where p.source like 'skypilot:%' group by p.offer_id, p.prices_as_of""")
    assert latest and all(as_of == last.astimezone(UTC).date() for as_of, last in latest)
    assert {(b, a is not None) for b, a in read(
        root, "select price_basis, prices_as_of from observations where archive is null")} <= {
        ("live", True), (None, False)}
