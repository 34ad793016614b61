"""`gpuprices sources`: every source (spider) with its vendor, fetch style, the path a crawl takes
now (public, or keyed with the keys it lacks), snapshot, whether the default run crawls it
(spiders/default_sources.py) and, from the published database when
there is one, what it collected and how its last crawl went."""

from __future__ import annotations

import json

import click
from rich.markup import escape

from pipelines.cli.exit_codes import NoData
from pipelines.cli.listing import Column, show_listing
from pipelines.cli.output import listing_options, write_rows
from pipelines.cli.published import published_db
from pipelines.query.rows import records
from pipelines.warehouse.sql_files import source_price_labels, sql_text
from spiders.default_sources import opt_in_reason
from spiders.layout import SNAPSHOT_DIR
from spiders.price_basis import manifest_price_basis, price_from_word

# The listing's columns: (machine name, header, rank, free text that may wrap). The source's
# name is always shown; then how its prices stand, then how it is fetched.
SOURCE_COLUMNS = (("source", "source", 0, False), ("vendor", "vendor", 1, True),
                  ("kind", "kind", 9, False), ("fetch", "fetch", 5, True),
                  ("path_now", "path now", 4, True), ("terms", "terms", 6, False),
                  ("cards", "cards", 10, True), ("kind_period", "kind/period", 11, True),
                  ("regions", "regions", 12, False), ("snapshot", "snapshot", 8, True),
                  ("prices", "prices", 2, True), ("default_run", "default run", 7, True),
                  ("last_run", "last run", 3, True), ("holds", "holds", 6, True))


@click.command("sources")
@listing_options("every column, named " + ", ".join(c[0] for c in SOURCE_COLUMNS))
def sources_command(fmt: str, wide: bool) -> None:
    """List the sources: vendor, kind, fetch style, the path it reads now and the keys it lacks,
    what its vendor's terms say (automated access, index use), cards, price kinds, regions,
    snapshot, whether the default run crawls it (or why it is opt-in: `gpuprices run --source
    S`, GPUPRICES_OPT_IN), last run, and its holds: a crawl a blocking rule holds back now (since
    when, why) and the last decision about one (what, by which rule or person, when)."""
    rows = source_rows()
    if fmt != "table":
        write_rows(rows, [c[0] for c in SOURCE_COLUMNS], fmt)
        return
    columns = [Column(header, (lambda row, key=key: escape(str(row[key]))), rank=rank,
                      wrap=wrap) for key, header, rank, wrap in SOURCE_COLUMNS]
    show_listing(rows, columns, title="sources", wide=wide)


def source_rows() -> list[dict]:
    """One row per source, keyed by SOURCE_COLUMNS' machine names."""
    # Scrapy is imported here, not at the top: the spiders are Scrapy classes.
    from spiders.registry import source_names, spider_class
    from spiders.terms import terms_of

    facts = _source_facts()
    rows = []
    for name in source_names():
        spider = spider_class(name)
        manifest = SNAPSHOT_DIR / name / "manifest.json"
        snapshot, meta = "none", None
        if manifest.exists():
            meta = json.loads(manifest.read_text(encoding="utf-8"))
            snapshot = f"{meta['captured_at'][:10]} {meta.get('provenance', '')}"
        seen = facts.get(name, {})
        rows.append({
            "source": name, "vendor": spider.vendor, "kind": spider.vendor_kind,
            "fetch": fetch_text(spider), "path_now": spider.path_note(),
            "terms": terms_text(terms_of(name)), "cards": seen.get("cards", "-"),
            "kind_period": seen.get("kinds", "-"), "regions": str(seen.get("regions", "-")),
            "snapshot": snapshot, "prices": seen.get("prices") or snapshot_prices_text(meta),
            "default_run": opt_in_reason(name) or "crawled",
            "last_run": seen.get("last_run", "never run"), "holds": seen.get("holds", "-")})
    return rows


def terms_text(terms) -> str:
    """The vendor's terms in a short cell: 'access NO, index NO' (NO: forbidden, yes: allowed,
    ?: not found; the page and date: docs/sources.md, spiders/terms.csv)."""
    return terms.status if terms else "no row"


def snapshot_prices_text(meta: dict | None) -> str:
    """What a replay of the source's snapshot (its manifest `meta`; None: it has none) would
    land, before anything has: its prices' basis (published with their date, illustrative, ...),
    in one word."""
    if meta is None:
        return "-"
    basis, as_of = manifest_price_basis(meta)
    return f"snapshot: {price_from_word(basis)}" + (f" {as_of}" if as_of else "")


def fetch_text(spider) -> str:
    """How a source is fetched, as the README's Sources table starts its "fetched as" cell
    (tests/cli/test_readme_agrees.py keeps the two in step)."""
    keys = spider.key_names()
    keyed = f"; API with {' + '.join(keys)}" if keys else ""
    return spider.describe_fetch() + keyed


def _source_facts() -> dict[str, dict]:
    """Per source, from the database when there is one: cards, kinds, periods, regions, last run."""
    try:
        with published_db("raw.crawls", "main.observations") as con:
            return _facts(con)
    except NoData:             # nothing published yet: the table shows the sources alone
        return {}


def _facts(con) -> dict[str, dict]:
    """Cards, kinds, periods, regions and the last run of every source in the database."""
    facts = {r.pop("source"): r for r in records(con, sql_text(__file__, "source_facts"))}
    for crawl in records(con, sql_text(__file__, "last_crawls")):
        status = crawl["status"] if "status" in crawl \
            else "passed" if crawl["passed"] else "failed"
        finished, failures = crawl["finished_at"], crawl["failures"]
        last = f"{status} {finished:%Y-%m-%d %H:%M} ({crawl['offers']} offers)" if finished \
            else status
        if status != "passed" and failures:
            last += f": {failures[0]}"
        facts.setdefault(crawl["source"], {})["last_run"] = last
    for source, label in source_price_labels(con).items():
        facts.setdefault(source, {})["prices"] = label
    for source, text in holds_text(con).items():
        facts.setdefault(source, {})["holds"] = text
    return facts


def holds_text(con) -> dict[str, str]:
    """{source: its held crawls (since when, why) and its last decision (what, who, when)}; {}
    for a database made before crawls were held (no raw.crawl_decisions)."""
    import duckdb

    try:
        held = con.execute(sql_text(__file__, "held_crawls")).fetchall()
        last = con.execute(sql_text(__file__, "last_decisions")).fetchall()
    except duckdb.CatalogException:
        return {}
    lines: dict[str, list[str]] = {}
    for source, crawl_id, since, reason in held:
        when = f"{since:%Y-%m-%d %H:%M}" if since else "?"
        lines.setdefault(source, []).append(f"HELD since {when} ({crawl_id}): {reason}")
    for source, crawl_id, decision, by, at, _ in last:
        lines.setdefault(source, []).append(f"last: {decision} {at:%Y-%m-%d %H:%M} by {by} "
                                            f"({crawl_id})")
    return {source: "; ".join(text) for source, text in lines.items()}
