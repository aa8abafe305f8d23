"""Where the built-in rulebook and templates are, from any working directory."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # checker/


def data_dir(name: str) -> Path:
    """`rules` or `templates`: inside the wheel, else the source checkout's top level."""
    installed = _PACKAGE / "_data" / name
    if installed.is_dir():
        return installed
    return _PACKAGE.parent / name


def rules_dir() -> Path:
    return data_dir("rules")


def knowledge_dir() -> Path:
    return rules_dir() / "knowledge"


def templates_dir() -> Path:
    return data_dir("templates")
