"""Test-only recognizers for the engine tests, in a module of their own so that a Dask
worker (a fresh process with the tests' path) imports them by name when it unpickles them."""

from __future__ import annotations

import os
import re
from pathlib import Path

from kbx.recognizers.base import Mention, RecognizerInfo

MARK = "DIE-HERE"  # a unit holding this makes its worker's process exit, the first time


class Dying:
    """Finds "cedar"; the process that first meets a marked unit exits at once, as a
    worker killed by the kernel would, and leaves ``flag`` so the retry lives."""

    def __init__(self, flag: Path):
        self.info = RecognizerInfo(name="dying", version="1", types=("WORD",), filter=False)
        self.flag = str(flag)

    def recognize(self, texts):
        if any(MARK in t for t in texts) and not os.path.exists(self.flag):
            Path(self.flag).write_text(str(os.getpid()))
            os._exit(1)
        return [
            [Mention(m.start(), m.end(), "WORD", m.group()) for m in re.finditer("cedar", t)]
            for t in texts
        ]


class Where:
    """A model-like (slow) recognizer whose every mention says where it ran: on a Dask
    worker or here, so a test can tell which engine ran the pass."""

    info = RecognizerInfo(name="where", version="1", types=("PLACE",), filter=False, slow=True)

    def recognize(self, texts):
        try:
            from distributed import get_worker

            get_worker()
            place = "dask-worker"
        except (ImportError, ValueError):
            place = "here"
        return [[Mention(0, 1, "PLACE", t[0], place)] if t else [] for t in texts]


class Fussy:
    """Keeps to every layout rule (no code units, nothing wholly in inline code, nothing
    across table cells), so what it finds depends on each unit's kind, code spans and cell
    breaks as well as its text: a batch that lost one of them would find more."""

    info = RecognizerInfo(
        name="fussy",
        version="1",
        types=("WORD",),
        filter=False,
        code=False,
        inline_code=False,
        cross_cells=False,
    )

    def recognize(self, texts):
        return [
            [Mention(m.start(), m.end(), "WORD", m.group()) for m in re.finditer(WORDS, t)]
            for t in texts
        ]


WORDS = r"NASA|cedar\W+\w+"  # NASA in `make NASA`; cedar and what follows, cells apart


class Raising:
    """Finds "cedar"; raises on a batch that holds a marked unit, as a rule with a bug
    would: the engine must fail that unit alone."""

    info = RecognizerInfo(name="raising", version="1", types=("WORD",), filter=False)

    def recognize(self, texts):
        if any(MARK in t for t in texts):
            raise RuntimeError("a rule's bug")
        return [
            [Mention(m.start(), m.end(), "WORD", m.group()) for m in re.finditer("cedar", t)]
            for t in texts
        ]
