"""The one user-error type: the top-level handler turns it into exit code 2."""

from __future__ import annotations

from collections.abc import Iterable


class UserError(Exception):
    """Bad input or usage. Each line is printed as is; no traceback."""

    def __init__(self, lines: str | Iterable[str]) -> None:
        self.lines: tuple[str, ...] = (lines,) if isinstance(lines, str) else tuple(lines)
        super().__init__("\n".join(self.lines))


def at(file: str, line: int, column: int, message: str) -> str:
    """The one way a located problem is spelled: `file:line:column: message`."""
    return f"{file}:{line}:{column}: {message}"


MAX_SHOWN = 120  # characters of an input value a message quotes
# Problems of one file (or of one command's input) listed; past them, the rest
# are counted in one line or finding: a generated file gone wrong can hold
# millions, each about 1 KB once described (issue 17).
MAX_LISTED = 1_000


def clip(text: str, limit: int = MAX_SHOWN) -> str:
    """`text`, or its start and how long it is: a message never prints a 50 MB name back."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


def shown_value(value: object, limit: int = MAX_SHOWN) -> str:
    """repr(value), clipped; a huge int (whose repr Python refuses) by its size."""
    try:
        return clip(repr(value), limit)
    except ValueError:
        return f"<a number of {value.bit_length() if isinstance(value, int) else '?'} bits>"
