"""`checker import csv FILE ... --kind servers|racks|feeds -o FILE`: spreadsheet exports as
inventory YAML. Each kind has a documented column set (COLUMNS; `--template KIND`
prints its header row); every problem of every row is reported as `file:row:column`
(the row as the spreadsheet numbers it, the header being row 1) and nothing is written.

Racks and feeds become `Facility` documents (feeds in their racks; a rack named only by
feed rows gets the defaults), servers `Servers` documents, one a facility, all in one file.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

import checker.importers.emit as emit
from checker.core.errors import UserError, at
from checker.core.suggest import did_you_mean
from checker.importers.output import marker, write_one
from checker.load import models as m
from checker.source.reader import describe_error, display_path, error_path

SOURCE = "csv"


@dataclass(frozen=True)
class Column:
    name: str
    path: tuple[str, ...]  # where the value goes in the inventory
    doc: str
    required: bool = False
    text: bool = False  # read as it is, never as a number


def _c(name: str, path: str, doc: str, required: bool = False, text: bool = False) -> Column:
    return Column(name, tuple(path.split(".")), doc, required, text)


COLUMNS: dict[str, tuple[Column, ...]] = {
    "servers": (
        _c("facility", "facility", "facility name", True, True),
        _c("name", "name", "server name, unique", True, True),
        _c("rack", "rack", "rack name in the facility", True, True),
        _c("position", "position", "lowest U occupied (empty: not rack-mounted)"),
        _c("u_height", "u_height", "height in U"),
        _c("model", "model", "catalog model (its figures fill the empty cells)", text=True),
        _c("power_max_w", "power_w.max", "maximum wall draw, W"),
        _c("power_typical_w", "power_w.typical", "typical wall draw, W"),
        _c("psu_count", "psu.count", "number of PSUs"),
        _c("psu_rating_w", "psu.rating_w", "rating of one PSU, W"),
        _c("psu_redundant", "psu.redundant", "redundant PSUs"),
        _c("weight_kg", "weight_kg", "weight, kg"),
        _c("gpu_model", "gpu.model", "GPU model id", text=True),
        _c("gpu_count", "gpu.count", "GPUs"),
        _c("workload", "workload", "workload name", text=True),
    ),
    "racks": (
        _c("facility", "facility", "facility name", True, True),
        _c("name", "name", "rack name, unique in the facility", True, True),
        _c("u_height", "u_height", "height in U (default 42)"),
        _c("weight_kg", "weight_kg", "empty rack weight, kg"),
        _c("max_weight_kg", "max_weight_kg", "weight limit, kg"),
        _c("redundancy", "redundancy", "N | N+1 | 2N (default N)", text=True),
        _c("cooling", "cooling", "air | rear-door | liquid (default air)", text=True),
        _c("cooling_kw", "cooling_kw", "heat the position can reject, kW"),
    ),
    "feeds": (
        _c("facility", "facility", "facility name", True, True),
        _c("rack", "rack", "rack the feed supplies", True, True),
        _c("name", "name", "feed name, unique in the rack", True, True),
        _c("side", "side", "A | B (2N racks)", text=True),
        _c("voltage", "voltage", "volts (line to line on three-phase)", True),
        _c("amps", "amps", "breaker rating, A", True),
        _c("phase", "phase", "1 | 3 (default 1)"),
        _c("max_utilization", "max_utilization", "% of the rating usable (default 80)"),
        _c("power_factor", "power_factor", "default 1.0"),
    ),
}
_MODELS: dict[str, type[BaseModel]] = {"servers": m.Server, "racks": m.Rack, "feeds": m.Feed}
_INT = re.compile(r"[-+]?\d+")
_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def template(kind: str) -> str:
    return ",".join(c.name for c in COLUMNS[kind])


def _value(text: str, column: Column) -> Any:
    text = text.strip()
    if column.text:
        return text
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    return text  # validation says what is wrong with it


@dataclass
class _Row:
    shown: str
    line: int
    columns: dict[str, int]  # column name -> its 1-based number
    values: dict[str, Any]


def _read(path: Path, kind: str, problems: list[str]) -> list[_Row]:
    shown = display_path(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise UserError(f"{shown}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise UserError(
            f"{shown}: not UTF-8 text (byte {exc.start + 1}); export the sheet as CSV UTF-8"
        ) from None
    first = text.split("\n", 1)[0]
    delimiter = ";" if first.count(";") > first.count(",") else ","  # sheets in decimal-comma locales
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = next(reader, None)
    if not header:
        problems.append(f"{shown}: empty: no header row (see `checker import csv --template {kind}`)")
        return []
    known = {c.name: c for c in COLUMNS[kind]}
    columns: dict[str, int] = {}
    for i, name in enumerate(header, start=1):
        name = name.strip()
        if name not in known:
            hint = did_you_mean(name, list(known))
            problems.append(at(shown, 1, i, f"unknown column '{name}' for {kind}{hint}"))
        elif name in columns:
            problems.append(at(shown, 1, i, f"column '{name}' twice (first column {columns[name]})"))
        else:
            columns[name] = i
    missing = [c.name for c in COLUMNS[kind] if c.required and c.name not in columns]
    if missing:
        problems.append(at(shown, 1, 1, f"no column {', '.join(repr(n) for n in missing)} for {kind}"))
    rows = []
    for cells in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in cells):
            continue  # blank rows between blocks
        if len(cells) > len(header):
            problems.append(at(shown, line, len(header) + 1, f"{len(cells)} cells, {len(header)} columns"))
            continue
        values = {name: _value(cells[i - 1], known[name]) for name, i in columns.items()
                  if i <= len(cells) and cells[i - 1].strip()}
        rows.append(_Row(shown, line, columns, values))
    return rows


def _nest(row: _Row, kind: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for column in COLUMNS[kind]:
        if column.name in row.values and column.path[0] != "facility" and not (
            kind == "feeds" and column.path[0] == "rack"
        ):
            node = out
            for step in column.path[:-1]:
                node = node.setdefault(step, {})
            node[column.path[-1]] = row.values[column.name]
    return out


_NAME: TypeAdapter[str] = TypeAdapter(m.Name)


def _validated(row: _Row, kind: str, problems: list[str]) -> dict[str, Any] | None:
    empty = [c.name for c in COLUMNS[kind]
             if c.required and c.name in row.columns and c.name not in row.values]
    for name in empty:
        problems.append(at(row.shown, row.line, row.columns[name], f"no {name}: it is required"))
    if empty:
        return None
    for name in ("facility", "rack") if kind == "feeds" else ("facility",):
        try:
            _NAME.validate_python(row.values[name])
        except ValidationError as exc:
            message = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
            problems.append(at(row.shown, row.line, row.columns[name], f"{name}: {message}"))
            return None
    value = _nest(row, kind)
    if kind == "servers":
        value["rack"] = row.values.get("rack")
    model = _MODELS[kind]
    try:
        model.model_validate(value)
    except ValidationError as exc:
        by_path = {c.path: c.name for c in COLUMNS[kind]}
        for error in exc.errors():
            loc = tuple(str(s) for s in error_path(error)[0])
            field = next((by_path[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in by_path), None)
            number = row.columns.get(field or "", 1)
            _, message, _ = describe_error(error, model)
            if field is not None and "." in message.split(":")[0]:
                message = field + message[message.index(":"):]
            problems.append(at(row.shown, row.line, number, message))
        return None
    return value


def convert(files: Sequence[Path], kinds: Sequence[str]) -> tuple[str, dict[str, int]]:
    problems: list[str] = []
    racks: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    rack_rows: dict[tuple[str, str], str] = {}
    feeds: list[tuple[_Row, dict[str, Any]]] = []
    servers: dict[str, list[dict[str, Any]]] = defaultdict(list)
    where: dict[tuple[str, ...], str] = {}
    counts = {kind: 0 for kind in COLUMNS}
    for path, kind in zip(files, kinds, strict=True):
        for row in _read(path, kind, problems):
            value = _validated(row, kind, problems)
            if value is None:
                continue
            facility = str(row.values["facility"])
            key = (kind, facility, *(str(row.values[c]) for c in ("rack",) if kind == "feeds"), value["name"])
            if key in where:
                problems.append(at(row.shown, row.line, row.columns["name"],
                                   f"{kind[:-1]} '{value['name']}' twice (first at {where[key]})"))
                continue
            where[key] = f"{row.shown}:{row.line}"
            counts[kind] += 1
            if kind == "racks":
                racks[facility][value["name"]] = value
                rack_rows[(facility, value["name"])] = where[key]
            elif kind == "feeds":
                feeds.append((row, value))
            else:
                servers[facility].append(value)
    for row, feed in feeds:
        facility, rack = str(row.values["facility"]), str(row.values["rack"])
        if (facility, rack) not in rack_rows and any(k == "racks" for k in kinds):
            problems.append(at(row.shown, row.line, row.columns["rack"],
                               f"rack '{rack}' of facility {facility} is in no racks file row"))
            continue
        racks[facility].setdefault(rack, {"name": rack}).setdefault("feeds", []).append(feed)
    if problems:
        order = [display_path(f) for f in files]

        def place(problem: str) -> tuple[int, int, int]:
            shown, _, rest = problem.partition(":")
            line, _, rest = rest.partition(":")
            column = rest.partition(":")[0]
            number = [int(n) if n.isdigit() else 0 for n in (line, column)]
            return (order.index(shown) if shown in order else len(order), number[0], number[1])

        raise UserError(sorted(problems, key=place))
    docs = []
    for facility in sorted(racks):
        rack_list = []
        for rack_name in sorted(racks[facility]):
            entry = racks[facility][rack_name]
            if "feeds" in entry:
                entry["feeds"] = sorted(entry["feeds"], key=lambda f: f["name"])
            rack_list.append(entry)
        docs.append(emit.document({"kind": "Facility", "name": facility, "racks": rack_list}, [
            "TODO power.it_capacity_kw and cooling: not in the spreadsheet; add them here",
        ]))
    for facility in sorted(servers):
        docs.append(emit.document({"kind": "Servers", "facility": facility,
                                   "servers": sorted(servers[facility], key=lambda s: s["name"])}))
    names = ", ".join(display_path(f) for f in files)
    header = [f"{marker(SOURCE)} from {names}.",
              "Re-run the import to update it; edits here are overwritten. Keep your own files beside it."]
    return emit.stream(header, docs), counts


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="*", type=Path, metavar="FILE", help="CSV files (UTF-8; ',' or ';')")
    p.add_argument("--kind", action="append", choices=sorted(COLUMNS), default=[],
                   help="what FILE holds: one for every file, or one a file in order")
    p.add_argument("--template", choices=sorted(COLUMNS), metavar="KIND",
                   help="print the header row of KIND's columns and stop")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="the inventory file to write")


def run(args: argparse.Namespace) -> tuple[int, list[str]]:
    if args.template:
        return 0, [template(args.template)]
    if not args.files or args.output is None:
        raise UserError("checker import csv: give FILE ... --kind KIND -o FILE (or --template KIND)")
    kinds = args.kind * len(args.files) if len(args.kind) == 1 else args.kind
    if len(kinds) != len(args.files):
        raise UserError(f"checker import csv: {len(args.files)} files, {len(args.kind)} --kind: give one"
                        " for all or one for each")
    text, counts = convert(args.files, kinds)
    written = write_one(args.output, text, SOURCE)
    shown = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)
    return 0, [f"{'wrote' if written else 'unchanged'} {args.output} ({shown or 'nothing'})"]
