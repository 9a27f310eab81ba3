"""An offset map survives ``pack`` and ``unpack`` exactly, whatever its columns hold."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kbx.extract.textmap import pack, unpack

STEP = st.integers(min_value=0, max_value=10_000)


@given(st.lists(st.tuples(STEP, st.integers(0, 3), STEP, STEP, st.integers(0, 1)), max_size=300))
def test_pack_then_unpack_gives_the_map_back(steps):
    segments, cs, line, byte = [], 0, 1, 0
    for dc, dl, col, db, verbatim in steps:  # every column but col ascends, as in a map
        cs, line, byte = cs + dc, line + dl, byte + db
        segments.append((cs, line, col, byte, verbatim))
    assert unpack(pack(segments)) == segments
