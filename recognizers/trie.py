"""One regular expression for many literal forms, as a prefix tree: the quantity recognizer's
unit symbols and words and the date recognizer's words share it."""

from __future__ import annotations

import re
from collections.abc import Iterable


def trie(forms: Iterable[str]) -> str:
    """An alternation of literal forms as a prefix tree, longest match first: Python's re tries
    the branches of a flat alternation one by one, of a tree only where the letters lead
    ("jan(?:uary)?")."""
    tree: dict = {}
    for form in forms:
        node = tree
        for ch in form:
            node = node.setdefault(ch, {})
        node[""] = {}

    def walk(node: dict) -> str:
        branches = [re.escape(ch) + walk(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body  # it may end here, after longer forms

    return walk(tree)
