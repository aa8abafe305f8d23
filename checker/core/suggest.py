"""Did-you-mean hints and registry lookups: one spelling for every "unknown X"."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import TypeVar

from checker.core.errors import MAX_SHOWN, UserError, clip

T = TypeVar("T")


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """` (did you mean 'x'?)` for the closest choice, or nothing (nothing for a
    word longer than a message quotes: no name is that long, and difflib
    indexes every character of it)."""
    if len(word) > MAX_SHOWN:
        return ""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def lookup(registry: Mapping[str, T], name: str, what: str) -> T:
    """The registered entry, or a UserError naming the closest and all known names."""
    try:
        return registry[name]
    except KeyError:
        known = ", ".join(registry)
        shown = clip(name)  # a 50 MB argument is not printed back whole
        raise UserError(f"unknown {what} '{shown}'{did_you_mean(name, registry)}; known: {known}") from None
