"""Which path a source reads now, and the keys it lacks: `path_note()` in one line, shown by
`gpuprices sources` and, for a source that fell back to its public path, by the run summary."""

from __future__ import annotations

from dataclasses import replace

import pytest
from click.testing import CliRunner

from pipelines.cli import main
from pipelines.cli.output import console
from pipelines.cli.run_summary import keyless_notes
from pipelines.cli.sources import fetch_text
from spiders.registry import spider_class
from spiders.source_manifest import manifest

KEYS = ("GPUPRICES_TEST_ID", "GPUPRICES_TEST_SECRET")


@pytest.fixture
def keyed(monkeypatch):
    """azure given a two-key signed path (both keys unset) and a public one."""
    spider = spider_class("azure")
    monkeypatch.setattr(spider, "key_envs", KEYS)
    monkeypatch.setattr(spider, "public_path", "the retail prices API")
    monkeypatch.setattr(spider, "keyed_path", "the signed API through the vendor's SDK")
    # what the run reads instead of the class (spiders/source_manifest.py) says the same
    monkeypatch.setitem(manifest(), "azure", replace(
        manifest()["azure"], key_names=KEYS, public_path="the retail prices API",
        keyed_path="the signed API through the vendor's SDK"))
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    return spider


def test_without_keys_the_public_path_and_the_missing_keys(keyed, monkeypatch):
    assert keyed.missing_keys() == list(KEYS) and not keyed.keyed()
    assert keyed.path_note() == ("GPUPRICES_TEST_ID, GPUPRICES_TEST_SECRET not set: public path, "
                                 "the retail prices API")
    monkeypatch.setenv("GPUPRICES_TEST_ID", "id-value")
    assert keyed.path_note().startswith("GPUPRICES_TEST_SECRET not set: public path")
    assert keyed(crawl_id="t").credentials() is None          # half a key pair is no key
    assert keyed.missing_key() is None                        # not skipped: it has a public path


def test_with_every_key_the_keyed_path_and_no_value_shown(keyed, monkeypatch):
    monkeypatch.setenv("GPUPRICES_TEST_ID", "id-value")
    monkeypatch.setenv("GPUPRICES_TEST_SECRET", "secret-value")
    assert keyed.keyed()
    assert keyed.path_note() == "keys set: the signed API through the vendor's SDK"
    assert keyed(crawl_id="t").credentials() == {"GPUPRICES_TEST_ID": "id-value",
                                                 "GPUPRICES_TEST_SECRET": "secret-value"}
    assert "secret-value" not in keyed.path_note() + fetch_text(keyed)
    assert keyless_notes(["azure"]) == []


def test_a_source_without_a_public_path_is_skipped_naming_every_key(keyed, monkeypatch):
    monkeypatch.setattr(keyed, "api_key_required", True)
    monkeypatch.setitem(manifest(), "azure", replace(manifest()["azure"], api_key_required=True))
    assert keyed.missing_key() == ("skipped: azure needs API keys in the environment variables "
                                   "GPUPRICES_TEST_ID, GPUPRICES_TEST_SECRET")
    assert keyed.path_note() == ("GPUPRICES_TEST_ID, GPUPRICES_TEST_SECRET not set: skipped (its "
                                 "only path is the signed API through the vendor's SDK)")
    assert keyless_notes(["azure"]) == []          # said among the skipped sources' reasons


def test_sources_lists_the_path_and_the_summary_names_the_missing_keys(keyed, tmp_path,
                                                                        monkeypatch):
    monkeypatch.setattr(console, "width", 500)     # were it a table: each cell on one line
    result = CliRunner(env={"GPUPRICES_DATA_DIR": str(tmp_path)}).invoke(main, ["sources"])
    assert result.exit_code == 0, result.output
    assert "path_now" in result.output             # tsv in a pipe: one line per source
    assert ("GPUPRICES_TEST_ID, GPUPRICES_TEST_SECRET not set: public path, the retail prices "
            "API") in result.output
    assert "JSON API; API with GPUPRICES_TEST_ID + GPUPRICES_TEST_SECRET" in result.output
    # before any run, what a replay of each snapshot would land
    assert "snapshot: modeled" in result.output and "snapshot: part modeled" in result.output
    assert keyless_notes(["azure", "runpod", "not_a_source"]) == [("azure", keyed.path_note())]


def test_the_summary_notes_import_no_spider(monkeypatch):
    """The run summary's notes come from the manifest: after the run, importing a keyed source's
    spider brought its vendor SDK in (seconds of the command, after its Dagster run)."""
    import subprocess
    import sys

    code = ("import sys; from spiders.source_manifest import manifest; "
            "from pipelines.cli.run_summary import keyless_notes; "
            "notes = keyless_notes(sorted(manifest())); "
            "print(len(notes), sorted(m for m in sys.modules if m.startswith('spiders.vendors')))")
    for facts in manifest().values():
        for key in facts.key_names:
            monkeypatch.delenv(key, raising=False)
    count, modules = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                    check=True).stdout.strip().split(" ", 1)
    assert int(count) > 0 and modules == "[]"
