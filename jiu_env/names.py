"""Suggestions for misspelt names in error messages (``randm`` -> ``random``, ``dept`` -> ``depth``)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(name: object, choices: Iterable[str]) -> str:
    """``" (did you mean 'random'?)"`` for the closest of ``choices`` to ``name``, or ``""`` if none is close."""
    if not isinstance(name, str):
        return ""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


__all__ = ["did_you_mean"]
