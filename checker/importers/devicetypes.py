"""`checker import devicetypes PATH -o FILE`: device-type files in the format of the NetBox
community device-type library (github.com/netbox-community/devicetype-library) as a
`ServerModels` catalog.

Read: manufacturer, model, slug (the catalog name), part_number, u_height, weight and
weight_unit, power-ports (their count, and the sums of maximum_draw and allocated_draw
as max and typical draw). Everything else in the files (interfaces, bays, airflow) has no
place in the catalog and is left out. A file that cannot be mapped is an error at its
file, line and column, and nothing is written.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import checker.importers.emit as emit
from checker.core.errors import UserError, at
from checker.importers.output import marker, write_one
from checker.load.build import is_yaml
from checker.source.parse import Src
from checker.source.reader import display_path, read_file

SOURCE = "devicetypes"
_KG = {"kg": 1.0, "g": 0.001, "lb": 0.45359237, "oz": 0.028349523125}


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise UserError(f"{path}: no such file or folder")
    found = sorted(p for p in path.rglob("*") if p.is_file() and is_yaml(p.name)
                   and not any(part.startswith(".") for part in p.relative_to(path).parts))
    if not found:
        raise UserError(f"{path}: no .yaml or .yml file below it")
    return found


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(value, 3)


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


class _File:
    def __init__(self, shown: str, src: Src, problems: list[str]) -> None:
        self.shown, self.src, self.problems = shown, src, problems

    def fail(self, path: tuple[str | int, ...], message: str, key: bool = True) -> None:
        line, column = self.src.locate(list(path), key=key)
        self.problems.append(at(self.shown, line, column, message))


def _entry(doc: dict[str, Any], f: _File, where: str) -> dict[str, Any] | None:
    before = len(f.problems)
    for field in ("manufacturer", "model", "slug"):
        if not isinstance(doc.get(field), str) or not doc[field].strip():
            f.fail((), f"no `{field}`: a device type names its manufacturer, model and slug", key=False)
    if len(f.problems) > before:
        return None
    slug = doc["slug"]
    if any(c.isspace() or c == "/" for c in slug):
        f.fail(("slug",), f"slug '{slug}' has a space or '/'; the catalog name cannot", key=False)
    entry: dict[str, Any] = {"name": slug, "description": f"{doc['manufacturer']} {doc['model']}",
                             "vendor": doc["manufacturer"]}
    part = doc.get("part_number")
    entry["source"] = f"NetBox device-type library: {where}" + (f" (part {part})" if part else "")
    height = doc.get("u_height", 1)  # the library's default
    if not isinstance(height, (int, float)) or isinstance(height, bool) or height < 0:
        f.fail(("u_height",), f"u_height {height!r} is not a number of U", key=False)
    elif height and not float(height).is_integer():
        f.fail(("u_height",), f"u_height {height}: checker counts whole U (round it, or leave it out)",
               key=False)
    elif height:
        entry["u_height"] = int(height)
    if "weight" in doc:
        unit = doc.get("weight_unit", "kg")
        if not _positive(doc["weight"]):
            f.fail(("weight",), f"weight {doc['weight']!r} is not a positive number", key=False)
        elif unit not in _KG:
            f.fail(("weight_unit",), f"weight_unit {unit!r} is none of {', '.join(_KG)}", key=False)
        else:
            entry["weight_kg"] = _number(round(float(doc["weight"]) * _KG[unit], 2))
    ports = doc.get("power-ports", [])
    if not isinstance(ports, list) or not all(isinstance(p, dict) for p in ports):
        f.fail(("power-ports",), "power-ports is a list of ports (name, type, maximum_draw)", key=False)
        ports = []
    for i, port in enumerate(ports):
        for field in ("maximum_draw", "allocated_draw"):
            if port.get(field) is not None and not _positive(port[field]):
                f.fail(("power-ports", i, field),
                       f"{field} {port[field]!r} is not a positive number of watts", key=False)
    if len(f.problems) > before:
        return None
    if ports and all(p.get("maximum_draw") for p in ports):
        draw: dict[str, int | float] = {"max": _number(sum(p["maximum_draw"] for p in ports))}
        if all(p.get("allocated_draw") for p in ports):
            typical = _number(sum(p["allocated_draw"] for p in ports))
            if typical > draw["max"]:
                f.fail(("power-ports",), f"allocated_draw adds up to {typical} W, over the {draw['max']} W"
                       " maximum_draw", key=False)
                return None
            draw["typical"] = typical
        entry["power_w"] = draw
    if ports:
        entry["psu"] = {"count": len(ports)}
    return entry


def convert(path: Path) -> tuple[str, int]:
    """The catalog file's text and how many models it holds; every problem at once."""
    problems: list[str] = []
    entries: dict[str, tuple[Any, str]] = {}
    for file in _files(path):
        yf = read_file(file, "device type")
        where = file.relative_to(path).as_posix() if path.is_dir() else file.name
        docs = [d for d in yf.documents if d.value is not None]
        if not docs:
            problems.append(f"{yf.shown}: empty: no device type in it")
            continue
        for doc in docs:
            f = _File(yf.shown, doc.src, problems)
            if not isinstance(doc.value, dict):
                f.fail((), "not a device type: a device type is a mapping (manufacturer, model, slug, ...)",
                       key=False)
                continue
            entry = _entry(doc.value, f, where)
            if entry is None:
                continue
            if entry["name"] in entries:
                f.fail(("slug",), f"slug '{entry['name']}' is also in {entries[entry['name']][1]}", key=False)
                continue
            notes = () if "power_w" in entry else (
                "TODO no power ports with maximum_draw in its file: servers of this model give power_w",)
            entries[entry["name"]] = (emit.Commented(entry, notes) if notes else entry, yf.shown)
    if problems:
        raise UserError(problems)
    header = [f"{marker(SOURCE)} from {display_path(path)}.",
              "Re-run the import to update it; edits here are overwritten. Keep your own files beside it."]
    text = emit.document({"kind": "ServerModels", "servers": [entries[n][0] for n in sorted(entries)]})
    return emit.stream(header, [text]), len(entries)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", type=Path, metavar="PATH", help="a device-type file, or a folder of them")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="FILE",
                   help="the ServerModels file to write (beside the inventories)")


def run(args: argparse.Namespace) -> tuple[int, list[str]]:
    text, count = convert(args.path)
    written = write_one(args.output, text, SOURCE)
    return 0, [f"{'wrote' if written else 'unchanged'} {args.output} ({count} server models)"]
