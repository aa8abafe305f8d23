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
