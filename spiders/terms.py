"""What each source's vendor's terms say about automated access and about reusing its prices in
an index or a price comparison, with the page and the day they were read: the reviewed table
terms.csv next to this module, one row per source (spiders/vendors) and per vendor seen only in
the archives (by its vendor key, spiders/parsing/vendor_aliases.csv). "not found" says the terms
were not read, or say nothing either way (the note tells which). Read by the live crawl's source
selection (live_access_refusal), the published index (index_excluded_sources: its offer input
leaves those vendors out), `gpuprices sources` and docs/sources.md."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from spiders.parsing.reviewed_csv import reviewed_rows

TERMS_CSV = Path(__file__).with_name("terms.csv")
COLUMNS = ["source", "automated_access", "index_use", "page", "checked", "note"]
VERDICTS = ("allowed", "forbidden", "not found")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# A verdict in the few characters a column of `gpuprices sources` has
SHORT = {"allowed": "yes", "forbidden": "NO", "not found": "?"}


class TermsTableError(ValueError):
    """A row of terms.csv is not what the table promises; the message names it."""


@dataclass(frozen=True)
class Terms:
    source: str
    automated_access: str      # allowed | forbidden | not found
    index_use: str             # allowed | forbidden | not found
    page: str                  # the terms page read ('' when none was)
    checked: str               # the day it was read, YYYY-MM-DD ('' when none was)
    note: str

    @property
    def status(self) -> str:
        """The short form `gpuprices sources` shows: 'access NO, index NO'."""
        return f"access {SHORT[self.automated_access]}, index {SHORT[self.index_use]}"


def parse_terms(rows: Iterable[dict]) -> dict[str, Terms]:
    """{source: Terms}, checked: known verdicts; a verdict other than "not found" cites its page
    and date; one row per source."""
    table: dict[str, Terms] = {}
    for n, row in enumerate(rows, start=2):
        terms = Terms(*((row.get(c) or "").strip() for c in COLUMNS))
        where = f"terms.csv line {n} ({terms.source!r})"
        if not terms.source or terms.source in table:
            raise TermsTableError(f"{where}: a source named once")
        for verdict in (terms.automated_access, terms.index_use):
            if verdict not in VERDICTS:
                raise TermsTableError(f"{where}: {verdict!r} is not one of {', '.join(VERDICTS)}")
        read = bool(terms.page) or bool(terms.checked)
        if read and not (terms.page.startswith("https://") and DATE_RE.match(terms.checked)):
            raise TermsTableError(f"{where}: a page read has its https address and its date")
        if not read and {terms.automated_access, terms.index_use} != {"not found"}:
            raise TermsTableError(f"{where}: a verdict cites the page and the day it was read")
        if not terms.note:
            raise TermsTableError(f"{where}: a note says what was read, or that nothing was")
        table[terms.source] = terms
    return table


@cache
def terms_table() -> dict[str, Terms]:
    return parse_terms(reviewed_rows(TERMS_CSV, COLUMNS, TermsTableError))


def terms_of(source: str) -> Terms | None:
    """The source's (or archive vendor key's) terms; None for one the table has no row for."""
    return terms_table().get(source)


def live_access_refusal(source: str) -> str | None:
    """Why a live crawl of `source` is not made unless the user opts in, in one line (its
    vendor's terms forbid automated access); None when they do not."""
    terms = terms_of(source)
    if terms is None or terms.automated_access != "forbidden":
        return None
    return (f"{source}: its vendor's terms forbid automated access ({terms.page}, read "
            f"{terms.checked}); name it to crawl it live anyway")


def index_excluded_sources() -> frozenset[str]:
    """The sources and archive vendor keys whose vendor's terms forbid using its prices in an
    index: the published index leaves their offers out."""
    return frozenset(s for s, t in terms_table().items() if t.index_use == "forbidden")
