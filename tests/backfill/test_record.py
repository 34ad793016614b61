"""The public price record: built from clones by record_build, read back by record.py (every
unhappy path a clear RecordError, and nothing loaded), loaded by record_load as the backfill
from the same clone would load it: a second load, or a load after that backfill, adds nothing.
The bundle in data/records/ itself is read whole and checked against its manifest."""

from __future__ import annotations

import gzip
import json
from datetime import timedelta

import pytest

from pipelines.backfill.load import backfill
from pipelines.backfill.publish import publish_pending
from pipelines.backfill.record import (
    MANIFEST,
    RECORD_DIR,
    RecordError,
    read_manifest,
    read_offers,
)
from pipelines.backfill.record_build import SELECTIONS, build
from pipelines.backfill.record_load import known_archive, load_record
from pipelines.backfill.record_switch import record_enabled
from pipelines.backfill.selection import choose_versions
from spiders.layout import work_db_path
from tests.backfill.archive_repos import build_repo, cloud_gpus_json, full_stack_csv, utc
from tests.backfill.conftest import read

DAYS = 5


@pytest.fixture(scope="module")
def clones(tmp_path_factory):
    """A cloud-gpus and a full-stack clone of DAYS commits each."""
    base = tmp_path_factory.mktemp("clones")
    start = utc(2024, 1, 30, 9)
    cloud = [(start + timedelta(days=n), {"cloud_gpu.json": cloud_gpus_json(
        {"Lambda Labs": 1.79 + n / 100, "TensorDock": 1.50})}) for n in range(DAYS)]
    full = [(start + timedelta(days=n, hours=1), {"docs/cloud-gpus/cloud-gpus.csv": full_stack_csv(
        [("AWS", "A100 (80 GB)", 8, 40.97 - n / 10, None, "p4de.24xlarge")])})
        for n in range(DAYS)]
    return {"cloud-gpus": build_repo(base / "cloud-gpus", cloud),
            "full-stack": build_repo(base / "full-stack", full)}


@pytest.fixture
def bundle(tmp_path, clones):
    out = tmp_path / "records"
    lines: list[str] = []
    build(None, clones, out, say=lines.append)
    return out, lines


def test_the_builder_writes_every_chosen_version_and_skips_what_it_cannot_read(bundle, clones):
    out, lines = bundle
    parts = read_manifest(out)
    assert set(parts) == {"cloud-gpus", "full-stack"}
    assert {p.name: (len(p.versions), p.rows) for p in parts.values()} == {
        "cloud-gpus": (DAYS, 2 * DAYS), "full-stack": (DAYS, DAYS)}
    assert not any(p.calendar_signal for p in parts.values())    # both curated tables
    assert parts["cloud-gpus"].selection["every"] == "commit"
    said = "\n".join(lines)
    assert f"cloud-gpus: {DAYS} versions (2024-01-30 to 2024-02-03), {2 * DAYS} offers" in said
    # an archive named by the table but not (yet) among ARCHIVES, or with no clone: a line each
    assert "gcp-pricing: skipped" in said
    for part in parts.values():
        offers = dict((v.commit, o) for v, o in read_offers(out, part))
        assert sum(len(o) for o in offers.values()) == part.rows


def test_a_rebuild_of_one_archive_keeps_the_others_entries(bundle, clones):
    out, _ = bundle
    build(None, {"full-stack": clones["full-stack"]}, out, say=lambda line: None)
    assert set(read_manifest(out)) == {"cloud-gpus", "full-stack"}


def _rewrite_rows(path, edit):
    with gzip.open(path, "rt") as lines:
        rows = [json.loads(line) for line in lines]
    with gzip.open(path, "wt") as out:
        for row in edit(rows):
            out.write(json.dumps(row) + "\n")


def _truncate(out):
    data = (out / "cloud-gpus.jsonl.gz").read_bytes()
    (out / "cloud-gpus.jsonl.gz").write_bytes(data[: len(data) // 2])


def _corrupt(out):
    (out / "cloud-gpus.jsonl.gz").write_bytes(b"not gzip at all")


def _unknown_version(out):
    def edit(rows):
        rows[0]["commit"] = "f" * 40
        return rows
    _rewrite_rows(out / "cloud-gpus.jsonl.gz", edit)


def _row_missing(out):
    _rewrite_rows(out / "cloud-gpus.jsonl.gz", lambda rows: rows[1:])


def _manifest_total_disagrees(out):
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["archives"]["cloud-gpus"]["rows"] += 1
    (out / MANIFEST).write_text(json.dumps(manifest))


def _manifest_not_json(out):
    (out / MANIFEST).write_text("{")


def _file_missing(out):
    (out / "full-stack.jsonl.gz").unlink()


@pytest.mark.parametrize(("damage", "says"), [
    (_truncate, "truncated or corrupt"),
    (_corrupt, "truncated or corrupt"),
    (_unknown_version, "is not in the manifest's 'cloud-gpus'"),
    (_row_missing, "has 1 rows, the manifest says 2"),
    (_manifest_total_disagrees, "says 11 rows but its versions add up to 10"),
    (_manifest_not_json, "not JSON"),
    (_file_missing, "the manifest names it, but it is not there"),
])
def test_a_damaged_bundle_is_a_clear_error_and_loads_nothing(bundle, tmp_path, damage, says):
    out, _ = bundle
    damage(out)
    root = tmp_path / "data"
    with pytest.raises(RecordError, match=says):
        load_record(lambda: pytest.fail("nothing may be published"), root=root, directory=out)
    assert not work_db_path(root).exists() or read(root, "select count(*) from raw.crawls") \
        == [(0,)]


def test_an_archive_this_code_does_not_know_is_refused(bundle):
    out, _ = bundle
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["archives"]["nowhere"] = manifest["archives"].pop("cloud-gpus")
    (out / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(RecordError, match="archive 'nowhere', which this code does not know"):
        known_archive(read_manifest(out)["nowhere"])


def test_a_second_load_and_a_load_after_the_clones_backfill_add_nothing(bundle, clones,
                                                                         tmp_path):
    out, _ = bundle
    root = tmp_path / "data"
    # full-stack first from its clone: the record's versions of it are the same crawls
    from_clone = backfill("full-stack", clones["full-stack"], lambda: publish_pending(root),
                          root=root, every="commit")
    assert from_clone.read == DAYS
    first = load_record(lambda: publish_pending(root), root=root, directory=out)
    assert (first.read, first.already_read, first.offers) == (DAYS, DAYS, 2 * DAYS)
    assert first.rows_added == 2 * DAYS
    rows = read(root, """select archive, count(*), count(distinct archive_commit),
                                bool_and(reaches_via = 'archive'), bool_and(url like
                                'https://github.com/%/blob/' || archive_commit || '/%#L%')
                         from observations group by 1 order by 1""")
    assert rows == [("cloud-gpus", 2 * DAYS, DAYS, True, True),
                    ("full-stack", DAYS, DAYS, True, True)]
    second = load_record(lambda: pytest.fail("nothing to publish"), root=root, directory=out)
    assert (second.read, second.already_read, second.rows_added) == (0, 2 * DAYS, 0)


@pytest.mark.parametrize(("value", "enabled"), [
    (None, True), ("on", True), ("off", False), ("OFF ", False), ("0", False), ("no", False)])
def test_the_switch(value, enabled):
    assert record_enabled({} if value is None else {"GPUPRICES_RECORD": value}) is enabled


@pytest.mark.parametrize(("every", "kept"), [("commit", 6), ("day", 4), ("week", 2),
                                              ("month", 2), ("quarter", 1)])
def test_week_month_and_quarter_keep_each_periods_last_version(clones, every, kept):
    from pipelines.backfill.archives import ARCHIVES
    from pipelines.backfill.git_walk import Version

    times = [utc(2024, 1, 29, 9), utc(2024, 1, 29, 10), utc(2024, 1, 31), utc(2024, 2, 1),
             utc(2024, 2, 1, 5), utc(2024, 2, 5)]
    versions = [Version(f"{n:040d}", t, "cloud_gpu.json", "b") for n, t in enumerate(times)]
    chosen = choose_versions(ARCHIVES["cloud-gpus"], versions, every=every)
    assert len(chosen) == kept
    assert chosen[-1] == versions[-1]


def test_the_bundled_record_reads_whole_and_agrees_with_its_manifest():
    parts = read_manifest(RECORD_DIR)
    assert set(parts) <= set(SELECTIONS)
    for part in parts.values():
        known_archive(part)
        assert part.selection["every"] == SELECTIONS[part.name].every
        assert sum(len(offers) for _, offers in read_offers(RECORD_DIR, part)) == part.rows
    size = sum((RECORD_DIR / p.file).stat().st_size for p in parts.values())
    assert size < 5_000_000, "the record must stay a few MB"


def test_the_bundled_record_is_what_the_builder_makes_from_the_same_clones(tmp_path):
    """Rebuilt from clones at the commits the manifest names (when this machine has them, in
    GPUPRICES_RECORD_CLONES or /work/.mirror): byte for byte the same files."""
    import os
    import subprocess
    from pathlib import Path

    from pipelines.backfill.archives import ARCHIVES
    from pipelines.backfill.record_build import clone_path

    clones = Path(os.environ.get("GPUPRICES_RECORD_CLONES", "/work/.mirror"))
    parts = read_manifest(RECORD_DIR)
    repos = {n: clone_path(ARCHIVES[n], clones, {}) for n in parts}
    heads = {n: subprocess.run(["git", "-C", str(r), "rev-parse", "HEAD"], capture_output=True,
                               text=True, check=False).stdout.strip() if r.exists() else None
             for n, r in repos.items()}
    if any(heads[n] != part.head for n, part in parts.items()):
        pytest.skip(f"no clones under {clones} at the manifest's commits")
    out = tmp_path / "rebuilt"
    build(clones, {}, out, say=lambda line: None)
    for part in parts.values():
        assert (out / part.file).read_bytes() == (RECORD_DIR / part.file).read_bytes()
