"""A version's offers -> the raw items and crawls a backfill loads: one crawl per source the
version lists ('<archive>:<cloud>'), each offer a raw item as a spider would have yielded it,
observed at the commit's time, reached through the archive, with its provenance. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pipelines.backfill.archives import Archive
from pipelines.backfill.git_walk import Version
from pipelines.backfill.offers import ArchiveOffer
from pipelines.backfill.vendors import vendor_of

REACHES_VIA = "archive"
# An archive published its prices, dated by the commit of the version they were read from: each
# offer carries its version's date (a crawl the same, pipelines/backfill/load.py).
ARCHIVE_PRICE_BASIS = "published"


@dataclass
class Crawl:
    crawl_id: str
    source: str
    items: list[dict] = field(default_factory=list)


def source_name(archive: Archive, cloud: str) -> str:
    return f"{archive.prefix}:{vendor_of(cloud).key}"


def crawl_id(source: str, version: Version) -> str:
    """Sorts by source, then time (the source checks take a source's latest crawls by id)."""
    return f"{source}-{version.committed_at:%Y%m%dT%H%M%S}-{version.commit[:12]}"


def file_url(archive: Archive, version: Version, line: int) -> str:
    anchor = f"#L{line}" if line else ""
    return f"https://github.com/{archive.repository}/blob/{version.commit}/{version.path}{anchor}"


def raw_item(archive: Archive, version: Version, offer: ArchiveOffer, raw_ref: str) -> dict:
    vendor = vendor_of(offer.cloud)
    fields = dict(offer.fields)
    listed_at = fields.pop("url_listed", None)
    vendor_data = {**fields.pop("vendor_data", {}), **({"listed_at": listed_at}
                                                       if listed_at else {})}
    item = {
        "source": source_name(archive, offer.cloud), "vendor": vendor.vendor,
        "vendor_kind": vendor.vendor_kind, "reaches_via": REACHES_VIA,
        **({"region_key": vendor.region_key} if vendor.region_key else {}),
        **fields,
        "available": None,
        "url": file_url(archive, version, offer.line), "raw_ref": raw_ref,
        "observed_at": version.committed_at.isoformat(),
        "price_basis": ARCHIVE_PRICE_BASIS,
        "prices_as_of": version.committed_at.date().isoformat(),
        "archive": archive.name, "archive_commit": version.commit,
        "archive_file": version.path, "archive_line": offer.line,
    }
    if vendor_data:
        item["vendor_data"] = vendor_data
    return item


def version_crawls(archive: Archive, version: Version, offers: Sequence[ArchiveOffer],
                   raw_ref: str, clouds: Sequence[str] = ()) -> list[Crawl]:
    """The crawls of one version, by source, of the clouds asked for (all when none is)."""
    wanted = {c.lower() for c in clouds}
    crawls: dict[str, Crawl] = {}
    for offer in sorted(offers, key=lambda o: o.line):
        vendor = vendor_of(offer.cloud)
        if wanted and not wanted & {vendor.key, offer.cloud.lower()}:
            continue
        source = source_name(archive, offer.cloud)
        crawl = crawls.setdefault(source, Crawl(crawl_id(source, version), source))
        crawl.items.append(raw_item(archive, version, offer, raw_ref))
    return list(crawls.values())
