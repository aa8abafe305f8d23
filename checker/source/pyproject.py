"""`[tool.checker]` in a `pyproject.toml`, read as one config document with positions.

The values come from the standard TOML parser (tomllib, Python 3.11+; before
that tomli, the same parser). It gives no positions, so the table's lines are
scanned for its keys: every key is placed at its own line and column (a table
header `[tool.checker.severity]` places `severity`), and a value at the start
of its text, so an error says `pyproject.toml:LINE:COL` as for checker.yaml.
A value spread over lines (an array) is placed where it starts.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.core.errors import UserError, at
from checker.source.parse import Document, Src

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover (3.10)
    import tomli as tomllib

TABLE = ("tool", "checker")

_BARE = r"[A-Za-z0-9_-]+"
_QUOTED = r'"(?:[^"\\]|\\.)*"|' + r"'[^']*'"
_PART = rf"(?:{_BARE}|{_QUOTED})"
_DOTTED = rf"{_PART}(?:\s*\.\s*{_PART})*"
_HEADER = re.compile(rf"^\s*\[\s*({_DOTTED})\s*\]")  # `[a.b]`; `[[a.b]]` does not match
_KEY = re.compile(rf"^(\s*)({_DOTTED})\s*=\s*")
_TOML_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")


def _parts(dotted: str) -> tuple[str, ...]:
    out = []
    for match in re.finditer(_PART, dotted):
        text = match.group(0)
        # A quoted key is taken as written between its quotes (an escape in a key
        # of checker's table would be a key checker does not know anyway).
        out.append(text[1:-1] if text[0] in "\"'" else text)
    return tuple(out)


@dataclass
class _Node:
    line: int
    column: int
    children: dict[str, _Node] = field(default_factory=dict)
    keys: dict[str, tuple[int, int]] = field(default_factory=dict)

    def at(self, path: tuple[str, ...], key: tuple[int, int], value: tuple[int, int]) -> None:
        node = self
        for step in path[:-1]:
            node = node.children.setdefault(step, _Node(*key))
        node.keys.setdefault(path[-1], key)
        node.children.setdefault(path[-1], _Node(*value))

    def src(self) -> Src:
        children = {name: child.src() for name, child in self.children.items()}
        return Src(self.line, self.column, children, dict(self.keys))


def _positions(lines: list[str]) -> _Node:
    """Where each key below [tool.checker] is set."""
    root = _Node(1, 1)
    table: tuple[str, ...] = ()
    for number, line in enumerate(lines, start=1):
        header = _HEADER.match(line)
        if header:
            table = _parts(header.group(1))
            if table[: len(TABLE)] == TABLE:
                *_, last = re.finditer(_PART, header.group(1))  # `severity` of [tool.checker.severity]
                column = header.start(1) + last.start() + 1
                if len(table) == len(TABLE):
                    root.line, root.column = number, 1
                else:
                    root.at(table[len(TABLE) :], (number, column), (number, column))
            continue
        key = _KEY.match(line)
        if not key:
            continue
        path = table + _parts(key.group(2))
        if path[: len(TABLE)] == TABLE and len(path) > len(TABLE):
            where = (number, len(key.group(1)) + 1)
            root.at(path[len(TABLE) :], where, (number, key.end() + 1))
    return root


def tool_table(path: Path, shown: str) -> Document | None:
    """The `[tool.checker]` table of a pyproject.toml, or None when it has none."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{shown}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise UserError(f"{shown}: cannot read: {exc.strerror}") from None
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_POSITION.search(str(exc))
        line, column = (int(found.group(1)), int(found.group(2))) if found else (1, 1)
        message = _TOML_POSITION.sub("", str(exc)).strip()
        raise UserError(at(shown, line, column, f"invalid TOML: {message}")) from None
    tool = data.get("tool")
    value = tool.get("checker") if isinstance(tool, dict) else None
    if value is None:
        return None
    src = _positions(text.splitlines()).src()
    if not isinstance(value, dict):
        raise UserError(at(shown, src.line, src.column, "tool.checker must be a table of settings"))
    return Document(value, src)
