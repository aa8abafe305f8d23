"""Formatter registry: one name -> one function that only reads an AuditResult."""

from __future__ import annotations

import difflib
from collections.abc import Callable

from checker.audit import AuditResult
from checker.errors import UserError

Formatter = Callable[[AuditResult], str]
FORMATTERS: dict[str, Formatter] = {}


def formatter(name: str) -> Callable[[Formatter], Formatter]:
    def register(func: Formatter) -> Formatter:
        FORMATTERS[name] = func
        return func

    return register


def get_formatter(name: str) -> Formatter:
    _load_builtin()
    try:
        return FORMATTERS[name]
    except KeyError:
        close = difflib.get_close_matches(name, FORMATTERS, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise UserError(f"unknown format '{name}'{hint}; known: {', '.join(sorted(FORMATTERS))}") from None


def _load_builtin() -> None:
    # Imported for their registration side effect, once, on first use.
    from checker.render import json_format, text  # noqa: F401
