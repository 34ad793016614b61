"""A test-only copy of gcp's snapshot whose pricing page draws its tables with its own script, from
a JSON URL it fetches (an XHR): the input of the tests of what Chromium fetches for a rendered
page (the XHR answered from the replay server, refused over DOWNLOAD_MAXSIZE, archived, failing).

Not a claim about Google's page: gcp's recorded page has its tables in its markup, and
TABLES_XHR is a test-only path on the page's own origin (same origin, so no CORS in the way). The
tables the script draws are the recorded page's own, so the crawl yields the recorded offers."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from spiders.layout import SNAPSHOT_DIR
from spiders.vendors.gcp import PAGE_URL

TABLES_PATH = "/compute/gpus-pricing/test-only-tables.json"
TABLES_XHR = f"https://cloud.google.com{TABLES_PATH}"
TABLES_FILE = "test_only_tables.json"
PAGE_FILE = "gpus_pricing.html"
SECTIONS = re.compile(r'<section class="gpu-model".*</section>', re.S)
DRAW = f"""<div id="gpu-tables"></div>
<script>
fetch("{TABLES_PATH}").then(r => r.json()).then(data => {{
  document.getElementById("gpu-tables").innerHTML = data.sections;
}});
</script>"""


def write_scripted_gcp(snapshots: Path) -> Path:
    """Write snapshots/gcp (a copy of the recorded one, the page drawn from TABLES_XHR); return
    the JSON file the XHR is answered with."""
    target = snapshots / "gcp"
    shutil.copytree(SNAPSHOT_DIR / "gcp", target)
    page = (target / PAGE_FILE).read_text(encoding="utf-8")
    [sections] = SECTIONS.findall(page)
    (target / PAGE_FILE).write_text(page.replace(sections, DRAW), encoding="utf-8")
    tables = target / TABLES_FILE
    tables.write_text(json.dumps({"sections": sections}), encoding="utf-8")
    manifest_path = target / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    assert any(e["url"] == PAGE_URL for e in manifest["entries"])
    manifest["entries"].append({"method": "GET", "url": TABLES_XHR, "file": TABLES_FILE,
                                "content_type": "application/json; charset=utf-8",
                                "status": 200})
    manifest_path.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return tables


def scripted_snapshots(root: Path, *plain_sources: str) -> Path:
    """A snapshot dir holding the scripted gcp copy and the recorded `plain_sources`."""
    snapshots = root / "snapshots"
    snapshots.mkdir(parents=True)
    write_scripted_gcp(snapshots)
    for source in plain_sources:
        shutil.copytree(SNAPSHOT_DIR / source, snapshots / source)
    return snapshots
