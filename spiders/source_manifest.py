"""What a run needs to know of every source without importing its spider: its name, the module
that defines it, its vendor, whether it renders in Chromium, and the keys it needs. Importing
every spider (and the vendor SDKs some load) cost seconds of every `gpuprices run` before its
first step, only to list the sources. spiders/source_manifest.json holds these facts;
tests/spiders/test_source_manifest.py holds it equal to the spiders themselves, and
`python -m spiders.registry` writes it again after a spider is added or changed."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

MANIFEST_FILE = Path(__file__).with_name("source_manifest.json")


@dataclass(frozen=True)
class SourceFacts:
    name: str
    module: str
    vendor: str
    render_js: bool
    api_key_required: bool
    key_names: tuple[str, ...]
    # what a crawl reads without keys, and with them (Spider.public_path / keyed_path): the run
    # summary's path notes, without importing the spider (and its vendor SDK) after the run
    public_path: str
    keyed_path: str | None

    def keyed(self) -> bool:
        """Spider.keyed: the source has a keyed path and every key is set."""
        return keyed_path_ready(self.key_names)

    def missing_key(self) -> str | None:
        return missing_key_reason(self.name, self.api_key_required, self.key_names)

    def path_note(self) -> str:
        """Spider.path_note, from the manifest."""
        return path_note(self.public_path, self.keyed_path, self.key_names,
                         self.api_key_required)


def keyed_path_ready(key_names: tuple[str, ...]) -> bool:
    """The one home of "this crawl takes the keyed path": the source has one (keys named) and
    every key is set; Spider.keyed and the manifest's facts both ask it."""
    return bool(key_names) and all(os.environ.get(key) for key in key_names)


def missing_key_reason(name: str, api_key_required: bool,
                       key_names: tuple[str, ...]) -> str | None:
    """Why a source cannot run now (a key it requires is not set), or None; the one home of the
    message that Spider.missing_key and the run's crawl step give."""
    missing = [key for key in key_names if not os.environ.get(key)]
    if api_key_required and missing:
        noun = "an API key in the environment variable" if len(missing) == 1 \
            else "API keys in the environment variables"
        return f"skipped: {name} needs {noun} {', '.join(missing)}"
    return None


def path_note(public: str, keyed: str | None, key_names: tuple[str, ...],
              api_key_required: bool) -> str:
    """The path a crawl takes now, and the keys it lacks, in one line:
    "TENCENTCLOUD_SECRET_ID, TENCENTCLOUD_SECRET_KEY not set: public path, ..."; the one home of
    the words Spider.path_note and the manifest's facts give."""
    if not key_names:
        return public
    keyed = keyed or f"the keyed API ({', '.join(key_names)})"
    if keyed_path_ready(key_names):
        return f"keys set: {keyed}"
    missing = ", ".join(key for key in key_names if not os.environ.get(key))
    if api_key_required:
        return f"{missing} not set: skipped (its only path is {keyed})"
    return f"{missing} not set: public path, {public}"


@cache
def manifest() -> dict[str, SourceFacts]:
    rows = json.loads(MANIFEST_FILE.read_text(encoding="utf-8"))
    return {row["name"]: SourceFacts(**{**row, "key_names": tuple(row["key_names"])})
            for row in rows}


def facts_of(spider) -> SourceFacts:
    """The manifest's facts of a loaded spider class."""
    return SourceFacts(name=spider.name, module=spider.__module__, vendor=spider.vendor,
                       render_js=bool(spider.render_js),
                       api_key_required=bool(spider.api_key_required),
                       key_names=tuple(spider.key_names()),
                       public_path=spider.public_path or spider.describe_fetch(),
                       keyed_path=spider.keyed_path)


def write_manifest(spiders, path: Path = MANIFEST_FILE) -> None:
    """The manifest of these spider classes (spiders.registry.loaded_spider_classes)."""
    rows = [json.dumps({**asdict(facts_of(cls)), "key_names": list(cls.key_names())},
                       ensure_ascii=False) for cls in spiders]
    path.write_text("[\n" + ",\n".join(rows) + "\n]\n", encoding="utf-8")
