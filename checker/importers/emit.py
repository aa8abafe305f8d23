"""Inventory YAML as importers write it: block mappings and lists, short mappings of
scalars on one line, comments where a figure is missing, same bytes for the same data.

Written by hand, not by a YAML library, so the layout (and so the diffs of a re-import)
is ours: a string is plain only where YAML reads it back as that same string.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Plain scalars that YAML 1.1 (PyYAML) reads as something other than a string.
_SPECIAL = re.compile(
    r"(?i:y|n|yes|no|on|off|true|false|null|~|\.inf|-\.inf|\.nan)$"
    r"|[-+]?(\d[\d_]*)?(\.\d*)?([eE][-+]?\d+)?$"
    r"|[-+]?0[xob][\da-fA-F_]+$|\d+(:\d+)+(\.\d*)?$|\d{4}-\d\d?-\d\d?([Tt ].*)?$"
)
_PLAIN = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.\-+@()]*( [A-Za-z0-9_.\-+@()]+)*")
FLOW_MAX = 100  # a mapping of scalars goes on one line when it fits


@dataclass(frozen=True)
class Commented:
    """A value written with comment lines above it (in a list or a mapping)."""

    value: Any
    comments: tuple[str, ...]


def scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not a finite number: {value}")
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        text = repr(value)
        mantissa, e, exponent = text.partition("e")
        # YAML 1.1 reads 1e-09 as a string: its floats have a dot.
        return f"{mantissa}.0e{exponent}" if e and "." not in mantissa else text
    text = str(value)
    if _PLAIN.fullmatch(text) and not _SPECIAL.match(text):
        return text
    return json.dumps(text, ensure_ascii=False)


def _is_scalar(value: Any) -> bool:
    return not isinstance(value, (Mapping, list, tuple, Commented))


def _flow(value: Mapping[str, Any]) -> str | None:
    if not value or not all(_is_scalar(v) or _flowable(v) for v in value.values()):
        return None
    parts = []
    for k, v in value.items():
        inner = scalar(v) if _is_scalar(v) else _flow(v)
        parts.append(f"{scalar(k)}: {inner}")
    return "{" + ", ".join(parts) + "}"


def _flowable(value: Any) -> bool:
    return isinstance(value, Mapping) and all(_is_scalar(v) for v in value.values()) and bool(value)


def _comments(lines: list[str], comments: Sequence[str], indent: str) -> None:
    lines.extend(f"{indent}# {c}".rstrip() for c in comments)


def _block(lines: list[str], value: Any, indent: str) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            comments: Sequence[str] = ()
            if isinstance(v, Commented):
                v, comments = v.value, v.comments
            _comments(lines, comments, indent)
            _entry(lines, f"{indent}{scalar(k)}:", v, indent + "  ")
    else:
        for item in value:
            comments = ()
            if isinstance(item, Commented):
                item, comments = item.value, item.comments
            _comments(lines, comments, indent)
            _item(lines, indent, item)


def _entry(lines: list[str], head: str, value: Any, indent: str) -> None:
    if _is_scalar(value):
        lines.append(f"{head} {scalar(value)}")
        return
    flow = _flow(value) if isinstance(value, Mapping) else None
    if flow is not None and len(head) + 1 + len(flow) <= FLOW_MAX:
        lines.append(f"{head} {flow}")
    elif not value:
        lines.append(f"{head} {'{}' if isinstance(value, Mapping) else '[]'}")
    else:
        lines.append(head)
        _block(lines, value, indent)


def _item(lines: list[str], indent: str, item: Any) -> None:
    if _is_scalar(item):
        lines.append(f"{indent}- {scalar(item)}")
        return
    flow = _flow(item) if isinstance(item, Mapping) else None
    if flow is not None and len(indent) + 2 + len(flow) <= FLOW_MAX:
        lines.append(f"{indent}- {flow}")
        return
    if not isinstance(item, Mapping) or not item:
        raise ValueError("lists hold scalars or mappings")
    sub: list[str] = []
    _block(sub, item, indent + "  ")
    first = sub[0][len(indent) + 2 :]
    lines.append(f"{indent}- {first}")
    lines.extend(sub[1:])


def document(value: Mapping[str, Any], comments: Sequence[str] = ()) -> str:
    """One YAML document (without the `---` between documents)."""
    lines: list[str] = []
    _comments(lines, comments, "")
    _block(lines, value, "")
    return "\n".join(lines) + "\n"


def stream(header: Sequence[str], docs: Sequence[str]) -> str:
    """A file: header comment lines, then the documents separated by `---`."""
    head = "".join(f"# {line}".rstrip() + "\n" for line in header)
    return head + "---\n".join(docs)
