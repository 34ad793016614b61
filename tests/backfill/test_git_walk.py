"""Walking an archive's history: every version of its files along the first-parent line, at
its commit's time; blobs a clone lacks; a path that is no repository; and which versions a
backfill chooses (--since, --until, --clouds, --every, SkyPilot's newest schema)."""

from __future__ import annotations

import subprocess
from datetime import timedelta

import pytest

from pipelines.backfill.archives import ARCHIVES
from pipelines.backfill.git_walk import ArchiveError, Version, blob_reader, file_versions, parse_log
from pipelines.backfill.selection import choose_versions, period
from tests.backfill.archive_repos import aws_csv, build_repo, lambda_csv, utc

SKYPILOT = ARCHIVES["skypilot-catalog"]
T0 = utc(2025, 3, 1, 6)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    """aws every 7 hours (v7 and v8 written together), lambda daily, a README change, and the
    aws file deleted at the end."""
    commits = []
    for n in range(40):
        when = T0 + timedelta(hours=7 * n)
        files = {"catalogs/v7/aws/vms.csv": aws_csv(30 + n, 10 + n),
                 "catalogs/v8/aws/vms.csv": aws_csv(30 + n, 10 + n)}
        if n % 4 == 0:
            files["catalogs/v8/lambda/vms.csv"] = lambda_csv(2 + n / 100)
        commits.append((when, files))
    commits.append((T0 + timedelta(hours=7 * 40), {"README.md": "catalog\n"}))
    commits.append((T0 + timedelta(hours=7 * 41), {"catalogs/v7/aws/vms.csv": None}))
    return build_repo(tmp_path_factory.mktemp("catalog"), commits)


def test_every_version_of_the_files_oldest_first_at_its_commit_time(catalog):
    versions = file_versions(catalog, SKYPILOT.pathspecs)
    assert len(versions) == 40 * 2 + 10          # the deletion and the README are no version
    assert versions[0].committed_at == T0
    assert [v.committed_at for v in versions] == sorted(v.committed_at for v in versions)
    assert {v.path for v in versions} == {"catalogs/v7/aws/vms.csv", "catalogs/v8/aws/vms.csv",
                                           "catalogs/v8/lambda/vms.csv"}


def test_blobs_are_read_as_committed_and_a_missing_one_is_none(catalog):
    version = file_versions(catalog, SKYPILOT.pathspecs)[0]
    with blob_reader(catalog) as blobs:
        assert blobs.read(version.blob).decode() == aws_csv(30, 10)
        assert blobs.read("1" * 40) is None
        assert blobs.read(version.blob).decode() == aws_csv(30, 10)   # still in step


def test_a_path_that_is_no_repository_is_refused(tmp_path):
    with pytest.raises(ArchiveError, match=r"not a git repository|failed"):
        file_versions(tmp_path, SKYPILOT.pathspecs)


def test_merged_branches_are_read_along_the_first_parent(tmp_path):
    repo = build_repo(tmp_path / "r", [(T0, {"cloud_gpu.json": "[]"})])
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e"]
    env = {"GIT_COMMITTER_DATE": "2025-03-02T00:00:00Z", "GIT_AUTHOR_DATE": "2025-03-02T00:00:00Z"}
    subprocess.run([*git, "checkout", "-q", "-b", "side"], check=True)
    (repo / "cloud_gpu.json").write_text('[{"name": "x"}]')
    subprocess.run([*git, "commit", "-qam", "side"], check=True,
                   env={**env, "PATH": "/usr/bin:/bin"})
    subprocess.run([*git, "checkout", "-q", "main"], check=True)
    subprocess.run([*git, "merge", "-q", "--no-ff", "-m", "merge", "side"], check=True,
                   env={"GIT_COMMITTER_DATE": "2025-03-03T00:00:00Z",
                        "GIT_AUTHOR_DATE": "2025-03-03T00:00:00Z", "PATH": "/usr/bin:/bin"})
    versions = file_versions(repo, ("cloud_gpu.json",))
    assert [v.committed_at.date().isoformat() for v in versions] == ["2025-03-01", "2025-03-03"]


def test_parse_log_skips_deletions_and_lines_before_a_commit():
    text = ("\n:100644 100644 a b M\tstray\n@@commit abc 1700000000\n\n"
            f":100644 000000 {'1' * 40} {'0' * 40} D\tgone.csv\n"
            f":000000 100644 {'0' * 40} {'2' * 40} A\tnew.csv\n")
    assert parse_log(text) == [Version("abc", utc(2023, 11, 14, 22, 13, 20), "new.csv", "2" * 40)]


def _chosen(catalog, **options):
    return choose_versions(SKYPILOT, file_versions(catalog, SKYPILOT.pathspecs), **options)


def test_one_schema_per_cloud_and_commit_the_newest(catalog):
    chosen = _chosen(catalog, every="commit")
    assert len(chosen) == 40 + 10
    assert {v.path for v in chosen} == {"catalogs/v8/aws/vms.csv", "catalogs/v8/lambda/vms.csv"}


def test_since_until_and_clouds(catalog):
    since, until = T0 + timedelta(days=2), T0 + timedelta(days=4)
    chosen = _chosen(catalog, since=since, until=until, clouds=["lambda"], every="commit")
    assert chosen and all(since <= v.committed_at < until for v in chosen)
    assert {v.path for v in chosen} == {"catalogs/v8/lambda/vms.csv"}
    assert _chosen(catalog, clouds=["azure"]) == []


def test_every_day_keeps_each_files_last_version_of_the_day(catalog):
    chosen = _chosen(catalog, every="day")
    days = [(v.path, v.committed_at.date()) for v in chosen]
    assert len(days) == len(set(days))
    everything = _chosen(catalog, every="commit")
    for v in chosen:
        same_day = [w for w in everything if w.path == v.path
                    and w.committed_at.date() == v.committed_at.date()]
        assert v == max(same_day, key=lambda w: w.committed_at)


def test_every_hour_keeps_distinct_hours_and_refuses_other_periods(catalog):
    assert len(_chosen(catalog, every="hour")) == len(_chosen(catalog, every="commit"))
    with pytest.raises(ValueError, match="every must be one of"):
        period(T0, "fortnight")
    with pytest.raises(ValueError):
        _chosen(catalog, every="minute")
