"""Where a backfilled offer comes from, carried from its raw item onto its observation row
unchanged: the archive, the commit, the file and the line (pipelines/backfill/ writes them;
a crawled offer has none, and its row leaves them null). Pure: no I/O."""

PROVENANCE_FIELDS = ("archive", "archive_commit", "archive_file", "archive_line")


def provenance(item: dict) -> dict:
    """The provenance fields `item` states (none for a crawled offer)."""
    return {field: item[field] for field in PROVENANCE_FIELDS if item.get(field) is not None}
