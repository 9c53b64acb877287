""""Did you mean" for the names a user types: commands, options, variants, passes, kernels."""
from __future__ import annotations

import difflib
from typing import Iterable


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The choice closest to ``word`` (a typo of it), or None when none is close."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return close[0] if close else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the choice closest to ``word``, or '' when none is close."""
    hit = closest(word, choices)
    return f" (did you mean {hit!r}?)" if hit else ""
