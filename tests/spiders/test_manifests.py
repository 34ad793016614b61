"""Every snapshot manifest says where each file's format and values come from, in a form replay
still reads, and docs/sources.md agrees with the manifests."""

import json
import re

import pytest

from spiders.layout import REPO_ROOT, SNAPSHOT_DIR
from spiders.price_basis import (
    SNAPSHOT_BASES,
    entry_price_basis,
    snapshot_price_basis,
    summary_price_basis,
)
from spiders.registry import source_names
from spiders.replay_server import load_manifests

LEVELS = {"captured", "shape verified", "partly verified", "unverified"}
FILE_LEVELS = {"captured", "vendor-documentation", "public-client-fixture",
               "modeled-on-public-format", "modeled-unverified"}


@pytest.fixture(scope="module")
def manifests() -> dict[str, dict]:
    return {s: json.loads((SNAPSHOT_DIR / s / "manifest.json").read_text(encoding="utf-8"))
            for s in source_names()}


def _doc_levels() -> dict[str, str]:
    text = (REPO_ROOT / "docs" / "sources.md").read_text(encoding="utf-8")
    # the table of "## The sources" only (other sections' tables start with a source too)
    sources = text.split("\n## The sources\n", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `(\w+)` \| ([a-z ]+?) \|", sources, flags=re.M))


@pytest.mark.parametrize("source", sorted(source_names()))
def test_manifest_states_its_verification_and_what_is_unverified(source, manifests):
    meta = manifests[source]
    assert meta["verification"] in LEVELS
    assert meta["provenance"] in ("captured", "modeled-on-public-format", "modeled-unverified")
    assert (meta["verification"] == "unverified") == (meta["provenance"] == "modeled-unverified")
    if meta["verification"] != "captured":
        assert meta["unverified"] and all(isinstance(u, str) and u for u in meta["unverified"])


@pytest.mark.parametrize("source", sorted(source_names()))
def test_manifest_says_what_its_prices_are(source, manifests):
    """price_basis says whether the prices are captured, published (real, dated), illustrative or
    mixed; published prices carry their date, and a basis is never claimed without prices_from."""
    meta = manifests[source]
    assert meta["price_basis"] in SNAPSHOT_BASES, source
    assert "prices_as_of" in meta
    if meta["price_basis"] == "published":
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(meta["prices_as_of"])), source
    if meta["price_basis"] == "illustrative":
        assert meta["prices_as_of"] is None, source
    if meta["price_basis"] == "captured":
        assert meta["provenance"] == "captured", source
    assert meta["prices_from"], source
    assert snapshot_price_basis(SNAPSHOT_DIR, source)[0] == meta["price_basis"]


@pytest.mark.parametrize("source", sorted(source_names()))
def test_the_manifests_basis_sums_up_its_entries(source, manifests):
    """Each entry (one recorded response) states its own price basis, as-of date and, for real
    prices, the record they are (repo, path, commit or url, and the record's date: null for an
    undated one); the top-level basis and as-of are their summary. A manifest whose entries share
    one basis may leave it to the top level (the IDC pages: one entry each)."""
    meta = manifests[source]
    bases = [entry_price_basis(e, meta) for e in meta["entries"]]
    assert summary_price_basis(bases) == snapshot_price_basis(SNAPSHOT_DIR, source), source
    for entry, (basis, as_of) in zip(meta["entries"], bases, strict=True):
        if meta["price_basis"] == "mixed":
            assert "price_basis" in entry, f"{source} {entry['file']}: which prices are real?"
        if "price_basis" not in entry:
            continue
        assert entry["price_basis"] in SNAPSHOT_BASES, (source, entry["file"])
        record = entry.get("price_record")
        if basis in ("published", "undated"):
            cited = record and (record.get("url") or all(
                record.get(k) for k in ("repo", "path", "commit")))
            assert cited, (source, entry["file"])
            assert (record.get("date") == as_of) if basis == "published" else \
                record.get("date") is None, (source, entry["file"])
        if basis in ("published", "mixed"):
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(as_of)) or basis == "mixed", \
                (source, entry["file"])


def test_an_unstated_or_unknown_basis_reads_as_illustrative(tmp_path):
    for name, meta in (("a", {}),
                       ("b", {"price_basis": "real, trust me", "prices_as_of": "2026-01-01"}),
                       ("c", {"price_basis": "published", "prices_as_of": "2025-11-11T00:00"})):
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_text(json.dumps(meta), encoding="utf-8")
    assert snapshot_price_basis(tmp_path, "a") == ("illustrative", None)
    assert snapshot_price_basis(tmp_path, "b") == ("illustrative", None)
    assert snapshot_price_basis(tmp_path, "c") == ("published", "2025-11-11")
    assert snapshot_price_basis(tmp_path, "missing") == (None, None)


@pytest.mark.parametrize("source", sorted(source_names()))
def test_every_file_states_its_provenance(source, manifests):
    for entry in manifests[source]["entries"]:
        prov = entry["provenance"]
        assert prov["level"] in FILE_LEVELS, entry["file"]
        assert prov["values"]
        for cited in prov.get("request_from", []) + prov["shape_from"]:
            assert cited["shows"] and ("page" in cited or len(cited["commit"]) == 40), cited
        if prov["level"] in ("vendor-documentation", "public-client-fixture",
                             "modeled-on-public-format"):
            assert prov["shape_from"], f"{source}/{entry['file']} cites nothing for its shape"
        if prov["level"] == "captured":
            assert prov.get("captured_from")


def test_docs_list_every_source_at_its_manifest_level(manifests):
    assert _doc_levels() == {s: m["verification"] for s, m in manifests.items()}


def test_replay_still_reads_every_manifest(manifests):
    sources = {snapshot.source for snapshot in load_manifests(SNAPSHOT_DIR).values()}
    assert sources == set(manifests)
