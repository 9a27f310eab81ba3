"""A recognizer shipped by another package, found by kbx through its entry point."""

import re

from kbx.recognizers.base import Mention, RecognizerInfo

_ACRONYM = re.compile(r"\b[A-Z]{3,6}\b")


class AcronymRecognizer:
    """Words of three to six capitals, as a boost-only type."""

    info = RecognizerInfo(name="acronyms", version="1", types=("ACRONYM",), filter=False)

    def recognize(self, texts):
        return [
            [
                Mention(m.start(), m.end(), "ACRONYM", m.group(), m.group(), 0.5)
                for m in _ACRONYM.finditer(t)
            ]
            for t in texts
        ]
