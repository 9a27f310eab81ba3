"""The warm index: readers share one connection, a write runs alone, and the file is let go
after ``HOLD`` seconds so that other processes can write."""

from __future__ import annotations

import threading
import time

import duckdb

from kbx import api
from kbx.serve import live
from kbx.serve.live import LiveIndex


def test_a_write_waits_for_the_reads_in_flight_and_reads_wait_for_it(docs):
    idx = LiveIndex.of(api.Index.for_root(docs))
    order: list[str] = []
    reading, writing = threading.Event(), threading.Event()

    def reader() -> None:
        with idx.reader() as con:
            reading.set()
            time.sleep(0.3)
            order.append(f"read {con.execute('SELECT count(*) FROM units').fetchone()[0]}")

    def write() -> str:
        writing.set()
        time.sleep(0.3)
        order.append("write")
        return "done"

    first = threading.Thread(target=reader)
    first.start()
    reading.wait()
    writer = threading.Thread(target=lambda: order.append(idx.write(write)))
    writer.start()
    writing.wait()
    api.status(idx)  # a read that arrives during the write waits for it
    order.append("status")
    first.join()
    writer.join()
    idx.close()
    assert order.index("read 3") < order.index("write") < order.index("status")
    assert "done" in order  # what the write returned


def test_the_file_is_let_go_after_hold_seconds_even_inside_a_read(docs):
    idx = LiveIndex.of(api.Index.for_root(docs))
    with idx.reader() as con:
        time.sleep(live.HOLD + 0.3)  # it expires while held: kept until this read ends
        with idx.reader() as inner:  # and a read inside it does not wait for itself
            assert inner.execute("SELECT 1").fetchone() == (1,)
        assert con.execute("SELECT count(*) FROM units").fetchone()[0] == 3
    writer = duckdb.connect(str(idx.db))  # read-write: only possible once it is let go
    writer.close()
    with idx.reader() as con:  # and reading resumes on a fresh connection
        assert con.execute("SELECT count(*) FROM units").fetchone()[0] == 3
    idx.close()
