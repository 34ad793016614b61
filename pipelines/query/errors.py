"""The read layer's errors. The CLI turns them into its exit codes and usage errors, the Python
API (pipelines/api.py) raises them as they are."""

from __future__ import annotations


class NoDataError(LookupError):
    """No published database yet, or one without the table asked for."""


class UnreadableDatabaseError(OSError):
    """The published database is there but DuckDB will not open it; the message says why and what
    to do (published.cannot_open)."""


class UnknownValueError(ValueError):
    """A card, region, vendor, kind, period or signal nobody knows; the message lists the known
    ones. `field` names what was asked (card, region, vendor, kind, period, sort, signal): the
    CLI names its option by it."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
