"""The one way a write begins and ends in kbx: ``with transaction(con):``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress

import duckdb


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """``BEGIN`` … ``COMMIT``, rolled back on any error: every multi-statement write goes
    through here, so a failure leaves nothing half-done."""
    con.execute("BEGIN")
    try:
        yield con
    except BaseException:
        with suppress(duckdb.Error):  # the error may have ended the transaction already
            con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
