"""YAML documents with a source map: every value keeps its file position.

PyYAML's loaders drop positions and silently keep the last of two duplicate
keys; a lost value in a capacity plan is a real hazard. So we read libyaml's
event stream (no node graph held in memory) and build plain values ourselves,
recording where each value and each mapping key stands, refusing duplicates,
unknown tags and alias bombs
(https://en.wikipedia.org/wiki/Billion_laughs_attack). That event parser is the
authority for every value, error and position.

Reading a large file that way costs seconds, and most positions are never
needed. So `read` first tries a fast path (checker.source.fastpath): it
gives the event parser's exact values or refuses the file, and its source maps
give, node by node when asked for, the positions the event parser would.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from checker.core.builtin import (
    SCHEMA_ALIAS_BOMB,
    SCHEMA_DUPLICATE_KEY,
    SCHEMA_ENCODING,
    SCHEMA_LIMIT,
    SCHEMA_YAML,
)
from checker.core.errors import clip, shown_value

# libyaml is ~10x faster; fall back to the pure-Python parser if PyYAML lacks it.
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _libyaml_version() -> str:
    """libyaml's version where PyYAML is built with it ("none" where not)."""
    if not getattr(yaml, "__with_libyaml__", False):
        return "none"
    from yaml import _yaml

    return str(_yaml.get_version_string())


LIBYAML_VERSION = _libyaml_version()
PYYAML_VERSION: str = yaml.__version__

_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_MERGE = "tag:yaml.org,2002:merge"
_CONSTRUCTOR = SafeConstructor()
# Aliases may legitimately repeat a rack or server template many times; an
# expansion far beyond what was written is an attack, refused before building.
_EXPANSION_FACTOR = 100
_EXPANSION_SLACK = 100_000
# Keys one mapping may hold. No inventory, rule or knowledge mapping needs more
# than a server's few dozen fields (the largest in this repository has 19); a
# million unknown keys once took 2.2 GB of validation errors (issue 17).
MAX_KEYS = 1_000
TOO_MANY_KEYS = f"a mapping of more than {MAX_KEYS:,} keys: refused (no inventory needs that many)"
# Levels of nesting: an inventory has six or so. libyaml stops flow collections
# at 1,000 levels itself; block ones would run out of Python's stack instead.
MAX_DEPTH = 100
TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep: refused (no inventory needs that many)"

Path_ = Sequence[str | int]


@dataclass(frozen=True, slots=True)
class Src:
    """Where a value stands; mappings also know where each key stands."""

    line: int
    column: int
    # Not in repr: a document's whole tree would be printed with every value.
    children: dict[str, Src] | list[Src] | None = field(default=None, repr=False)
    keys: dict[str, tuple[int, int]] | None = field(default=None, repr=False)

    def child(self, step: str | int) -> Src | None:
        if isinstance(self.children, dict) and isinstance(step, str):
            return self.children.get(step)
        if isinstance(self.children, list) and isinstance(step, int):
            return self.children[step] if 0 <= step < len(self.children) else None
        return None

    def descend(self, *path: str | int) -> Src:
        """The source map of `path`, or of its deepest part that exists."""
        node = self
        for step in path:
            nxt = node.child(step)
            if nxt is None:
                return node
            node = nxt
        return node

    def position(self) -> tuple[int, int]:
        """Where the value itself stands (a lazy map knows without its children)."""
        return self.line, self.column

    def key_position(self, step: str) -> tuple[int, int] | None:
        """Where the key `step` of this mapping stands (None: no such key), as
        `keys` has it (a lazy map may know without working out its children)."""
        keys = self.keys
        return None if keys is None else keys.get(step)

    def locate(self, path: Path_, *, key: bool = True) -> tuple[int, int]:
        """Position of `path`: its key (for mapping fields) or its value.

        Stops at the deepest part of the path that exists, so a missing field
        points at the mapping that should have held it.
        """
        node: Src = self
        pos = self.position()
        for i, step in enumerate(path):
            nxt = node.child(step)
            if nxt is None:
                return pos
            if key and i == len(path) - 1 and isinstance(step, str):
                at = node.key_position(step)  # a lazy map's without its children
                if at is not None:
                    return at
            node, pos = nxt, nxt.position()  # a lazy map places itself without its children
        return pos


class LazySrc(Src):
    """A source map worked out the first time a position is asked for.

    Most values never need their position (only findings and errors do), so a
    fast-parsed file, a merged server and the like defer the work. Subclasses
    say how to compute the map; each computes it at most once.
    """

    __slots__ = ("_node",)
    _node: Src | None

    def __init__(self) -> None:
        object.__setattr__(self, "_node", None)

    def _compute(self) -> Src:
        raise NotImplementedError

    def resolved(self) -> Src:
        node: Src | None = self._node
        if node is None:
            node = self._compute()
            object.__setattr__(self, "_node", node)
        return node

    @property
    def line(self) -> int:
        return self.resolved().line

    @property
    def column(self) -> int:
        return self.resolved().column

    @property
    def children(self) -> dict[str, Src] | list[Src] | None:
        return self.resolved().children

    @property
    def keys(self) -> dict[str, tuple[int, int]] | None:
        return self.resolved().keys

    def descend(self, *path: str | int) -> Src:
        return self.resolved().descend(*path) if self._node is not None else _Descended(self, path)

    # As Src's, but asked of the map worked out, whose own may answer without
    # working out its children (checker.source.fastpath._NodeSrc).
    def position(self) -> tuple[int, int]:
        return self.resolved().position()

    def child(self, step: str | int) -> Src | None:
        return self.resolved().child(step)

    def key_position(self, step: str) -> tuple[int, int] | None:
        return self.resolved().key_position(step)

    def locate(self, path: Path_ = (), *, key: bool = True) -> tuple[int, int]:
        # Nothing below asked for: no map worked out (a document that is a long
        # list is placed from the events alone, fastpath._FileSrc.position).
        return self.resolved().locate(path, key=key) if path else self.position()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(resolved={self._node is not None})"


class _Descended(LazySrc):
    """`base.descend(*path)`, once base is known."""

    __slots__ = ("_base", "_path")
    _base: Src
    _path: tuple[str | int, ...]

    def __init__(self, base: Src, path: tuple[str | int, ...]) -> None:
        super().__init__()
        object.__setattr__(self, "_base", base)
        object.__setattr__(self, "_path", path)

    def _compute(self) -> Src:
        return Src.descend(self._base, *self._path)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_Descended, (self._base, self._path))


class WrittenFloat(float):
    """A float that remembers how it was written: `cuda: 12.10` reads as 12.1,
    and an error that says so must show the `12.10` the user typed."""

    yaml_text: str

    def __new__(cls, value: float, text: str) -> WrittenFloat:
        obj = super().__new__(cls, value)
        obj.yaml_text = text
        return obj

    def __repr__(self) -> str:
        return self.yaml_text

    def __reduce__(self) -> tuple[Any, ...]:
        # Parsed files cross process boundaries; float's own pickling drops the text.
        return (WrittenFloat, (float(self), self.yaml_text))


@dataclass(frozen=True, slots=True)
class Document:
    value: Any
    src: Src


class YamlProblem(Exception):
    """Input that cannot be read as YAML; 1-based position."""

    def __init__(self, rule: str, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.rule, self.line, self.column, self.message = rule, line, column, message


def _pos(event: Any) -> tuple[int, int]:
    return event.start_mark.line + 1, event.start_mark.column + 1


def _problem(rule: str, event: Any, message: str) -> YamlProblem:
    return YamlProblem(rule, *_pos(event), message)


def decode(data: bytes) -> str:
    """UTF-8 text, or a problem pointing at the first bad byte."""
    data = data.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte order mark is not content
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        head = data[: exc.start]
        line = head.count(b"\n") + 1
        # Columns count characters, as everywhere else, not bytes.
        line_head = head[head.rfind(b"\n") + 1 :].decode("utf-8", errors="replace")
        column = len(line_head) + 1
        raise YamlProblem(
            SCHEMA_ENCODING,
            line,
            column,
            f"not UTF-8: byte 0x{data[exc.start]:02x} cannot be decoded",
        ) from None


Built = tuple[Any, Src, int]  # value, source map, node count with aliases expanded


_MEMO = 4096  # distinct scalars and tags a file's builder keeps worked out


class _Builder:
    """Builds values and source maps straight from libyaml's event stream.

    No node graph is kept (it held ~250 MB for 5 MB of YAML). An alias reuses
    the value built for its anchor; nothing here or later mutates values, so
    sharing is safe, and an alias costs O(1) however large its anchor: the
    expansion is counted, not performed, and refused once it is far beyond
    what was written (billion laughs).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.loader = _Loader(text)
        self.anchors: dict[str, Built] = {}
        self.written = 0
        self.expanded = 0
        self.depth = 0
        # Resolving a tag and constructing a scalar are pure functions of the
        # event's tag, implicitness and text: each distinct one is worked out
        # once per file (a file repeats its keys, names and numbers; the values
        # are immutable, and shared as an alias's are), the first _MEMO of them
        # kept (a file of distinct scalars is not held twice).
        self.scalars: dict[tuple[Any, ...], Any] = {}
        self.tags: dict[tuple[Any, ...], str] = {}

    def next(self) -> Any:
        try:
            return self.loader.get_event()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
            message = " ".join(str(p) for p in (exc.context, exc.problem) if p)
            raise YamlProblem(SCHEMA_YAML, line, column, f"invalid YAML: {message}") from None
        except yaml.reader.ReaderError as exc:
            # A character YAML refuses (a raw ESC, say): point at it, and say which.
            head = self.text[: exc.position]
            line, column = head.count("\n") + 1, exc.position - (head.rfind("\n") + 1) + 1
            message = f"invalid YAML: character U+{exc.character:04X} is not allowed ({exc.reason})"
            raise YamlProblem(SCHEMA_YAML, line, column, message) from None
        except yaml.YAMLError as exc:
            raise YamlProblem(SCHEMA_YAML, 1, 1, f"invalid YAML: {' '.join(str(exc).split())}") from None

    def documents(self) -> Iterator[Built]:
        try:
            self.next()  # StreamStartEvent
            while not isinstance(self.next(), yaml.StreamEndEvent):  # DocumentStartEvent
                self.anchors, self.written, self.expanded = {}, 0, 0  # anchors are per document
                root = self.node(self.next())
                self.next()  # DocumentEndEvent
                yield root
        finally:
            self.loader.dispose()

    def node(self, event: Any) -> Built:
        if isinstance(event, yaml.AliasEvent):
            return self.alias(event)
        self.written += 1
        if isinstance(event, yaml.ScalarEvent):
            built: Built = (self.scalar(event), Src(*_pos(event)), 1)
        else:
            if self.depth >= MAX_DEPTH:
                raise _problem(SCHEMA_LIMIT, event, TOO_DEEP)
            self.depth += 1
            sequence = isinstance(event, yaml.SequenceStartEvent)
            built = self.sequence(event) if sequence else self.mapping(event)
            self.depth -= 1
        if event.anchor is not None:
            self.anchors[event.anchor] = built
        return built

    def alias(self, event: Any) -> Built:
        built = self.anchors.get(event.anchor)
        if built is None:
            anchor = clip(event.anchor)
            message = f"alias *{anchor} refers to no complete anchor before it (undefined or recursive)"
            raise _problem(SCHEMA_YAML, event, message)
        self.expanded += built[2]
        if self.expanded > _EXPANSION_FACTOR * self.written + _EXPANSION_SLACK:
            raise _problem(
                SCHEMA_ALIAS_BOMB,
                event,
                f"aliases expand {self.written} written nodes to over {self.expanded}: "
                "refused as an alias bomb",
            )
        return built

    def scalar(self, event: Any) -> Any:
        key = (event.tag, event.implicit, event.value)
        try:
            return self.scalars[key]
        except KeyError:
            value = _scalar(self.loader, event)  # a problem is raised, not kept
            if len(self.scalars) < _MEMO:
                self.scalars[key] = value
            return value

    def tag(self, event: Any, kind: type[Node], value: str | None) -> str:
        key = (kind, event.tag, event.implicit, value)
        try:
            return self.tags[key]
        except KeyError:
            tag = _tag(self.loader, event, kind, value)
            if len(self.tags) < _MEMO:
                self.tags[key] = tag
            return tag

    def check_tag(self, event: Any, kind: type[Node], expected: str) -> None:
        tag = self.tag(event, kind, None)
        if tag != expected:
            raise _problem(SCHEMA_YAML, event, f"unsupported YAML tag {clip(tag)}")

    def sequence(self, start: Any) -> Built:
        self.check_tag(start, SequenceNode, _SEQ)
        values: list[Any] = []
        children: list[Src] = []
        size = 1
        while not isinstance(event := self.next(), yaml.SequenceEndEvent):
            value, src, count = self.node(event)
            values.append(value)
            children.append(src)
            size += count
        return values, Src(*_pos(start), children=children), size

    def mapping(self, start: Any) -> Built:
        self.check_tag(start, MappingNode, _MAP)
        values: dict[str, Any] = {}
        children: dict[str, Src] = {}
        keys: dict[str, tuple[int, int]] = {}
        merged: list[Built] = []
        size = 1
        while not isinstance(key_event := self.next(), yaml.MappingEndEvent):
            if len(keys) + len(merged) >= MAX_KEYS:
                raise _problem(SCHEMA_LIMIT, key_event, TOO_MANY_KEYS)
            key = self.key(key_event)
            value, src, count = self.node(self.next())
            size += 1 + count
            if key is None:
                merged.extend(_merge_sources(value, src, count, key_event))
                continue
            if key in keys:
                raise _problem(
                    SCHEMA_DUPLICATE_KEY,
                    key_event,
                    f"duplicate key '{clip(key)}' (first set on line {keys[key][0]})",
                )
            keys[key], values[key], children[key] = _pos(key_event), value, src
        for extra, extra_src, _ in merged:
            assert isinstance(extra_src.children, dict) and extra_src.keys is not None
            for key, value in extra.items():
                if key not in values:
                    values[key], children[key] = value, extra_src.children[key]
                    keys[key] = extra_src.keys[key]
            if len(keys) > MAX_KEYS:  # merge keys (`<<`) that bring in more than that
                raise _problem(SCHEMA_LIMIT, start, TOO_MANY_KEYS)
        return values, Src(*_pos(start), children=children, keys=keys), size

    def key(self, event: Any) -> str | None:
        """A mapping key's own text, or None for the merge key `<<`."""
        if not isinstance(event, yaml.ScalarEvent):
            raise _problem(SCHEMA_YAML, event, "mapping keys must be plain names")
        self.written += 1
        if self.tag(event, ScalarNode, event.value) == _MERGE:
            return None
        # The key's own text: YAML 1.1 would read `on:` as True and `1:` as 1.
        return str(event.value)


def _tag(loader: Any, event: Any, kind: type[Node], value: str | None) -> str:
    """The event's tag, resolved from its plain text as YAML 1.1 says when implicit."""
    if event.tag not in (None, "!"):
        return str(event.tag)
    return str(loader.resolve(kind, value, event.implicit))


_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_PLAIN_INT = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")


def yaml11_trap(text: str, tag: str) -> str | None:
    """What YAML 1.1 makes of a plain number that YAML 1.2 and people read otherwise
    (`032` is octal 26, `3:50` is base 60, `3_2` is 32), said as a message; None
    for a number written plainly. A leading zero in a rating is a typo far more
    often than octal, so these are refused, not guessed."""
    if tag == _FLOAT_TAG:
        if "_" in text or ":" in text or text.startswith("+"):
            text, shown = clip(text), clip(text.lstrip("+").replace("_", ""))
            return f"{text} is a YAML 1.1 spelling of a number; write it plainly (e.g. {shown}), or quote it"
        return None
    if tag != _INT_TAG or _PLAIN_INT.match(text):
        return None
    body = text.lstrip("+-").replace("_", "")
    sign = "-" if text.startswith("-") else ""
    try:
        number = SafeConstructor.construct_yaml_int(_CONSTRUCTOR, ScalarNode(tag, text))
    except ValueError:  # over Python's 4,300 decimal digits (CVE-2020-10735)
        return f"{clip(text)} is no number YAML 1.1 reads; write it plainly, or quote it"
    # Shown clipped: a number of a million digits is neither printed back nor
    # written out in decimal, which Python refuses past 4,300 digits.
    value, text = shown_value(number), clip(text)
    if ":" in body:
        return f"{text} is base 60 in YAML 1.1 ({value}); write {value}, or quote it if it is not a number"
    if body[:2].lower() in ("0x", "0b"):
        base = "hexadecimal" if body[1] in "xX" else "binary"
        return f"{text} is {base} in YAML 1.1 ({value}); write {value}"
    if body[:1] == "0" and len(body) > 1:
        return f"{text} is octal {value} in YAML 1.1; write {sign}{clip(body.lstrip('0') or '0')}"
    if "_" in text:
        return f"{text} is {value} in YAML 1.1 (underscores are dropped); write {value}"
    return f"{text}: a leading + is YAML 1.1 only; write {value}"


def _scalar(loader: Any, event: Any) -> Any:
    tag = _tag(loader, event, ScalarNode, event.value)
    build = SafeConstructor.yaml_constructors.get(tag)
    if build is None or tag in (_MAP, _SEQ):
        raise _problem(SCHEMA_YAML, event, f"unsupported YAML tag {clip(tag)}")
    if event.implicit[0] and event.tag in (None, "!") and tag in (_INT_TAG, _FLOAT_TAG):
        trap = yaml11_trap(event.value, tag)
        if trap is not None:
            raise _problem(SCHEMA_YAML, event, trap)
    node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
    try:
        value = build(_CONSTRUCTOR, node)
    except (ValueError, yaml.YAMLError) as exc:
        raise _problem(SCHEMA_YAML, event, f"bad {clip(tag.rsplit(':', 1)[-1])}: {clip(str(exc))}") from None
    return WrittenFloat(value, event.value) if type(value) is float else value


def _merge_sources(value: Any, src: Src, count: int, at: Any) -> list[Built]:
    """The mappings a `<<` key merges in, highest priority first (YAML merge spec)."""
    if isinstance(value, dict):
        return [(value, src, count)]
    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        assert isinstance(src.children, list)
        return [(v, s, 1) for v, s in zip(value, src.children, strict=True)]
    raise _problem(SCHEMA_YAML, at, "`<<` must merge a mapping or a list of mappings")


def _is_empty(value: Any, src: Src) -> bool:
    # `---` alone, `~` and `null` all say: nothing here.
    return value is None and src.children is None


def parse(text: str) -> list[Document]:
    """All documents of a YAML text; raises YamlProblem on the first problem."""
    docs: list[Document] = []
    try:
        for value, src, _ in _Builder(text).documents():
            if not _is_empty(value, src):  # an empty document, e.g. after a last `---`
                docs.append(Document(value, src))
    except RecursionError:
        raise YamlProblem(SCHEMA_YAML, 1, 1, "nesting too deep") from None
    return docs


_STARTS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_ENDS = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def root_position(text: str, index: int) -> tuple[int, int] | None:
    """Where the `index`-th document of `text` that is a mapping or a list starts,
    as `parse` places it, from libyaml's events alone: nothing is built, so a
    document that is a list of a million items is placed in constant memory.
    None when there is no such document or the events stop at an error."""
    loader = _Loader(text)
    seen, depth = 0, 0
    try:
        while not isinstance(event := loader.get_event(), yaml.StreamEndEvent):
            if isinstance(event, _STARTS):
                if depth == 0:
                    if seen == index:
                        return _pos(event)
                    seen += 1
                depth += 1
            elif isinstance(event, _ENDS):
                depth -= 1
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()
    return None


# ---------------------------------------------------------------- positions inside a scalar
Segment = tuple[int, int, str]  # file line, file column, raw text


def _scalar_lines(text: list[str], line: int, column: int) -> tuple[list[list[Segment]], str]:
    """The lines of a scalar's value as YAML hands them over, each made of the
    raw file segments it was folded from, and the scalar's quote character.
    Literal blocks (`|`) keep lines; plain, quoted and folded (`>`) scalars
    join lines with a space, and a blank line breaks them."""
    raw = text[line - 1][column - 1 :] if line <= len(text) else ""
    key_indent = len(text[line - 1]) - len(text[line - 1].lstrip()) if line <= len(text) else 0
    quote = raw[:1] if raw[:1] in ("'", '"') else ""
    literal = raw[:1] == "|"
    rows: list[Segment] = []
    if raw[:1] not in ("|", ">"):
        rows.append((line, column + len(quote), raw[len(quote) :]))
    indent = None
    for number in range(line + 1, len(text) + 1):
        body = text[number - 1]
        lead = len(body) - len(body.lstrip())
        if body.strip() and lead <= key_indent:
            break
        indent = lead if indent is None and body.strip() else indent
        rows.append((number, (indent or lead) + 1, body[indent or lead :].rstrip()))
    if literal:
        return [[row] for row in rows], quote
    lines: list[list[Segment]] = [[]]
    for row in rows:
        if row[2].strip():
            lines[-1].append(row)
        elif lines[-1]:
            lines.append([])
    return lines, quote


# Characters of the raw text after a backslash in a double-quoted scalar.
_ESCAPE_WIDTH = {"x": 4, "u": 6, "U": 10}


def _raw_width(body: str, index: int, quote: str) -> int:
    """Raw characters that make the one value character starting at body[index]."""
    if quote == "'" and body.startswith("''", index):
        return 2
    if quote == '"' and body[index] == "\\" and index + 1 < len(body):
        return _ESCAPE_WIDTH.get(body[index + 1], 2)
    return 1


def _raw_offset(body: str, chars: int, quote: str) -> int | None:
    """Raw index of value character `chars` in the segment, or None past its end."""
    index = 0
    for _ in range(chars):
        if index >= len(body):
            return None
        index += _raw_width(body, index, quote)
    return index if index <= len(body) else None


def _value_length(body: str, quote: str) -> int:
    count = index = 0
    while index < len(body):
        index += _raw_width(body, index, quote)
        count += 1
    return count


def scalar_position(text: list[str], start: tuple[int, int], offset: tuple[int, int]) -> tuple[int, int]:
    """File position of (line, column) inside the value of the scalar at `start`:
    through quotes, escapes, folded and literal lines. `text` is the file's lines."""
    lines, quote = _scalar_lines(text, *start)
    line, column = offset
    if not 1 <= line <= len(lines):
        return start
    remaining = column - 1
    for seg_line, seg_col, body in lines[line - 1]:
        raw = _raw_offset(body, remaining, quote)
        if raw is not None:
            return seg_line, seg_col + raw
        remaining -= _value_length(body, quote) + 1  # folding joined the lines with one space
    return start
