"""`--check`: what an import would write, compared with the inventory files there now.

Racks, feeds, servers and server models added, removed or changed are each one line,
`file:line:column: drift ENTITY: what differs`, at the entity in the file (an added
one at the list it would join), so CI can say "as-built differs from plan".
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checker.core.entity import entity_id
from checker.core.errors import UserError, at
from checker.source.parse import Document, Src, YamlProblem
from checker.source.reader import display_path, parse_text


@dataclass(frozen=True)
class _Entity:
    id: str
    value: Any
    where: tuple[int, int]  # its position in its file
    parent: tuple[int, int]  # the list it is in


def _entities(docs: list[Document]) -> dict[str, _Entity]:
    out: dict[str, _Entity] = {}
    for doc in docs:
        value, src = doc.value, doc.src
        if not isinstance(value, dict):
            continue
        kind = value.get("kind")
        if kind == "Facility":
            facility = str(value.get("name"))
            for i, rack in enumerate(value.get("racks") or []):
                rsrc = src.descend("racks", i)
                name = str(rack.get("name"))
                plain = {k: v for k, v in rack.items() if k != "feeds"}
                _add(out, entity_id("rack", (facility, name)), plain, rsrc, src.locate(["racks"]))
                for j, feed in enumerate(rack.get("feeds") or []):
                    fsrc = rsrc.descend("feeds", j)
                    parent = rsrc.locate(["feeds"]) if "feeds" in rack else rsrc.locate([])
                    _add(out, entity_id("feed", (facility, name, str(feed.get("name")))), feed, fsrc, parent)
        elif kind in ("Servers", "ServerModels"):
            for i, server in enumerate(value.get("servers") or []):
                # Server models have no entity id of their own: `server-model/NAME` here.
                entity = entity_id("server" if kind == "Servers" else "server-model", str(server.get("name")))
                _add(out, entity, server, src.descend("servers", i), src.locate(["servers"]))
    return out


def _add(out: dict[str, _Entity], entity: str, value: Any, src: Src, parent: tuple[int, int]) -> None:
    out[entity] = _Entity(entity, value, (src.line, src.column), parent)


def _changes(old: Any, new: Any, label: str, path: str = "") -> Iterator[str]:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in new:
                yield f"{where} {_shown(old[key])} in the inventory, absent in {label}"
            elif key not in old:
                yield f"{where} absent in the inventory, {_shown(new[key])} in {label}"
            else:
                yield from _changes(old[key], new[key], label, where)
    elif old != new:
        yield f"{path} {_shown(old)} in the inventory, {_shown(new)} in {label}"


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _read(path: Path) -> list[Document]:
    try:
        return parse_text(path.read_text(encoding="utf-8"))
    except YamlProblem as exc:
        raise UserError(at(display_path(path), exc.line, exc.column, exc.message)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{display_path(path)}: cannot read: {exc}") from None


def compare(target: Path, files: Mapping[str, str], source: str, label: str) -> list[str]:
    """One line per difference between `files` (name -> text, from `label`) and the files in `target`."""
    lines: list[str] = []
    for name in sorted(files):
        path = target / name
        shown = display_path(path)
        if not path.is_file():
            lines.append(f"{shown}: drift: not imported yet: `checker import {source}` would write it")
            continue
        now = _entities(_read(path))
        then = _entities(parse_text(files[name]))
        first = next(iter(now.values()), None)
        for entity in sorted(set(now) | set(then)):
            if entity not in now:
                kind = entity.split("/")[0]
                parent = next((e.parent for e in now.values() if e.id.split("/")[0] == kind),
                              first.parent if first else (1, 1))
                lines.append(at(shown, *parent, f"drift {entity}: in {label}, not in the inventory"))
            elif entity not in then:
                where = now[entity].where
                lines.append(at(shown, *where, f"drift {entity}: in the inventory, not in {label}"))
            else:
                for change in _changes(now[entity].value, then[entity].value, label):
                    lines.append(at(shown, *now[entity].where, f"drift {entity}: {change}"))
    return lines
