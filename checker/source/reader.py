"""The one reader of YAML files: inventories, `checker.yaml`, knowledge tables
and rule files are read here (by the fast path where it provably gives the
event parser's values, else by the event parser), and validation errors are
described and placed here, each at the file, line and column it is about.

A located problem is spelled `file:line:column: message` (core.errors.at):
inventories report them as schema findings and go on; a config file, a
knowledge table or a rule file that fails is a UserError (exit 2).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import types
import typing
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError
from yaml.nodes import ScalarNode

from checker.core.builtin import SCHEMA_INVALID, SCHEMA_MISSING_FIELD, SCHEMA_UNKNOWN_FIELD
from checker.core.errors import MAX_LISTED, UserError, at, clip, shown_value
from checker.core.suggest import did_you_mean
from checker.source import fastpath
from checker.source.parse import Document, Src, YamlProblem, decode, parse


# ---------------------------------------------------------------- files
def read(path: Path, data: bytes | None = None, trees: fastpath.Trees | None = None) -> list[Document]:
    """A file's documents (`data`: its bytes, when already read): by the fast
    path when it can show it gives exactly what `parse` gives, else by `parse`.
    `trees`: the run's holder of rapidyaml trees for positions (fastpath.Trees),
    one for all the files a run reads; default: one for this file alone."""
    return parse_text(decode(path.read_bytes() if data is None else data), trees)


def parse_text(text: str, trees: fastpath.Trees | None = None) -> list[Document]:
    fast = fastpath.load(text, trees)
    return fast if fast is not None else parse(text)


def display_path(path: Path) -> str:
    """Paths are shown relative to the current directory (the JSON contract), when below it."""
    rel = os.path.relpath(path)
    return path.as_posix() if rel.startswith("..") else Path(rel).as_posix()


def not_a_file(mode: int) -> str:
    kinds = (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    what = next((name for test, name in kinds if test(mode)), "not a regular file")
    return f"is {what}, not a file: not read"


@dataclass(frozen=True)
class YamlFile:
    shown: str  # the path as messages show it
    text: str
    documents: list[Document]


def read_file(path: Path, what: str = "", data: bytes | None = None) -> YamlFile:
    """A file the user named (a config file, a knowledge table, a rule file):
    unreadable or malformed, it is a located UserError (`what` names it in the
    message of a file that cannot be read). `data`: its bytes, if read already."""
    shown = display_path(path)
    try:
        text = decode(path.read_bytes() if data is None else data)
        return YamlFile(shown, text, parse_text(text))
    except YamlProblem as exc:
        raise UserError(at(shown, exc.line, exc.column, exc.message)) from None
    except OSError as exc:
        raise UserError(f"{shown}: cannot read{' ' if what else ''}{what}: {exc.strerror}") from None


# ---------------------------------------------------------------- validation errors
def inner_models(annotation: Any) -> Iterator[type[BaseModel]]:
    """The models an annotation may hold (through Optional, list, dict, Annotated)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        yield from inner_models(typing.get_args(annotation)[0])
    elif origin in (list, dict, typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            yield from inner_models(arg)



def _fields_at(model: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """Valid field names of the model that sits at `loc` (for suggestions)."""
    current: type[BaseModel] | None = model
    for step in loc:
        if current is None:
            return []
        if isinstance(step, int):
            continue
        info = current.model_fields.get(step)
        current = next(inner_models(info.annotation), None) if info else None
    return list(current.model_fields) if current else []


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


_RESOLVER: Any = yaml.resolver.Resolver()
_EXPONENT = re.compile(r"^([-+]?[0-9_]*)(\.[0-9_]*)?[eE]([-+]?)([0-9]+)$")


def _number_hint(text: str) -> str:
    """Why a number reads as text. Unquoted, YAML 1.1 takes `2.3e2` and `1e5` for
    strings (an exponent needs a dot and a sign), so "quotes" would mislead."""
    if _RESOLVER.resolve(ScalarNode, text, (True, False)) != "tag:yaml.org,2002:str":
        return ": write the number without quotes"  # it reads as a number when unquoted
    if not math.isfinite(float(text)):
        return ": YAML reads it as text, and a quantity must be a finite number"
    match = _EXPONENT.match(text.strip())
    if match is None:
        return ": YAML reads it as text; write it as a plain number"
    whole, fraction, sign, digits = match.groups()
    spelled = f"{whole or '0'}{fraction if fraction and len(fraction) > 1 else '.0'}e{sign or '+'}{digits}"
    return f": YAML 1.1 reads this exponent form as text; write {spelled} or the plain number"


# A field that takes one of several forms (a count or a count by phase, say)
# tags each form with a name of this prefix; the tag is in pydantic's error
# location, and no key or field name is spelled so ('/' is not in a name).
UNION_TAG = "form/"


def error_path(error: Any) -> tuple[list[str | int], bool]:
    """Where an error is, as keys and indices of the document, and whether it
    is a dict key that is wrong (pydantic's "[key]" step)."""
    loc = [s for s in error["loc"] if isinstance(s, (str, int))]
    loc = [s for s in loc if not (isinstance(s, str) and s.startswith(UNION_TAG))]
    if loc and loc[-1] == "[key]":
        return loc[:-1], True
    return loc, False


def describe_error(error: Any, model: type[BaseModel]) -> tuple[str, str, bool]:
    """(rule, message, point-at-key) for one pydantic error."""
    loc, at_key = error_path(error)
    where = clip(".".join(str(s) for s in loc))
    kind = error["type"]
    if kind == "extra_forbidden":
        name = str(loc[-1])
        hint = did_you_mean(name, _fields_at(model, loc[:-1]))
        return SCHEMA_UNKNOWN_FIELD, f"unknown field '{where}'{hint}", True
    if kind == "missing":
        return SCHEMA_MISSING_FIELD, f"missing required field '{where}'", True
    got = error.get("input")
    shown = "" if isinstance(got, (dict, list)) else f" (got {shown_value(got)})"
    message = str(error["msg"]).removeprefix("Value error, ")
    if kind in ("float_type", "int_type") and isinstance(got, str) and _is_number(got):
        whole = kind == "int_type" and not float(got).is_integer()
        shown += ": a whole number is needed" if whole else _number_hint(got)
    return SCHEMA_INVALID, f"{where or 'document'}: {message}{shown}", at_key


def first_errors(exc: ValidationError, count: int) -> list[Any]:
    """The first `count` errors of `exc`, as `exc.errors()` gives them, without
    building every one: pydantic has no way to stop at a number of errors
    (https://github.com/pydantic/pydantic/issues/8242), and a dict per error
    (~1 KB) for a million of them is a gigabyte. Past `count`, they are read one
    by one from pydantic's JSON (~100 bytes each, the inputs as JSON gives them)."""
    if count <= 0:
        return []
    if exc.error_count() <= count:
        return exc.errors()
    text = exc.json(include_url=False)
    decode = json.JSONDecoder().raw_decode
    errors: list[Any] = []
    pos = text.index("[") + 1
    while len(errors) < count:
        while text[pos] in " \n,":
            pos += 1
        error, pos = decode(text, pos)
        error["loc"] = tuple(error["loc"])
        errors.append(error)
    return errors


def problems(
    exc: ValidationError,
    model: type[BaseModel],
    src: Src,
    prefix: Sequence[str | int] = (),
    limit: int = MAX_LISTED,
) -> Iterator[tuple[str, tuple[int, int], str]]:
    """Each of the first `limit` errors of a validation as (check id, (line,
    column), message): at the value, or at the key of an unknown or missing
    field. `exc` is of the value at `prefix` in a document of `model`, whose
    source map is `src`."""
    for error in first_errors(exc, limit):
        if prefix:
            error = {**error, "loc": (*prefix, *error["loc"])}
        rule, message, key = describe_error(error, model)
        yield rule, src.locate(error_path(error)[0], key=key), message


# A long list is validated PIECE items at a time, and a piece that fails item
# by item: pydantic collects every error of a call before it returns, and a
# million bad items in one call held gigabytes. A piece's errors stay in
# pydantic's own form (~270 bytes each) until it is redone item by item.
PIECE = 64

Report = Callable[[ValidationError, tuple[str | int, ...]], None]


def _long_lists(model: type[BaseModel], value: dict[str, Any]) -> dict[str, Any]:
    """The item type of each field of `model` that holds a plain list (`racks:
    list[Rack]`) of over PIECE items in `value`."""
    long = {}
    for name, info in model.model_fields.items():
        items = value.get(name)
        # Not a list with a length constraint: that is the whole list's.
        plain = typing.get_origin(info.annotation) is list and not info.metadata
        if plain and items.__class__ is list and len(items) > PIECE:
            (long[name],) = typing.get_args(info.annotation)
    return long


M = TypeVar("M", bound=BaseModel)


def validate_pieces(model: type[M], value: Any, report: Report, context: Any = None) -> M | None:
    """`model.model_validate(value, context=context)`, its long lists (over PIECE
    items) a piece at a time first; None if anything failed, each failure sent
    to `report` with where it is: `()` for the document, `(field, index)` for an item."""
    long = _long_lists(model, value) if isinstance(value, dict) else {}
    whole = True
    if long:  # each long list's items first, then the document holding them validated
        value = dict(value)
        for name, item in long.items():
            many: TypeAdapter[list[Any]] = TypeAdapter(list[item])  # type: ignore[valid-type]  # ~0.5 ms
            one: TypeAdapter[Any] = TypeAdapter(item)
            items, value[name] = value[name], []
            for start in range(0, len(items), PIECE):
                piece = items[start : start + PIECE]
                try:
                    value[name].extend(many.validate_python(piece, context=context))
                    continue
                except ValidationError:
                    whole = False
                for index, element in enumerate(piece, start):
                    try:
                        value[name].append(one.validate_python(element, context=context))
                    except ValidationError as exc:
                        report(exc, (name, index))
    try:
        validated = model.model_validate(value, context=context)
    except ValidationError as exc:
        report(exc, ())
        return None
    return validated if whole else None


def validate_lines(model: type[M], doc: Document, shown: str) -> tuple[M | None, list[str]]:
    """A document of a file the user named as `model`, or None and its errors as
    located lines: at most MAX_LISTED, then how many more there were."""
    lines: list[str] = []
    more = 0

    def report(exc: ValidationError, prefix: tuple[str | int, ...]) -> None:
        nonlocal more
        room = MAX_LISTED - len(lines)
        found = problems(exc, model, doc.src, prefix, room)
        lines.extend(at(shown, *where, message) for _, where, message in found)
        more += max(exc.error_count() - room, 0)

    validated = validate_pieces(model, doc.value, report)
    if more:
        lines.append(f"{shown}: {more:,} more problems not listed (the first {MAX_LISTED:,} are)")
    return validated, lines


def validate(model: type[M], doc: Document, shown: str) -> M:
    """A document of a file the user named as `model`; every error a located line (UserError)."""
    validated, lines = validate_lines(model, doc, shown)
    if validated is None:
        raise UserError(lines)
    return validated
