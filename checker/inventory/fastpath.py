"""A fast first parse that gives the event parser's exact values, or refuses.

Our event parser (checker.inventory.source) costs seconds on a 5 MB file, most
of it per-event Python work. rapidyaml (C++) parses the same text to its own
tree and writes it out as JSON in a fraction of that, and `json.loads` builds
the values in C. This module takes that route only when it can show the result
is exactly what the event parser builds; for anything else it refuses and the
event parser reads the file, staying the authority for every error message
and position (docs/architecture.md, "Source maps").

Why the values match, in short:
- Syntax the route does not reproduce is refused from a scan of the text:
  anchors, aliases, tags, directives, reserved indicators, block scalars,
  complex keys and merge keys at the start of a node, and anywhere a
  backslash, tab, carriage return or character YAML does not print.
- YAML 1.1 scalars (https://yaml.org/type/): rapidyaml's JSON keeps quoted
  scalars as strings and writes plain ones as numbers, true, false or null
  when YAML 1.2 would. A number is re-read from its text as PyYAML reads a
  plain scalar (so `1e5` stays the string YAML 1.1 says it is). A string that
  YAML 1.1 would read as something else when plain (`yes`, `2027-01-15`,
  `0x1F`, `~`) was written plain if it never follows a quote mark in the
  text, and is converted as PyYAML converts it; else it was quoted if
  rapidyaml writes that text, plain, as something else (`"12.2"`), or if it
  only ever follows a quote mark; else the file is refused.
- rapidyaml rewrites a few plain scalars in its JSON (`.5` as 0.5, `3.` as
  3.0, `inf`/`nan` spellings as ".inf"/".nan"); a number that may have been
  rewritten, and a string that rewriting produces refuse the file; so do the
  few texts rapidyaml reads and YAML 1.1 refuses that we know of: an empty
  key (`: 1`), a flow key with nothing after its colon (`[0:]`), a scalar
  that starts with `:`, `]` or `}` (`[:0]`, `- ]`), a comment inside a flow
  collection (any string holding " #" refuses the file).
- Duplicate keys, a scalar document and anything rapidyaml or the JSON
  reader raises refuse the file.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode

from checker.inventory.source import Document, LazySrc, Src, WrittenFloat, parse

try:
    import ryml
except ImportError:  # pragma: no cover - exercised by monkeypatching in the tests
    ryml = None
AVAILABLE = ryml is not None
RAPIDYAML_VERSION: str | None = getattr(ryml, "__version__", None)

_RESOLVER: Any = yaml.resolver.Resolver()
_CONSTRUCTOR = SafeConstructor()
_STR = "tag:yaml.org,2002:str"

# First characters of the plain scalars YAML 1.1 reads as something other than
# a string ('' for the empty scalar, null), straight from PyYAML's resolver table.
_SPECIAL_FIRST = frozenset(_RESOLVER.yaml_implicit_resolvers)
# Characters YAML 1.1 does not let a plain scalar start with (`:` only in a
# flow collection) but rapidyaml reads there (`- ]`, `[:0]`): such strings and
# keys refuse the file, also where they were quoted (they are rare).
_ODD_FIRST = frozenset(":]}")
_CHECK_FIRST = _SPECIAL_FIRST | _ODD_FIRST
# What follows each quote mark that could open a quoted scalar YAML 1.1 would type.
_QUOTED_START = re.compile(
    "[\"']([" + re.escape("".join(sorted(c for c in _SPECIAL_FIRST if c))) + "][^\\s\"']*)"
)

# Characters of a node's first position that open syntax left to the event
# parser (https://yaml.org/spec/1.1/#id868988): anchor, alias, tag, directive,
# reserved, block scalar, complex key.
_NODE_START = frozenset("&*!%@`|>?")
_BEFORE_NODE = frozenset(" \n[{,:")
_ALWAYS = frozenset("\\\t\r")
# Everything YAML prints but the characters above, `<` (for `<<`) and the
# line breaks YAML 1.1 knows besides \n (U+0085, U+2028, U+2029), and the BOM.
_PLAIN_ASCII = "".join(
    c for c in map(chr, range(0x20, 0x7F)) if c not in _NODE_START | _ALWAYS | {"<"}
)
_LOOK = re.compile(
    "[^\n"
    + re.escape(_PLAIN_ASCII)
    + "\u00a0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
# JSON that may not say what the text says: strings rapidyaml writes for plain
# `inf`, `.Inf`, `nan`, ... (a rewrite, not the text), and an empty key, which
# rapidyaml accepts written as nothing at all (`: 1`) where YAML needs `"": 1`.
# And " #" in a string: YAML starts a comment there in a plain scalar, which
# rapidyaml does not do inside a flow collection (`{x: 1 #c}` gives "1 #c").
_UNSURE = ('".inf"', '"-.inf"', '".nan"', '"": ', " #")
# A `:` that ends a flow collection's key with no value after it (`[0:]`): YAML
# 1.1 refuses it, rapidyaml reads a key with a null value.
_BARE_COLON = re.compile(r":[\]},]")
# Numbers rapidyaml may have rewritten: `.5` -> 0.5, `3.` -> 3.0, `.5e3` -> 0.5e3.
_LEADING_ZERO = re.compile(r"^([-+]?)0\.")
_TRAILING_ZERO = re.compile(r"\.0(?=[eE]|$)")
# Cap on full-text searches per file, so a hostile file cannot make them quadratic.
_MAX_SEARCHES = 64


class Refused(Exception):
    """The fast path cannot show it gives the event parser's values for this text."""


def load(text: str) -> list[Document] | None:
    """The documents of `text` as the event parser builds them, with lazy source
    maps, or None when the fast path cannot show that (the caller parses then)."""
    if ryml is None or _needs_events(text):
        return None
    try:
        return _Reader(text).documents()
    except Exception:  # Refused, the JSON reader's errors, deep nesting: the event parser decides
        return None


# Bytes without which a text never holds what _needs_events looks for
# (anchors, aliases, tags, merge keys, directives, escapes, tabs, CRs).
_EVENT_MARKS = (b"&", b"*", b"!", b"<<", b"%", b"\\", b"\t", b"\r")


def may_take(data: bytes) -> bool:
    """Whether the fast path will most likely read these bytes: a scan at C
    speed, for deciding where a file is parsed (checker.inventory.reading).
    A file it calls unlikely may still be taken, and one it calls likely
    refused: either way only the place of the parse is at stake."""
    return AVAILABLE and not any(mark in data for mark in _EVENT_MARKS)


def _needs_events(text: str) -> bool:
    """Whether the text holds syntax the fast path leaves to the event parser."""
    if _BARE_COLON.search(text) or ",:" in text:  # `{x,: 1}`: rapidyaml reads a key `x,`
        return True
    for match in _LOOK.finditer(text):
        i = match.start()
        char = text[i]
        if char in _NODE_START:
            if i == 0 or text[i - 1] in _BEFORE_NODE:
                return True
        elif char == "<":
            if text.startswith("<<", i):
                return True
        else:
            return True  # backslash, tab, CR, or a character YAML does not print
    return False


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """rapidyaml prints its parse errors to file descriptor 2 before raising; the
    event parser reports them (once, cleaned of control characters), so that
    copy goes nowhere."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no stderr at all: nothing to hide
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _json(text: str) -> str:
    """The text as JSON, under one key: `stream` (a list of documents, when the text
    has `---`) or `document`; empty when there is nothing."""
    with _quiet_stderr():
        try:
            tree = ryml.parse_in_arena(text.encode())
            root = tree.root_id()
            out = ryml.emit_json_malloc(tree, root)
            if out is not None and not isinstance(out, str):
                out = bytes(out).decode()  # some builds hand back bytes
            key = "stream" if tree.is_stream(root) else "document"
        except Exception as exc:  # rapidyaml raises its own exception types
            raise Refused(str(exc)) from None
    return f'{{"{key}": {out}}}' if out else ""


@functools.lru_cache(maxsize=4096)
def _plain_gives_string(value: str) -> bool:
    """Whether rapidyaml writes `value`, written plain, as that JSON string."""
    try:
        out = json.loads(_json(f"- {value}\n"))
    except (Refused, ValueError):
        return True  # unknown: treat the string as possibly plain
    return bool(out == {"document": [value]})


def _plain(text: str) -> Any:
    """The value PyYAML builds for a plain scalar with this text."""
    tag = _RESOLVER.resolve(ScalarNode, text, (True, False))
    if tag == _STR:
        return text
    build = SafeConstructor.yaml_constructors.get(tag)
    if build is None:
        raise Refused(f"unsupported tag {tag}")
    try:
        value = build(_CONSTRUCTOR, ScalarNode(tag, text))
    except (ValueError, yaml.YAMLError) as exc:
        raise Refused(str(exc)) from None
    return WrittenFloat(value, text) if type(value) is float else value


class _Memo(dict[str, Any]):
    """A per-file memo: each distinct text is decided once."""

    def __init__(self, decide: Any) -> None:
        super().__init__()
        self.decide = decide

    def __missing__(self, text: str) -> Any:
        value = self[text] = self.decide(text)
        return value


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.strings = _Memo(self._string)
        self.numbers = _Memo(self._number)
        self.keys: set[str] = set()
        self._quoted: set[str] | None = None
        self.searches = 0

    def documents(self) -> list[Document]:
        js = _json(self.text)
        if not js or any(s in js for s in _UNSURE):
            raise Refused("rewritten by rapidyaml, or an empty key")
        top = json.loads(
            js,
            object_pairs_hook=self._mapping,
            parse_int=self.numbers.__getitem__,
            parse_float=self.numbers.__getitem__,
            parse_constant=_refuse,
        )
        values = top["stream"] if "stream" in top else [top["document"]]
        positions = _Positions(self.text)
        docs: list[Document] = []
        for value in values:
            if value is None:
                continue  # an empty document: the event parser drops it too
            if not isinstance(value, (dict, list)):
                raise Refused("a scalar document")  # rare; its error needs the event parser
            docs.append(Document(value, _FileSrc(positions, len(docs))))
        return docs

    def _mapping(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        values = dict(pairs)
        if len(values) != len(pairs):
            raise Refused("duplicate key")  # the event parser says which, and where
        if not self.keys.issuperset(values):  # keys repeat: checked once each
            self._check_keys(values)
        strings = self.strings
        for key, value in pairs:
            kind = value.__class__
            if kind is str:
                new = strings[value]
                if new is not value:
                    values[key] = new
            elif kind is list:
                self._sequence(value)
        return values

    def _check_keys(self, values: dict[str, Any]) -> None:
        for key in values:
            if key[:1] in _ODD_FIRST:
                raise Refused(f"a key that starts with {key[0]}")
            self.keys.add(key)

    def _sequence(self, items: list[Any]) -> None:
        strings = self.strings
        for i, value in enumerate(items):
            kind = value.__class__
            if kind is str:
                items[i] = strings[value]
            elif kind is list:
                self._sequence(value)

    def _string(self, value: str) -> Any:
        """The value of a JSON string: a quoted scalar, or a plain one YAML 1.1 may type."""
        if value[:1] not in _CHECK_FIRST:
            return value  # no YAML 1.1 type starts so: a string however written
        if value[:1] in _ODD_FIRST:
            raise Refused(f"a string that starts with {value[0]}")
        if _RESOLVER.resolve(ScalarNode, value, (True, False)) == _STR:
            return value  # a string whether it was written plain or quoted
        if not self._maybe_quoted(value):
            return _plain(value)  # no quoted scalar holds it: written plain
        if not _plain_gives_string(value):
            return value  # rapidyaml writes it plain as something else: it was quoted
        if self._never_plain(value):
            return value
        raise Refused(f"{value!r} is written both plain and quoted")

    def _maybe_quoted(self, value: str) -> bool:
        """Whether a quoted scalar may hold `value`. With no backslash in the text,
        a quoted scalar's value starts with the text right after its quote, up to
        the first space or line break (folding only touches those)."""
        if self._quoted is None:
            self._quoted = set(_QUOTED_START.findall(self.text))
        return value.split(None, 1)[0] in self._quoted if value.strip() else True

    def _never_plain(self, value: str) -> bool:
        """Whether every appearance of `value` in the text follows a quote: a plain
        scalar cannot start right after one."""
        if not value.strip() or self._search():
            return False
        head = value.split(None, 1)[0]
        return self.text.count(head) == self.text.count(f'"{head}') + self.text.count(f"'{head}")

    def _number(self, text: str) -> Any:
        """A JSON number: a plain scalar, read as YAML 1.1 reads its text."""
        alternatives = _rewrites(text)
        if alternatives and (self._search() or any(_appears(a, self.text) for a in alternatives)):
            raise Refused(f"{text} may have been written as {alternatives[0]}")
        return _plain(text)

    def _search(self) -> bool:
        """Count a full-text search; True once there have been too many."""
        self.searches += 1
        return self.searches > _MAX_SEARCHES


def _refuse(text: str) -> Any:
    raise Refused(text)


def _rewrites(text: str) -> list[str]:
    """The texts rapidyaml writes as this number (but this text itself)."""
    forms = {text}
    for pattern, repl in ((_LEADING_ZERO, r"\1."), (_TRAILING_ZERO, ".")):
        forms |= {pattern.sub(repl, f, count=1) for f in forms}
    forms.discard(text)
    return sorted(forms)


def _appears(form: str, text: str) -> bool:
    return re.search(rf"(?<![0-9]){re.escape(form)}(?![0-9])", text) is not None


class _Positions:
    """A file's text and, once asked for, the event parser's source maps of it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._docs: list[Document] | None = None

    def src(self, index: int) -> Src:
        if self._docs is None:
            self._docs = parse(self.text)
        return self._docs[index].src

    def __reduce__(self) -> tuple[Any, ...]:
        return (_Positions, (self.text,))


class _FileSrc(LazySrc):
    """The source map of a fast-parsed document: the event parser's, when first needed."""

    __slots__ = ("_index", "_positions")
    _index: int
    _positions: _Positions

    def __init__(self, positions: _Positions, index: int) -> None:
        super().__init__()
        object.__setattr__(self, "_positions", positions)
        object.__setattr__(self, "_index", index)

    def _compute(self) -> Src:
        return self._positions.src(self._index)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_FileSrc, (self._positions, self._index))


def deferred_index(src: Src) -> int | None:
    """The document index of a fast-parsed document's source map, which the
    file's text alone gives back (the cache stores that, not the map), else None."""
    return src._index if isinstance(src, _FileSrc) else None


def deferred_sources(text: str) -> Callable[[int], Src]:
    """Source maps of the documents of `text`, worked out on first use, all from one parse."""
    positions = _Positions(text)
    return lambda index: _FileSrc(positions, index)
