"""`gpuprices check-sources`: does each vendor's page still have the shape its spider reads?

For the day a vendor changes its page. One page of offers per source is fetched (politely: the
project's settings, so its User-Agent and robots.txt; no retries; a timeout; one request at a time,
a second only when the first page is an index) and read by the spider's own parse callbacks; the
offers are checked as the crawl monitor checks a crawl (required fields, at least the source's
`min_offers`, or its share on one page). Nothing is written to the database or the raw archive: the
probe runs with the archive middleware and the monitor switched off, in a temporary data directory
deleted afterwards. Without `--live` the bundled snapshots are replayed on loopback, so the command
works offline and in tests. docs/check-sources.md has the details.

Each probe is a crawl in a subprocess of its own (`python -m pipelines.cli.source_probe`), as in
the pipeline: a Twisted reactor cannot restart, and a hung probe is ended by the subprocess's
deadline. This module runs the probes, judges their facts and prints the verdicts.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from urllib.parse import urlsplit

import click

from pipelines.cli.options import TEXT, FiniteFloatRange, NonEmptyPath
from pipelines.cli.output import console, listing_options, write_rows
from spiders.layout import REPO_ROOT, SNAPSHOT_DIR

EXIT_OK, EXIT_CHANGED = 0, 1   # this command's: 1 says a source changed or could not be fetched
DEFAULT_TIMEOUT_SECONDS = 30   # spiders/settings.py DOWNLOAD_TIMEOUT
PARALLEL_PROBES = 4            # as many crawl subprocesses at a time as the pipeline runs
# Beyond its downloads (robots.txt and at most MAX_REQUESTS pages, each bounded by the timeout),
# what a probe may take to start Python and Scrapy, and Chromium for rendered pages.
STARTUP_ALLOWANCE_SECONDS = 60
# A source whose first page is an index (RunPod: the places, then prices per place) needs a
# second request to reach offers; the probe never sends more than this many.
MAX_REQUESTS = 3
# The probe's module, run with -m; Scrapy loads its middlewares and extension by this name. The
# probe takes its limits above from here (it imports this module, never the other way round:
# `-m` would then find it imported already).
PROBE_MODULE = "pipelines.cli.source_probe"

MATCHES, CHANGED, FETCH_FAILED, SKIPPED = "matches", "changed", "fetch failed", "skipped"


@dataclass
class SourceCheck:
    source: str
    status: str                    # matches | changed | fetch failed | skipped
    offers: int = 0
    min_offers: int = 0            # what one page must yield (see judge)
    crawl_min_offers: int = 0      # the crawl monitor's minimum for a whole crawl
    sibling_pages: int = 1         # pages like the one read that the full crawl fetches
    page_url: str | None = None    # the last page requested
    http_status: int | None = None
    requests: int = 0              # pages requested (robots.txt aside)
    pages_not_fetched: int = 0     # further pages the full crawl reads
    reasons: list[str] = field(default_factory=list)


def judge(source: str, facts: dict, timeout_seconds: float) -> SourceCheck:
    """The verdict on one probe's facts. A page that could not be fetched is "fetch failed"; a page
    fetched whose offers do not have the shape the spider expects is "changed".

    The monitor's minimum is for a whole crawl. A source whose crawl fetches several pages like
    the one read (AWS: one per region; RunPod: one per place) owes its share of it on that page,
    rounded up; next pages are not counted off (their number is unknown until fetched)."""
    url, status, error = facts.get("page_url"), facts.get("page_status"), facts.get("page_error")
    crawl_min, siblings = facts.get("min_offers", 1), max(1, facts.get("sibling_pages", 1))
    offers, min_offers = facts.get("offers", 0), math.ceil(crawl_min / siblings)
    fetch_problems, shape_problems = [], []
    if facts.get("robots_forbidden"):
        fetch_problems.append(f"robots.txt disallows {url}")
    elif error and "Timeout" in error.split(":")[0]:
        fetch_problems.append(f"timeout: no answer within {timeout_seconds:g} s from {url} "
                              f"({error})")
    elif error:
        fetch_problems.append(f"download failed: {error} ({url})")
    elif status is not None and status >= 400:
        fetch_problems.append(f"HTTP error {status} from {url}")
    elif url is None:
        fetch_problems.append("the spider made no request")
    elif facts.get("finish_reason", "finished") != "finished":
        fetch_problems.append(f"the probe ended with {facts['finish_reason']!r} ({url})")
    if not fetch_problems:
        shape_problems.extend(f"parse error: {e}" for e in facts.get("parse_errors", []))
        if offers == 0:
            shape_problems.append("zero offers")
        elif offers < min_offers:
            share = (f": the crawl's {crawl_min} over {siblings} pages like this one"
                     if siblings > 1 else "")
            shape_problems.append(f"only {offers} offers (at least {min_offers} expected{share})")
        shape_problems.extend(f"{count} of {offers} offers miss required field {name!r}"
                              for name, count in sorted(facts.get("missing", {}).items()))
    verdict = FETCH_FAILED if fetch_problems else CHANGED if shape_problems else MATCHES
    return SourceCheck(source, verdict, offers, min_offers, crawl_min, siblings, url, status,
                       facts.get("requests", 0), facts.get("pages_not_fetched", 0),
                       fetch_problems + shape_problems)


def check_source(source: str, replay_url: str | None, timeout_seconds: float) -> SourceCheck:
    """Probe one source in a subprocess; its facts judged."""
    with tempfile.TemporaryDirectory(prefix=f"gpuprices-check-{source}-") as tmp:
        result_path = Path(tmp) / "result.json"
        env = {**os.environ, "GPUPRICES_DATA_DIR": str(Path(tmp) / "data"),
               "GPUPRICES_REPLAY_URL": replay_url or ""}  # empty: live (see replay_base_url)
        cmd = [sys.executable, "-m", PROBE_MODULE, source, str(Path(tmp) / "data"),
               str(result_path), str(timeout_seconds)]
        deadline = (1 + MAX_REQUESTS) * timeout_seconds + 2 * STARTUP_ALLOWANCE_SECONDS
        try:
            proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                                  timeout=deadline)
        except subprocess.TimeoutExpired:
            return SourceCheck(source, FETCH_FAILED,
                               reasons=[f"timeout: the probe did not end within {deadline:g} s"])
        if not result_path.exists():
            tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
            return SourceCheck(source, FETCH_FAILED, reasons=[
                f"the probe did not finish (exit code {proc.returncode}): {tail}"])
        return judge(source, json.loads(result_path.read_text(encoding="utf-8")),
                     timeout_seconds)


def check_sources(sources: list[str], replay_url: str | None,
                  timeout_seconds: float) -> list[SourceCheck]:
    """Every source checked (those missing a required API key skipped), in the order given."""
    from spiders.registry import spider_class

    def one(source: str) -> SourceCheck:
        if reason := spider_class(source).missing_key():
            return SourceCheck(source, SKIPPED, reasons=[reason])
        return check_source(source, replay_url, timeout_seconds)

    with ThreadPoolExecutor(PARALLEL_PROBES) as pool:
        return list(pool.map(one, sources))


STYLES = {MATCHES: "green", CHANGED: "bold red", FETCH_FAILED: "red", SKIPPED: "yellow"}


@click.command("check-sources")
@click.option("--live", is_flag=True,
              help="Fetch the vendors' real pages instead of the bundled snapshots.")
@click.option("--source", "sources", type=TEXT, multiple=True, metavar="NAME",
              help="Only this source (repeatable); see `gpuprices sources`.")
@click.option("--timeout", "timeout_seconds", type=FiniteFloatRange(min=0.5, max=600),
              default=DEFAULT_TIMEOUT_SECONDS, show_default=True,
              help="Seconds to wait for each download (robots.txt, the page).")
@click.option("--snapshots", type=NonEmptyPath(exists=True, file_okay=False, path_type=Path),
              default=None, help="Replay these snapshots instead of data/snapshots/ "
                                 "(or GPUPRICES_SNAPSHOT_DIR); not with --live.")
@listing_options("every field of each source's check (in csv and tsv a list's items joined "
                 "by \"; \")")
@click.pass_context
def check_sources_command(ctx: click.Context, live: bool, sources: tuple[str, ...],
                          timeout_seconds: float, snapshots: Path | None,
                          fmt: str, wide: bool) -> None:
    """Check that each source's page still has the shape its spider reads.

    Fetches one page of offers per source (the project's User-Agent, robots.txt obeyed, no
    retries, one request at a time), runs the spider's own parse on it and checks the offers:
    required fields present, at least the source's minimum number of offers (its share, when the
    crawl reads several such pages). Writes nothing to the database or the raw archive. Without
    --live the bundled snapshots are replayed on 127.0.0.1 (works offline).

    \b
    Exit codes: 0 every source matches (or is skipped: a required API key is not set);
                1 some source changed or could not be fetched; 2 usage error.
    """
    from spiders.registry import source_names
    from spiders.replay_server import ReplayServer

    known = source_names()
    unknown = sorted(set(sources) - set(known))
    if unknown:
        raise click.BadParameter(f"unknown source(s) {', '.join(unknown)}; known: "
                                 f"{', '.join(known)}", ctx, param_hint="--source")
    if live and snapshots:
        raise click.UsageError("--snapshots replays recorded pages; it cannot go with --live", ctx)
    chosen = list(dict.fromkeys(sources)) or known
    if live:
        results = check_sources(chosen, None, timeout_seconds)
    else:
        snapshot_dir = snapshots or Path(os.environ.get("GPUPRICES_SNAPSHOT_DIR") or SNAPSHOT_DIR)
        with ReplayServer(snapshot_dir) as server:
            results = check_sources(chosen, server.url, timeout_seconds)
    if fmt == "json":
        click.echo(json.dumps([asdict(r) for r in results], ensure_ascii=False, indent=2))
    elif fmt != "table":
        rows = [{k: "; ".join(map(str, v)) if isinstance(v, list) else v
                 for k, v in asdict(r).items()} for r in results]
        write_rows(rows, [f.name for f in fields(SourceCheck)], fmt)
    else:
        _print_table(results, "live" if live else "replay", wide)
    if any(r.status in (CHANGED, FETCH_FAILED) for r in results):
        ctx.exit(EXIT_CHANGED)


def _page_text(r: SourceCheck) -> str:
    """The page's host and path (the whole URL is in --format json), its HTTP status, requests."""
    from rich.markup import escape

    page = "-"
    if r.page_url:
        parts = urlsplit(r.page_url)
        page = escape(f"{parts.netloc}{parts.path}"
                      + (f" -> HTTP {r.http_status}" if r.http_status else ""))
    if r.requests > 1:
        page += f" ({r.requests} requests)"
    if r.pages_not_fetched:
        page += f" (+{r.pages_not_fetched} pages not fetched)"
    return page


def _print_table(results: list[SourceCheck], mode: str, wide: bool) -> None:
    from rich.markup import escape

    from pipelines.cli.listing import Column, show_listing

    columns = (
        Column("source", lambda r: r.source),
        Column("verdict", lambda r: f"[{STYLES[r.status]}]{r.status}[/]"),
        Column("offers", lambda r: "-" if r.status == SKIPPED
               else f"{r.offers} (min {r.min_offers})", rank=2),
        Column("page", _page_text, rank=3, wrap=True),
        Column("reasons", lambda r: escape("; ".join(r.reasons)), rank=1, wrap=True))
    counts = {s: sum(r.status == s for r in results) for s in STYLES}
    show_listing(results, columns, title=f"sources ({mode}: one page of offers each)",
                 wide=wide)
    console.print(", ".join(f"{n} {s}" for s, n in counts.items() if n))
