"""A fast first parse that gives the event parser's exact values, or refuses.

Our event parser (checker.source.parse) costs seconds on a 5 MB file, most
of it per-event Python work. rapidyaml (C++) parses the same text to its own
tree and writes it out as JSON in a fraction of that, and `json.loads` builds
the values in C. This module takes that route only when it can show the result
is exactly what the event parser builds; for anything else it refuses and the
event parser reads the file, staying the authority for every error message
and position (docs/architecture.md, "Source maps").

Positions (the source map of every value and key) are not worked out with the
values: most are never asked for. When one is, rapidyaml parses the text again
in place, so that each scalar of its tree points into the text's bytes, and
the position of the node asked for, its keys' and its scalars' are worked out
from those offsets as libyaml marks them (_Tree); nodes that do not show their
mark exactly (an empty collection in a flow sequence, say) leave that
document's positions to the event parser. A run keeps only its last two
trees (Trees, one per run, passed down to every file it reads).

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

import bisect
import contextlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy
import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode

from checker.source.parse import (
    MAX_KEYS,
    Document,
    LazySrc,
    Src,
    WrittenFloat,
    parse,
    root_position,
    yaml11_trap,
)

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
# The characters above, `<` (for `<<`), and everything YAML does not print: the
# C0 controls but \n, DEL and C1 (with U+0085, a line break in YAML 1.1), U+2028
# and U+2029 (line breaks too), surrogates, the BOM, U+FFFE and U+FFFF. Written
# as the class of these, not as its complement (the printable ranges): the same
# characters (a test compares every code point), compiled in a tenth of the time.
_LOOK = re.compile(
    "[\x00-\x09\x0b-\x1f"
    + re.escape("".join(sorted(_NODE_START | _ALWAYS | {"<"})))
    + "\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]"
)
# Strings rapidyaml writes for plain `inf`, `.Inf`, `nan`, ... (a rewrite, not
# the text): a key or string that is one of them refuses the file, as does an
# empty key, which rapidyaml accepts written as nothing at all (`: 1`) where
# YAML needs `"": 1` (_check_keys, _string: once per distinct text).
_REWRITTEN = frozenset((".inf", "-.inf", ".nan"))
# " #" in a string: YAML starts a comment there in a plain scalar, which
# rapidyaml does not do inside a flow collection (`{x: 1 #c}` gives "1 #c").
# Looked for in the JSON only where it holds a `#` at all (one memchr).
_COMMENT = " #"
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


# rapidyaml's tree holds ~250 bytes a node, and positions need a second tree:
# for a file of a few bytes a node (a generated `- 1` list, a million `- {}`)
# that is 60 to 120 times the file, where the event parser's map costs ~30
# (benchmarks/input_memory.py). No inventory comes near: their files have 14
# bytes or more per line break and comma, a rough count of their nodes.
_DENSE_MIN_BYTES = 1_000_000
_DENSE_BYTES_PER_NODE = 10


def _dense(text: str | bytes) -> bool:
    """Whether a large text has a node every few bytes. Its line breaks and commas
    are counted only when it is large: two passes over every file otherwise
    (10 ms of a 10,000-server fleet's files)."""
    if len(text) < _DENSE_MIN_BYTES:
        return False
    if isinstance(text, str):
        nodes = text.count("\n") + text.count(",")
    else:
        nodes = text.count(b"\n") + text.count(b",")
    return nodes * _DENSE_BYTES_PER_NODE > len(text)


def load(text: str, trees: Trees | None = None) -> list[Document] | None:
    """The documents of `text` as the event parser builds them, with lazy source
    maps, or None when the fast path cannot show that (the caller parses then).
    `trees`: the run's holder of the trees positions are worked out from, shared
    by every file the run reads (default: one for this text alone)."""
    if ryml is None or _dense(text) or _needs_events(text):
        return None
    reader = _Reader(text, trees)
    try:
        return reader.documents()
    except Exception:  # Refused, the JSON reader's errors, deep nesting: the event parser decides
        return None
    finally:
        reader.release()


# Bytes without which a text never holds what _needs_events looks for
# (anchors, aliases, tags, merge keys, directives, escapes, tabs, CRs).
_EVENT_MARKS = (b"&", b"*", b"!", b"<<", b"%", b"\\", b"\t", b"\r")


def may_take(data: bytes) -> bool:
    """Whether the fast path will most likely read these bytes: a scan at C
    speed, for deciding where a file is parsed (checker.load.reading).
    A file it calls unlikely may still be taken, and one it calls likely
    refused: either way only the place of the parse is at stake."""
    if _dense(data):
        return False
    return AVAILABLE and not any(mark in data for mark in _EVENT_MARKS)


# The ASCII characters _LOOK does not match: deleting them from an ASCII text
# leaves nothing when _LOOK finds nothing in it (one pass in C, where the
# regular expression steps through the text character by character).
_UNLOOKED = bytes(c for c in range(128) if _LOOK.match(chr(c)) is None)


def _needs_events(text: str) -> bool:
    """Whether the text holds syntax the fast path leaves to the event parser."""
    if _BARE_COLON.search(text) or ",:" in text:  # `{x,: 1}`: rapidyaml reads a key `x,`
        return True
    if text.isascii() and not text.encode("ascii").translate(None, _UNLOOKED):
        return False  # no character _LOOK matches
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


def _plain_gives_string(value: str) -> bool:
    """Whether rapidyaml writes `value`, written plain, as that JSON string (asked
    at most once per distinct string of a file: _Reader.strings remembers it)."""
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
    if yaml11_trap(text, tag) is not None:
        raise Refused(text)  # the event parser says where, and what was read
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
    def __init__(self, text: str, trees: Trees | None) -> None:
        self.text = text
        self.trees = trees
        self.strings = _Memo(self._string)
        self.numbers = _Memo(self._number)
        self.keys: set[str] = set()
        self._quoted: set[str] | None = None
        self.searches = 0

    def release(self) -> None:
        """Drop the memos: they call this reader's own methods, a reference cycle
        that would keep the reader (and the run's trees) while the cycle
        collector is paused, as it is during a run."""
        del self.strings, self.numbers

    def documents(self) -> list[Document]:
        js = _json(self.text)
        if not js or ("#" in js and _COMMENT in js):
            raise Refused("a comment in a flow collection, maybe")
        top = json.loads(
            js,
            object_pairs_hook=self._mapping,
            parse_int=self.numbers.__getitem__,
            parse_float=self.numbers.__getitem__,
            parse_constant=_refuse,
        )
        values = top["stream"] if "stream" in top else [top["document"]]
        positions = _Positions(self.text, self.trees)
        docs: list[Document] = []
        for value in values:
            if value is None:
                continue  # an empty document: the event parser drops it too
            if not isinstance(value, (dict, list)):
                raise Refused("a scalar document")  # rare; its error needs the event parser
            docs.append(Document(value, _FileSrc(positions, len(docs))))
        return docs

    def _mapping(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        if len(pairs) > MAX_KEYS:
            raise Refused("too many keys")  # the event parser says where, and stops there
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
            if not key or key in _REWRITTEN:
                raise Refused("an empty key, or one rewritten by rapidyaml")
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
        if value in _REWRITTEN:
            raise Refused(f"{value!r}: rewritten by rapidyaml, or written so")
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


class _Inexact(Exception):
    """A position rapidyaml's tree does not give exactly: the event parser's map decides."""


# Trees a run keeps at once: a finding or error asks for positions file after
# file, and a tree with its copies of the text costs about 14 times the text
# (3 MB for a 200 KB servers file, measured); another file's tree is parsed
# again (fast).
_KEPT_TREES = 2
# A file whose tree was parsed this many times is asked for positions in turn
# with other files: the next time its tree is needed, its documents' maps are
# worked out whole (about 27 parses' worth) and no tree of it is parsed again.
# As in renting against buying, that bounds the cost at about twice the whole
# maps', however the files are interleaved.
_BUILDS_BEFORE_WHOLE = 16
# Items of a list found by walking from its first (fastpath._Tree._item): a
# server's few tags or ports; a longer list has its map worked out once.
_ITEMS_WALKED = 32
# Lines looked back over for an item's `-` (comments between it and the item).
_LINES_BACK = 64


class Trees:
    """The rapidyaml trees one run keeps to work positions out from: the last
    _KEPT_TREES files' trees, whichever files they are. One run (a load:
    checker.load.reading makes one for all the files it reads) owns one, so two
    runs in a process share none, and a run's trees are freed with its source
    maps. It holds trees only, never the files' position maps: no reference
    cycle, so it is freed with the collector paused too."""

    def __init__(self) -> None:
        self._kept: dict[int, _Tree] = {}  # by file number, oldest first
        self._files = 0

    def file(self) -> int:
        """A number for a file of this run, to keep its tree under."""
        self._files += 1
        return self._files

    def get(self, file: int) -> _Tree | None:
        return self._kept.get(file)

    def keep(self, file: int, tree: _Tree) -> None:
        """Keep `tree` for `file`, letting the oldest kept tree go past the limit
        (the positions worked out from it stay)."""
        self._kept[file] = tree
        while len(self._kept) > _KEPT_TREES:
            del self._kept[next(iter(self._kept))]

    def __len__(self) -> int:
        return len(self._kept)


class _Positions:
    """A file's text and, once asked for, the positions of its nodes: from
    rapidyaml's tree of the text, node by node as they are asked for, or from
    the event parser's map of a document where the tree does not give a
    position exactly (_Inexact)."""

    def __init__(self, text: str, trees: Trees | None = None) -> None:
        self.text = text
        self._trees = Trees() if trees is None else trees
        self._file = self._trees.file()
        self._builds = 0
        self._whole: dict[int, Src] = {}
        self._eager: list[Document] | None = None
        self._inexact: set[int] = set()

    def src(self, index: int) -> Src:
        """The source map of document `index`: its root, with its children worked out when asked."""
        if index in self._inexact:
            return self._event_map(index)
        if index in self._whole:
            return self._whole[index]
        return _NodeSrc(self, index, (), self.tree().roots[index])

    def node(self, index: int, path: tuple[str | int, ...], node: int) -> Src:
        """The position of `node` (at `path` in document `index`), its keys' and its children's."""
        if index not in self._inexact and not self._whole:
            if self._trees.get(self._file) is None and self._builds >= _BUILDS_BEFORE_WHOLE:
                self._work_out_whole()
            else:
                try:
                    return self.tree().resolve(self, index, path, node)
                except (_Inexact, RecursionError):
                    self._inexact.add(index)
        if index in self._whole:
            return _resolved(self._whole[index].descend(*path))
        return self._event_map(index).descend(*path)

    def position(self, index: int, path: tuple[str | int, ...], node: int | None) -> tuple[int, int]:
        """Where a node stands, without working out its children: a document's
        root (`node` None) from the events alone, so a document that is a list of
        a million items is placed with no tree of it (which would hold ~250 bytes
        per item); another node from the tree, raising _Inexact where it cannot."""
        if not path:
            found = root_position(self.text, index)
            if found is not None:
                return found
        if node is None:
            raise _Inexact
        self._exact(index)  # a tree parsed again is node()'s to decide (_BUILDS_BEFORE_WHOLE)
        tree = self.tree()
        return tree.position(tree.start(node, tree.tree.type(node)))

    def locate(
        self, index: int, where: tuple[str | int, ...], node: int, path: tuple[str | int, ...], key: bool
    ) -> tuple[int, int]:
        """Src.locate of `path` from `node` (at `where` in document `index`),
        from the tree as `node` would work it out; _Inexact where it would not."""
        self._exact(index)  # first: placing `node` must not parse a tree again
        return self.tree().locate(node, self.position(index, where, node), path, key)

    def child(self, index: int, path: tuple[str | int, ...], node: int, step: str | int) -> Src | None:
        """The child `step` of `node` (at `path` in document `index`) as resolve makes it."""
        self._exact(index)
        return self.tree().child(self, index, path, node, step)

    def key_position(self, index: int, node: int, step: str) -> tuple[int, int] | None:
        """Where key `step` of mapping `node` stands, as resolve places it (None: no such key)."""
        self._exact(index)
        return self.tree().key_position(node, step)

    def _exact(self, index: int) -> None:
        if index in self._inexact or self._whole or self._trees.get(self._file) is None:
            raise _Inexact  # worked out as node() does: from the events, the whole maps or a new tree

    def _work_out_whole(self) -> None:
        """Every document's map with every node worked out, from one tree."""
        tree = self.tree()
        for index in range(len(tree.roots)):
            if index in self._inexact:
                continue
            try:
                self._whole[index] = self._whole_document(tree, index)
            except (_Inexact, RecursionError):
                self._inexact.add(index)

    def _whole_document(self, tree: _Tree, index: int) -> Src:
        """Document `index`'s map, every collection in it worked out."""
        root = tree.resolve(self, index, (), tree.roots[index])
        pending = [root]
        while pending:
            children = pending.pop().children
            for child in children.values() if isinstance(children, dict) else children or ():
                if isinstance(child, _NodeSrc) and child._node is None:
                    child.settle(tree.resolve(self, index, child._path, child._id))
                    pending.append(child)
        return root

    def tree(self) -> _Tree:
        tree = self._trees.get(self._file)
        if tree is None:
            self._builds += 1
            tree = _Tree(self.text)
            self._trees.keep(self._file, tree)
        return tree

    def _event_map(self, index: int) -> Src:
        if self._eager is None:
            self._eager = parse(self.text)
        return self._eager[index].src

    def __reduce__(self) -> tuple[Any, ...]:
        return (_Positions, (self.text,))  # a copy keeps its tree in a holder of its own


_asarray = numpy.asarray


def _address(view: Any) -> int:
    """The address of a buffer's first byte, from numpy's documented array
    interface (https://numpy.org/doc/stable/reference/arrays.interface.html).

    rapidyaml's Python API gives a scalar of a tree parsed in place as a
    memoryview into the text's bytes, and no offset or location of its own,
    so a scalar's offset is its address less the text's. numpy.asarray views
    a buffer without copying it (tests/source/test_fastpath.py checks it
    against numpy.frombuffer, which never copies); no ctypes, no CPython
    internals."""
    address: int = _asarray(view).__array_interface__["data"][0]  # an int: numpy's (address, read-only)
    return address


_MAP, _SEQ, _KEY = (int(ryml.MAP), int(ryml.SEQ), int(ryml.KEY)) if ryml else (0, 0, 0)
_CONTAINER = _MAP | _SEQ
_FLOW = int(ryml.CONTAINER_STYLE_FLOW) if ryml else 0
_KEY_QUOTED, _VAL_QUOTED = (int(ryml.KEYQUO), int(ryml.VALQUO)) if ryml else (0, 0)


class _Tree:
    """rapidyaml's tree of a text parsed in place, so that each scalar's view
    points into the text's bytes: its offset there is where it was written.
    Positions follow libyaml's marks, which the event parser records: a scalar
    at its first character (a quoted one at its quote), a block mapping at its
    first key, a block sequence at its first `-`, a flow collection at its
    bracket, an empty value in a block mapping right after its `:`, and in a
    flow mapping at the `,` or `}` after it; lines and columns 1-based, columns
    counted in characters. Anything else raises _Inexact."""

    def __init__(self, text: str) -> None:
        self.data = text.encode()
        self.buf = bytearray(self.data)
        with _quiet_stderr():
            self.tree = ryml.parse_in_place(self.buf)
        self.base = _address(memoryview(self.buf))
        newlines = numpy.flatnonzero(numpy.frombuffer(self.data, dtype=numpy.uint8) == 0x0A)
        self.starts: list[int] = [0, *(newlines + 1).tolist()]
        self.ascii = self.data.isascii()
        tree = self.tree
        root = tree.root_id()
        docs = _children(tree, root) if tree.is_stream(root) else [root]
        # Empty documents hold nothing, and fastpath.load drops them.
        self.roots = [d for d in docs if tree.type(d) & _CONTAINER]

    def resolve(self, positions: _Positions, index: int, path: tuple[str | int, ...], node: int) -> Src:
        """The source map of `node`: its own position, its keys', its scalars';
        its collections are _NodeSrc, worked out when asked for."""
        tree, base, position = self.tree, self.base, self.position
        kind = tree.type(node)
        line, column = position(self.start(node, kind))
        nodes = _children(tree, node)
        if kind & _SEQ:
            items: list[Src] = []
            for i, child in enumerate(nodes):
                child_kind = tree.type(child)
                if child_kind & _CONTAINER:
                    items.append(_NodeSrc(positions, index, (*path, i), child))
                else:
                    items.append(Src(*position(self.start(child, child_kind))))
            return Src(line, column, children=items)
        children: dict[str, Src] = {}
        keys: dict[str, tuple[int, int]] = {}
        for child in nodes:
            child_kind = tree.type(child)
            view = tree.key(child)
            key = bytes(view).decode()
            keys[key] = position(_address(view) - base - (1 if child_kind & _KEY_QUOTED else 0))
            if child_kind & _CONTAINER:
                children[key] = _NodeSrc(positions, index, (*path, key), child)
                continue
            view = tree.val(child)  # a scalar's own text, the usual case, at once
            at = self.start(child, child_kind) if view is None else _address(view) - base
            children[key] = Src(*position(at - (1 if child_kind & _VAL_QUOTED else 0)))
        return Src(line, column, children=children, keys=keys)

    def locate(
        self, node: int, at: tuple[int, int], path: tuple[str | int, ...], key: bool
    ) -> tuple[int, int]:
        """What Src.locate gives for `path` in the map `resolve` makes of `node`
        (standing `at`) and of the nodes below it, with only the nodes on the
        path looked at: each step's position as resolve places it."""
        tree, base = self.tree, self.base
        kind, pos = tree.type(node), at
        for i, step in enumerate(path):
            if not kind & _CONTAINER:
                return pos  # a scalar has no children: the path stops here
            if kind & _SEQ:
                child = self._item(node, step)
                if child == ryml.NONE:
                    return pos
                child_kind = tree.type(child)
                pos = self.position(self.start(child, child_kind))
            else:
                if not isinstance(step, str):
                    return pos
                child = tree.find_child(node, step.encode())  # keys are unique: fastpath refuses others
                if child == ryml.NONE:
                    return pos
                child_kind = tree.type(child)
                if key and i == len(path) - 1:
                    view = tree.key(child)
                    return self.position(_address(view) - base - (1 if child_kind & _KEY_QUOTED else 0))
                if child_kind & _CONTAINER:
                    pos = self.position(self.start(child, child_kind))
                else:
                    view = tree.val(child)
                    offset = self.start(child, child_kind) if view is None else _address(view) - base
                    pos = self.position(offset - (1 if child_kind & _VAL_QUOTED else 0))
            node, kind = child, child_kind
        return pos

    def child(
        self, positions: _Positions, index: int, path: tuple[str | int, ...], node: int, step: str | int
    ) -> Src | None:
        """resolve(...).child(step), with only that child looked at."""
        tree = self.tree
        kind = tree.type(node)
        if kind & _SEQ:
            child = self._item(node, step)
            if child == ryml.NONE:
                return None
            child_kind = tree.type(child)
            if child_kind & _CONTAINER:
                return _NodeSrc(positions, index, (*path, step), child)
            return Src(*self.position(self.start(child, child_kind)))
        if not isinstance(step, str):
            return None
        child = tree.find_child(node, step.encode())  # keys are unique: fastpath refuses others
        if child == ryml.NONE:
            return None
        child_kind = tree.type(child)
        if child_kind & _CONTAINER:
            return _NodeSrc(positions, index, (*path, step), child)
        view = tree.val(child)
        at = self.start(child, child_kind) if view is None else _address(view) - self.base
        return Src(*self.position(at - (1 if child_kind & _VAL_QUOTED else 0)))

    def _item(self, node: int, step: str | int) -> int:
        """Item `step` of sequence `node` (ryml.NONE: no such item). rapidyaml
        finds an item by walking its siblings, so an item far down a list is
        _Inexact: a finding on each of 100,000 servers of one list would walk
        5e9 siblings; the list's map, worked out once, has each at hand."""
        if not isinstance(step, int) or step < 0:
            return int(ryml.NONE)
        if step >= _ITEMS_WALKED:
            raise _Inexact
        return int(self.tree.child(node, step))

    def key_position(self, node: int, step: str) -> tuple[int, int] | None:
        """resolve(...).keys.get(step) (a sequence has no keys: None)."""
        tree = self.tree
        if tree.type(node) & _SEQ:
            return None
        child = tree.find_child(node, step.encode())
        if child == ryml.NONE:
            return None
        quoted = 1 if tree.type(child) & _KEY_QUOTED else 0
        return self.position(_address(tree.key(child)) - self.base - quoted)

    def position(self, offset: int) -> tuple[int, int]:
        """(line, column) of a byte offset: columns count characters, as libyaml's do."""
        line = bisect.bisect_right(self.starts, offset)
        start = self.starts[line - 1]
        if self.ascii:
            return line, offset - start + 1
        return line, len(self.data[start:offset].decode()) + 1

    def start(self, node: int, kind: int) -> int:
        """The byte offset libyaml marks `node` at."""
        own = self.own_start(node, kind)
        if own is not None:
            return own
        if kind & _KEY and not kind & _CONTAINER:
            return self.empty_value(node, kind)
        if kind & _SEQ and not kind & _FLOW:
            return self.dash(node, 0)
        if kind & _KEY:
            at = self.after_colon(node, kind)
            if self.data[at : at + 1] != (b"{" if kind & _MAP else b"["):
                raise _Inexact("no bracket after the key")
            return at
        parent = self.tree.parent(node)
        parent_kind = self.tree.type(parent) if parent != ryml.NONE else 0
        if parent == ryml.NONE or self.tree.is_stream(parent):
            at = self.document_start(node)
        elif not parent_kind & _SEQ or parent_kind & _FLOW:
            raise _Inexact("an empty collection in a flow sequence")
        else:
            at = self.dash(parent, self.tree.child_pos(parent, node)) + 1
            if not kind & _CONTAINER:
                return at  # nothing written after the `-`: libyaml marks the end of the `-`
            at = self.skip(at)
        if self.data[at : at + 1] != (b"{" if kind & _MAP else b"["):
            raise _Inexact("no bracket after the `-`")
        return at

    def own_start(self, node: int, kind: int) -> int | None:
        """Where `node` starts, when the node itself shows it: a scalar's text, a
        block mapping's first key, a flow collection's bracket before its first
        item on the same line; else None."""
        if not kind & _CONTAINER:
            view = self.tree.val(node)
            return None if view is None else _address(view) - self.base - (1 if kind & _VAL_QUOTED else 0)
        first = self.tree.first_child(node)
        if not kind & _FLOW:
            if kind & _SEQ:
                return None
            if first == ryml.NONE:
                raise _Inexact("an empty block mapping")
            return self.key_start(first)
        if first == ryml.NONE:
            return None
        first_kind = self.tree.type(first)
        at = self.key_start(first) if kind & _MAP else self.own_start(first, first_kind)
        if at is None:
            return None
        at -= 1
        while at > 0 and self.data[at] == 0x20:  # spaces between the bracket and the first item
            at -= 1
        return at if self.data[at : at + 1] == (b"{" if kind & _MAP else b"[") else None

    def dash(self, seq: int, index: int) -> int:
        """The offset of the `-` of item `index` of a block sequence."""
        tree = self.tree
        item = tree.child(seq, index)
        content = self.own_start(item, tree.type(item))
        if content is not None:
            return self.dash_before(content)
        # After the item before it (only spaces and comments between), or where the sequence starts.
        at = self.skip(self.end(tree.child(seq, index - 1))) if index > 0 else self.entry(seq)
        if self.data[at : at + 1] != b"-":
            raise _Inexact("no `-` where a sequence item starts")
        return at

    def dash_before(self, content: int) -> int:
        """The `-` before an item's first character: on its line, or at the start of
        an earlier line, when only spaces, line breaks and comments lie between."""
        data = self.data
        at = content - 1
        while at > 0 and data[at] == 0x20:
            at -= 1
        if data[at : at + 1] != b"-":
            at = self._dash_line_before(content)
        # Exact only if nothing but spaces, line breaks and comments lies between.
        if data[at : at + 1] != b"-" or data[at + 1 : at + 2] not in (b" ", b"\n"):
            raise _Inexact("no `-` before the item")
        if self.skip(at + 1) != content:
            raise _Inexact("more than comments between the `-` and the item")
        return at

    def _dash_line_before(self, content: int) -> int:
        """The first non-space character of the nearest earlier line that starts with `-`."""
        data = self.data
        line = data.rfind(b"\n", 0, content)
        for _ in range(_LINES_BACK):
            if line <= 0:
                break
            start = data.rfind(b"\n", 0, line) + 1
            at = start + len(data[start:line]) - len(data[start:line].lstrip(b" "))
            if data[at : at + 1] == b"-":
                return at
            line = start - 1
        raise _Inexact("no `-` on the lines before the item")

    def entry(self, seq: int) -> int:
        """Where a block sequence's first `-` is looked for: after its key's `:`, after
        the `-` of the item it is, or at the start of a text of one document."""
        tree = self.tree
        kind = tree.type(seq)
        if kind & _KEY:
            return self.after_colon(seq, kind)
        parent = tree.parent(seq)
        if parent == ryml.NONE or tree.is_stream(parent):
            return self.document_start(seq)
        parent_kind = tree.type(parent)
        if parent_kind & _SEQ and not parent_kind & _FLOW:
            return self.skip(self.dash(parent, tree.child_pos(parent, seq)) + 1)
        raise _Inexact("a sequence in a flow sequence")

    def document_start(self, doc: int) -> int:
        """The offset of a document's first token: after the document before it
        and the `...` and `---` markers between them."""
        tree, data = self.tree, self.data
        before = tree.prev_sibling(doc) if tree.parent(doc) != ryml.NONE else ryml.NONE
        if before == ryml.NONE:
            at = self.skip(0)
        elif tree.type(before) & _CONTAINER:
            at = self.skip(self.end(before))
        else:
            raise _Inexact("a document after an empty one")
        for marker in (b"...", b"---"):
            if data.startswith(marker, at) and data[at + 3 : at + 4] in (b"", b" ", b"\n"):
                at = self.skip(at + 3)
        return at

    def end(self, node: int) -> int:
        """The offset right after `node` as written: a scalar's last character or
        closing quote, the end of an empty value's indicator, a flow collection's
        closing bracket, a block collection's last value."""
        tree = self.tree
        kind = tree.type(node)
        if not kind & _CONTAINER:
            return self.scalar_end(node, kind)
        last = tree.last_child(node)
        if not kind & _FLOW:
            return self.end(last)  # a block collection has at least one item
        at = self.start(node, kind) + 1 if last == ryml.NONE else self.skip(self.end(last))
        if last != ryml.NONE and self.data[at : at + 1] == b",":
            at = self.skip(at + 1)
        if self.data[at : at + 1] != (b"}" if kind & _MAP else b"]"):
            raise _Inexact("no closing bracket")
        return at + 1

    def scalar_end(self, node: int, kind: int) -> int:
        view = self.tree.val(node)
        if view is None:  # nothing written: the end of its `:` or `-`, or of its key
            if kind & _KEY:
                at = _skip_spaces(self.data, self.key_end(node, kind))
                return at + 1 if self.data[at : at + 1] == b":" else self.key_end(node, kind)
            return self.start(node, kind)
        start = self.start(node, kind)
        if kind & _VAL_QUOTED:
            return self.closing_quote(start)
        text = bytes(view)
        if self.data[start : start + len(text)] == text:
            return start + len(text)
        return self.folded_end(start, text)

    def folded_end(self, start: int, text: bytes) -> int:
        """The end of a plain scalar written over several lines: folding only turned
        the spaces and line breaks between its words into one space or line break."""
        data, at = self.data, start
        for word in text.split():
            while data[at : at + 1] in (b" ", b"\n"):
                at += 1
            if not data.startswith(word, at):
                raise _Inexact("a plain scalar that is not its words")
            at += len(word)
        return at

    def skip(self, at: int) -> int:
        """The offset of the next token from `at`: past spaces, line breaks and comments."""
        data = self.data
        while True:
            at = _skip_spaces(data, at)
            char = data[at : at + 1]
            if char == b"\n":
                at += 1
            elif char == b"#" and (at == 0 or data[at - 1 : at] in (b" ", b"\n")):
                end = data.find(b"\n", at)
                at = len(data) if end < 0 else end
            else:
                return at

    def key_start(self, node: int) -> int:
        quoted = self.tree.type(node) & _KEY_QUOTED
        return _address(self.tree.key(node)) - self.base - (1 if quoted else 0)

    def key_end(self, node: int, kind: int) -> int:
        """The byte offset right after a key as written (its closing quote included)."""
        data = self.data
        start = self.key_start(node)
        view = bytes(self.tree.key(node))
        if not kind & _KEY_QUOTED:
            if data[start : start + len(view)] != view:
                raise _Inexact("a plain key written over several lines")
            return start + len(view)
        return self.closing_quote(start)

    def closing_quote(self, start: int) -> int:
        """The offset right after the quoted scalar whose opening quote is at `start`
        (the fast path leaves backslash escapes to the event parser)."""
        data = self.data
        quote = data[start : start + 1]
        at = start + 1
        while True:
            at = data.find(quote, at)
            if at < 0:
                raise _Inexact("no closing quote")
            if quote == b"'" and data[at + 1 : at + 2] == b"'":
                at += 2  # '' is a quote inside single quotes
                continue
            return at + 1

    def after_colon(self, node: int, kind: int) -> int:
        """The offset of what follows a key's `:`, past spaces, line breaks and comments."""
        data = self.data
        at = _skip_spaces(data, self.key_end(node, kind))
        if data[at : at + 1] != b":":
            raise _Inexact("no colon after the key")
        return self.skip(at + 1)

    def empty_value(self, node: int, kind: int) -> int:
        """Where libyaml marks a value written as nothing: in a block mapping,
        right after the `:`; in a flow mapping, at the `,` or `}` that follows."""
        data = self.data
        parent_kind = self.tree.type(self.tree.parent(node))
        if not kind & _KEY or not parent_kind & _MAP:
            raise _Inexact("an empty sequence item")
        at = _skip_spaces(data, self.key_end(node, kind))
        colon = data[at : at + 1] == b":"
        if not parent_kind & _FLOW:
            if not colon:
                raise _Inexact("no colon after the key")
            return at + 1
        at = _skip_spaces(data, at + 1) if colon else at
        if data[at : at + 1] not in (b",", b"}"):
            raise _Inexact("an empty value not followed by , or }")
        return at


def _resolved(src: Src) -> Src:
    return src.resolved() if isinstance(src, LazySrc) else src


def _skip_spaces(data: bytes, at: int) -> int:
    while data[at : at + 1] == b" ":
        at += 1
    return at


def _children(tree: Any, node: int) -> list[int]:
    found = []
    child = tree.first_child(node)
    while child != ryml.NONE:
        found.append(child)
        child = tree.next_sibling(child)
    return found


class _NodeSrc(LazySrc):
    """The source map of one node of a fast-parsed document, worked out when first
    asked for; its collections' maps are worked out when they are asked for."""

    __slots__ = ("_id", "_index", "_path", "_positions")
    _positions: _Positions | None  # None once worked out
    _index: int
    _path: tuple[str | int, ...]
    _id: int

    def __init__(self, positions: _Positions, index: int, path: tuple[str | int, ...], node: int) -> None:
        super().__init__()
        object.__setattr__(self, "_positions", positions)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_id", node)

    def _compute(self) -> Src:
        assert self._positions is not None  # kept until the node is worked out
        node = self._positions.node(self._index, self._path, self._id)
        object.__setattr__(self, "_positions", None)
        return node

    def position(self) -> tuple[int, int]:
        if self._node is None and self._positions is not None:
            with contextlib.suppress(_Inexact, RecursionError):
                return self._positions.position(self._index, self._path, self._id)
        return self.resolved().position()

    def locate(self, path: Sequence[str | int] = (), *, key: bool = True) -> tuple[int, int]:
        """As Src.locate finds it in the worked-out map, found by walking the tree
        along `path` alone (a finding on each of 10,000 servers once worked out
        two whole mappings of each: 0.4 ms a server's); where the tree cannot
        say exactly, the map is worked out as ever."""
        if self._node is None and self._positions is not None and path:
            with contextlib.suppress(_Inexact, RecursionError):
                return self._positions.locate(self._index, self._path, self._id, tuple(path), key)
        # Worked out and kept, so that the next position asked here (the next
        # item of a long list) is at hand.
        return self.resolved().locate(path, key=key) if path else Src.locate(self, path, key=key)

    def child(self, step: str | int) -> Src | None:
        """As the worked-out map's child, from the tree alone (the map's siblings unread)."""
        if self._node is None and self._positions is not None:
            with contextlib.suppress(_Inexact, RecursionError):
                return self._positions.child(self._index, self._path, self._id, step)
        return self.resolved().child(step)

    def key_position(self, step: str) -> tuple[int, int] | None:
        if self._node is None and self._positions is not None:
            with contextlib.suppress(_Inexact, RecursionError):
                return self._positions.key_position(self._index, self._id, step)
        return self.resolved().key_position(step)

    def settle(self, node: Src) -> None:
        """The node worked out: the file's positions are no longer needed here. (A
        file's maps worked out whole are kept by its _Positions: a reference back
        from them would be a cycle, never freed while the collector is paused.)"""
        object.__setattr__(self, "_node", node)
        object.__setattr__(self, "_positions", None)

    def __reduce__(self) -> tuple[Any, ...]:
        if self._node is not None:
            return (_worked_out, (self._node,))
        return (_NodeSrc, (self._positions, self._index, self._path, self._id))


def _worked_out(src: Src) -> Src:
    return src


class _FileSrc(LazySrc):
    """The source map of a fast-parsed document, worked out when first needed."""

    __slots__ = ("_index", "_positions")
    _index: int
    _positions: _Positions

    def __init__(self, positions: _Positions, index: int) -> None:
        super().__init__()
        object.__setattr__(self, "_positions", positions)
        object.__setattr__(self, "_index", index)

    def _compute(self) -> Src:
        return _resolved(self._positions.src(self._index))

    def position(self) -> tuple[int, int]:
        if self._node is None:
            with contextlib.suppress(_Inexact, RecursionError):
                return self._positions.position(self._index, (), None)
        return self.resolved().position()

    def __reduce__(self) -> tuple[Any, ...]:
        return (_FileSrc, (self._positions, self._index))


def deferred_index(src: Src) -> int | None:
    """The document index of a fast-parsed document's source map, which the
    file's text alone gives back (the cache stores that, not the map), else None."""
    return src._index if isinstance(src, _FileSrc) else None


def deferred_sources(text: str, trees: Trees | None = None) -> Callable[[int], Src]:
    """Source maps of the documents of `text`, worked out on first use, all from
    one parse; `trees` as for load()."""
    positions = _Positions(text, trees)
    return lambda index: _FileSrc(positions, index)
