"""Which vendor a name is: the reviewed table vendor_aliases.csv next to this module, one row per
spelling a source, an archive or an aggregator writes ("DataCrunch.io", "Datacrunch", "Verda"),
each with the vendor's key, and the evidence that the spellings are one company. A key is the
source name of our spider of that vendor when we crawl it ("gcp", "alibaba_cn"); its display
name and kind are then the spider's (blank in the table: the registry is their home), otherwise
the table's. Spellings match whatever their case, spaces and punctuation ("vast.ai" = "Vast AI").
Pure: reading the table is the only I/O."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from spiders.parsing.reviewed_csv import reviewed_rows

ALIASES_CSV = Path(__file__).with_name("vendor_aliases.csv")
COLUMNS = ["alias", "vendor_key", "vendor", "vendor_kind", "evidence"]
VENDOR_KINDS = frozenset({"hyperscaler", "gpu_cloud", "marketplace", "idc"})
KEY_RE = re.compile(r"^[a-z0-9_]+$")


class AliasTableError(ValueError):
    """The alias table contradicts itself; the message names the rows."""


@dataclass(frozen=True)
class VendorAlias:
    alias: str
    vendor_key: str
    vendor: str          # '' for a vendor we crawl: its spider's name
    vendor_kind: str     # '' likewise
    evidence: str


def alias_form(name: str) -> str:
    """The form spellings are matched in: 'Google Cloud Platform (GCP)' -> 'googlecloudplatformgcp',
    '阿里云' stays '阿里云' (letters of any script and digits, case-folded)."""
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", name).casefold())


def parse_aliases(rows: Iterable[dict]) -> dict[str, VendorAlias]:
    """{alias form: row}, checked: every row names a key, a known kind (or none) and evidence; no
    spelling appears twice (so none maps to two keys); a key's rows agree on its name and kind."""
    table: dict[str, VendorAlias] = {}
    named: dict[str, tuple[str, str, str]] = {}       # key -> (vendor, kind, alias that said so)
    for n, row in enumerate(rows, start=2):
        alias = VendorAlias(*((row.get(c) or "").strip() for c in COLUMNS))
        where = f"vendor_aliases.csv line {n} ({alias.alias!r})"
        form = alias_form(alias.alias)
        if not form:
            raise AliasTableError(f"{where}: no letter or digit to match")
        if not KEY_RE.fullmatch(alias.vendor_key):
            raise AliasTableError(f"{where}: key {alias.vendor_key!r} is not lower-case a-z0-9_")
        if not alias.evidence:
            raise AliasTableError(f"{where}: no evidence that it is {alias.vendor_key}")
        if alias.vendor_kind and alias.vendor_kind not in VENDOR_KINDS:
            raise AliasTableError(f"{where}: kind {alias.vendor_kind!r} is not one of "
                                  f"{', '.join(sorted(VENDOR_KINDS))}")
        if form in table:
            raise AliasTableError(f"{where}: the same spelling as {table[form].alias!r} "
                                  f"(-> {table[form].vendor_key})")
        seen = named.setdefault(alias.vendor_key, (alias.vendor, alias.vendor_kind, alias.alias))
        if seen[:2] != (alias.vendor, alias.vendor_kind):
            raise AliasTableError(f"{where}: {alias.vendor_key} is named {seen[:2]} on the row "
                                  f"of {seen[2]!r}, {(alias.vendor, alias.vendor_kind)} here")
        table[form] = alias
    return table


@cache
def alias_table() -> dict[str, VendorAlias]:
    return parse_aliases(reviewed_rows(ALIASES_CSV, COLUMNS, AliasTableError))


def alias_of(name: str) -> VendorAlias | None:
    """The table's row for a spelling; None for a name it does not know."""
    return alias_table().get(alias_form(name))
