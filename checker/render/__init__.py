"""Formatter registry: one name -> one function that only reads an AuditResult."""

from __future__ import annotations

from collections.abc import Callable

from checker.audit import AuditResult
from checker.suggest import lookup

Formatter = Callable[[AuditResult], str]
FORMATTERS: dict[str, Formatter] = {}


def formatter(name: str) -> Callable[[Formatter], Formatter]:
    def register(func: Formatter) -> Formatter:
        FORMATTERS[name] = func
        return func

    return register


def get_formatter(name: str) -> Formatter:
    _load_builtin()
    return lookup(FORMATTERS, name, "format")


def _load_builtin() -> None:
    # Imported for their registration side effect, once, on first use.
    from checker.render import json_format, text  # noqa: F401
