"""YAML documents with a source map: every value keeps its file position.

PyYAML's loaders drop positions and silently keep the last of two duplicate
keys; a lost value in a capacity plan is a real hazard, so we compose the node
graph with libyaml (fast) and build plain values ourselves, recording where
each value and each mapping key stands, refusing duplicates, unknown tags and
alias bombs (https://en.wikipedia.org/wiki/Billion_laughs_attack).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

# libyaml is ~10x faster; fall back to the pure-Python parser if PyYAML lacks it.
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_MERGE = "tag:yaml.org,2002:merge"
_CONSTRUCTOR = SafeConstructor()
# Aliases may legitimately repeat a rack or server template many times; an
# expansion far beyond what was written is an attack, refused before building.
_EXPANSION_FACTOR = 100
_EXPANSION_SLACK = 100_000

Path_ = Sequence[str | int]


@dataclass(frozen=True, slots=True)
class Src:
    """Where a value stands; mappings also know where each key stands."""

    line: int
    column: int
    children: dict[str, Src] | list[Src] | None = None
    keys: dict[str, tuple[int, int]] | None = None

    def child(self, step: str | int) -> Src | None:
        if isinstance(self.children, dict) and isinstance(step, str):
            return self.children.get(step)
        if isinstance(self.children, list) and isinstance(step, int):
            return self.children[step] if 0 <= step < len(self.children) else None
        return None

    def locate(self, path: Path_, *, key: bool = True) -> tuple[int, int]:
        """Position of `path`: its key (for mapping fields) or its value.

        Stops at the deepest part of the path that exists, so a missing field
        points at the mapping that should have held it.
        """
        node: Src = self
        pos = (self.line, self.column)
        for i, step in enumerate(path):
            nxt = node.child(step)
            if nxt is None:
                return pos
            last = i == len(path) - 1
            if key and last and node.keys is not None and isinstance(step, str):
                return node.keys[step]
            node, pos = nxt, (nxt.line, nxt.column)
        return pos


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


@dataclass(frozen=True, slots=True)
class Document:
    value: Any
    src: Src


class YamlProblem(Exception):
    """Input that cannot be read as YAML; 1-based position."""

    def __init__(self, rule: str, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.rule, self.line, self.column, self.message = rule, line, column, message


def _pos(node: Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _problem(rule: str, node: Node, message: str) -> YamlProblem:
    return YamlProblem(rule, *_pos(node), message)


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
            "schema.encoding",
            line,
            column,
            f"not UTF-8: byte 0x{data[exc.start]:02x} cannot be decoded",
        ) from None


def _expanded_size(node: Node, sizes: dict[int, int], busy: set[int]) -> int:
    """Nodes the document would have with every alias expanded (memoised)."""
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in busy:
        raise _problem("schema.yaml", node, "recursive alias: a node contains itself")
    busy.add(key)
    total = 1
    if isinstance(node, SequenceNode):
        total += sum(_expanded_size(item, sizes, busy) for item in node.value)
    elif isinstance(node, MappingNode):
        for k, v in node.value:
            total += _expanded_size(k, sizes, busy) + _expanded_size(v, sizes, busy)
    busy.discard(key)
    sizes[key] = total
    return total


def _check_expansion(root: Node) -> None:
    sizes: dict[int, int] = {}
    expanded = _expanded_size(root, sizes, set())
    written = len(sizes)
    if expanded > _EXPANSION_FACTOR * written + _EXPANSION_SLACK:
        raise _problem(
            "schema.alias-bomb",
            root,
            f"aliases expand {written} written nodes to {expanded}: refused as an alias bomb",
        )


def _scalar(node: ScalarNode) -> Any:
    build = SafeConstructor.yaml_constructors.get(node.tag)
    if build is None or node.tag == _MAP or node.tag == _SEQ:
        raise _problem("schema.yaml", node, f"unsupported YAML tag {node.tag}")
    try:
        value = build(_CONSTRUCTOR, node)
    except (ValueError, yaml.YAMLError) as exc:
        raise _problem("schema.yaml", node, f"bad {node.tag.rsplit(':', 1)[-1]}: {exc}") from None
    return WrittenFloat(value, node.value) if type(value) is float else value


def _build(node: Node) -> tuple[Any, Src]:
    if isinstance(node, ScalarNode):
        return _scalar(node), Src(*_pos(node))
    if isinstance(node, SequenceNode):
        if node.tag != _SEQ:
            raise _problem("schema.yaml", node, f"unsupported YAML tag {node.tag}")
        built = [_build(item) for item in node.value]
        return [v for v, _ in built], Src(*_pos(node), children=[s for _, s in built])
    if isinstance(node, MappingNode):
        return _mapping(node)
    raise _problem("schema.yaml", node, "unsupported YAML node")  # pragma: no cover


def _merge_sources(node: Node) -> list[MappingNode]:
    """The mappings a `<<` key merges in, highest priority first (YAML merge spec)."""
    if isinstance(node, MappingNode):
        return [node]
    if isinstance(node, SequenceNode) and all(isinstance(n, MappingNode) for n in node.value):
        return list(node.value)
    raise _problem("schema.yaml", node, "`<<` must merge a mapping or a list of mappings")


def _mapping(node: MappingNode) -> tuple[dict[str, Any], Src]:
    if node.tag != _MAP:
        raise _problem("schema.yaml", node, f"unsupported YAML tag {node.tag}")
    values: dict[str, Any] = {}
    children: dict[str, Src] = {}
    keys: dict[str, tuple[int, int]] = {}
    merged: list[MappingNode] = []
    for key_node, value_node in node.value:
        if key_node.tag == _MERGE:
            merged.extend(_merge_sources(value_node))
            continue
        if not isinstance(key_node, ScalarNode):
            raise _problem("schema.yaml", key_node, "mapping keys must be plain names")
        # The key's own text: YAML 1.1 would read `on:` as True and `1:` as 1.
        key = str(key_node.value)
        if key in keys:
            first = keys[key][0]
            raise _problem(
                "schema.duplicate-key", key_node, f"duplicate key '{key}' (first set on line {first})"
            )
        keys[key] = _pos(key_node)
        values[key], children[key] = _build(value_node)
    for source in merged:
        extra, extra_src = _mapping(source)
        assert extra_src.children is not None and isinstance(extra_src.children, dict)
        assert extra_src.keys is not None
        for key, value in extra.items():
            if key not in values:
                values[key] = value
                children[key] = extra_src.children[key]
                keys[key] = extra_src.keys[key]
    return values, Src(*_pos(node), children=children, keys=keys)


def _documents(text: str) -> Iterator[Node]:
    try:
        yield from yaml.compose_all(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        raise YamlProblem("schema.yaml", line, column, f"invalid YAML: {message}") from None
    except yaml.YAMLError as exc:
        raise YamlProblem("schema.yaml", 1, 1, f"invalid YAML: {exc}") from None


def _is_empty(node: Node) -> bool:
    # `---` alone, `~` and `null` all say: nothing here.
    return isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:null"


def parse(text: str) -> list[Document]:
    """All documents of a YAML text; raises YamlProblem on the first problem."""
    docs: list[Document] = []
    # Only an alias (`*name`) can make a node graph larger than its text; the
    # expansion count costs a fifth of the load, so skip it when there is none.
    may_alias = "*" in text
    for root in _documents(text):
        if root is None or _is_empty(root):  # an empty document, e.g. after a last `---`
            continue
        try:
            if may_alias:
                _check_expansion(root)
            value, src = _build(root)
        except RecursionError:
            raise _problem("schema.yaml", root, "nesting too deep") from None
        docs.append(Document(value, src))
    return docs


def read(path: Path) -> list[Document]:
    return parse(decode(path.read_bytes()))
