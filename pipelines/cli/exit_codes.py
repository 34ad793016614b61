"""Exit codes, the same for every command, for scripts; and NoData, the error that exits with 3.

  0  ok
  1  failed: the run failed (a step errored, a blocking check failed, or every source failed;
     the summary names the failed step first and says whether prices.db and the feeds were
     published: they are when only the report, the alerts or the advice failed); a command
     could not write its output (not writable, a read-only file system, no space left); `ui`:
     dg dev failed; the reading commands: the database could not be opened (another process
     holds it open for writing)
  2  usage error: an unknown option or value (an unknown card, region, vendor, kind ...; the
     message lists the known values), a number out of its stated range, an empty value, an
     output path that is a file where a directory belongs (or the reverse, or a device), or an
     existing file that is not gpuprices' own without --force
  3  no data: there is no published database yet (run `make run` first), or the query matched no
     rows (like grep's 1: scripts can tell "nothing" from "broken"; csv/json output is still
     well-formed: a header row, `[]`)
  4  partial: `run` landed some sources and others failed (a source skipped for a missing key,
     or an opt-in one the run did not name, is not a failure; nor is a source whose crawl a
     blocking rule held back: a warning, the summary says since when and why)
  5  locked: another `run` held the data directory (data/.run.lock) longer than this one would
     wait (GPUPRICES_LOCK_WAIT seconds, default 1800; 0: do not wait); nothing was done
"""

import click

EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE, EXIT_NO_DATA, EXIT_PARTIAL, EXIT_LOCKED = 0, 1, 2, 3, 4, 5


class NoData(click.ClickException):
    """Nothing to show: no published database yet, or no rows matched (exit code 3)."""

    exit_code = EXIT_NO_DATA


class RunLocked(click.ClickException):
    """Another run holds the data directory; this one did nothing (exit code 5)."""

    exit_code = EXIT_LOCKED
