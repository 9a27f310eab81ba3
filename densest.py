"""The densest run of query matches in a text: the shortest run of matched spans holding as
many distinct query words as any ``size`` characters hold. A hit's focus (the lines it
cites first, search/passages.py) and its snippet's window (present.py) are both this run,
so what the text shows is what the citation names."""

from __future__ import annotations

from collections.abc import Hashable, Sequence


def tightest(
    spans: Sequence[tuple[int, int]], size: int, words: Sequence[Hashable] | None = None
) -> tuple[int, int]:
    """The first and last index of the shortest run of spans holding as many distinct query
    words as any ``size`` characters hold (``words[i]``: the word span ``i`` matches;
    without them each span is a word of its own); the first such run."""
    if not spans:
        return 0, 0
    word = words if words is not None else range(len(spans))
    most, j = 1, 0
    seen: dict[Hashable, int] = {}  # word -> its spans in the run [i, j)
    for i, (s, _) in enumerate(spans):  # the most distinct words in size characters
        j = max(j, i)
        while j < len(spans) and spans[j][1] <= s + size:
            seen[word[j]] = seen.get(word[j], 0) + 1
            j += 1
        most = max(most, len(seen))
        if j > i:
            _drop(seen, word[i])
    best: tuple[int, int] | None = None
    i = 0
    seen.clear()
    for j, (_, e) in enumerate(spans):  # the shortest run holding that many
        seen[word[j]] = seen.get(word[j], 0) + 1
        while seen[word[i]] > 1 or len(seen) > most:  # its first span is not needed
            _drop(seen, word[i])
            i += 1
        if len(seen) == most and (
            best is None or e - spans[i][0] < spans[best[1]][1] - spans[best[0]][0]
        ):
            best = (i, j)
    return best or (0, 0)


def _drop(seen: dict[Hashable, int], w: Hashable) -> None:
    seen[w] -= 1
    if not seen[w]:
        del seen[w]
