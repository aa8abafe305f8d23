"""The fast parse: exactly the event parser's values and positions, or a refusal."""

from __future__ import annotations

import datetime as dt
import math
import pickle
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from checker.source import fastpath, reader
from checker.source import parse as source
from checker.source.parse import Document, LazySrc, WrittenFloat, YamlProblem, decode, parse

ROOT = Path(__file__).resolve().parents[2]
YAML_FILES = sorted(
    p
    for folder in (ROOT / "tests", ROOT / "inventories", ROOT / "rules" / "knowledge")
    for p in folder.rglob("*")
    if p.suffix in (".yaml", ".yml") and p.is_file()
)


def same(a: Any, b: Any) -> bool:
    """Equal in type and value, WrittenFloat text included; NaN equals NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, WrittenFloat) and a.yaml_text != b.yaml_text:
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def paths(value: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every path into a value, and one that goes past its end."""
    found = [prefix, (*prefix, "missing")]
    if isinstance(value, dict):
        for k, v in value.items():
            found += paths(v, (*prefix, k))
    elif isinstance(value, list):
        found.append((*prefix, len(value)))
        for i, v in enumerate(value):
            found += paths(v, (*prefix, i))
    return found


def from_tree(docs: list[Document]) -> bool:
    """Whether every position asked of these fast-parsed documents came from rapidyaml's tree
    (vacuously, for a text of empty documents only: `#: yes\n---\n`)."""
    if not docs:
        return True
    positions = {doc.src._positions for doc in docs if isinstance(doc.src, fastpath._FileSrc)}
    return len(positions) == 1 and not positions.pop()._inexact


def assert_equivalent(text: str) -> list[Document] | None:
    """The fast path refuses `text`, or gives the event parser's values and positions."""
    fast = fastpath.load(text)
    if fast is None:
        return None
    eager = parse(text)  # must not raise: the fast path accepted the text
    assert len(fast) == len(eager)
    for lazy_doc, eager_doc in zip(fast, eager, strict=True):
        assert same(lazy_doc.value, eager_doc.value), (lazy_doc.value, eager_doc.value)
        assert isinstance(lazy_doc.src, LazySrc)
        for path in paths(eager_doc.value):
            for key in (True, False):
                assert lazy_doc.src.locate(path, key=key) == eager_doc.src.locate(path, key=key), path
            lazy_node, eager_node = lazy_doc.src.descend(*path), eager_doc.src.descend(*path)
            assert (lazy_node.line, lazy_node.column) == (eager_node.line, eager_node.column), path
    return fast


@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_yaml_file_of_the_repository(path: Path) -> None:
    try:
        text = decode(path.read_bytes())
        parse(text)
    except YamlProblem:
        assert fastpath.load(decode(path.read_bytes())) is None  # broken on purpose: refused
        return
    docs = assert_equivalent(text)
    assert docs is None or from_tree(docs)  # no position of ours needs the event parser


def test_most_repository_files_take_the_fast_path() -> None:
    """Else the equivalence test above would prove little."""
    taken = [p for p in YAML_FILES if fastpath.load(decode(p.read_bytes())) is not None]
    assert len(taken) >= len(YAML_FILES) // 2, taken


SERVERS = """\
kind: Servers
facility: bench
rollout_date: 2027-02-01
servers:
  - name: gpu-000001
    rack: R00001
    position: 1
    power_w: {max: 10200, typical: 8400}
    storage: {nvme_tb: 30.7, raid: "1"}
    software: {os: ubuntu-22.04, driver: "535.129.03", cuda: "12.2"}
    support: {vendor: NVIDIA, level: 24x7, until: 2029-12-31}
    network: {nvlink: true, spare: null, note: ~}
    tags: [a, "b", 'yes', 2027-03-01]
"""


def test_a_servers_file_takes_the_fast_path_with_yaml_1_1_values() -> None:
    docs = assert_equivalent(SERVERS)
    assert docs is not None
    value = docs[0].value
    assert value["rollout_date"] == dt.date(2027, 2, 1)
    server = value["servers"][0]
    assert server["storage"] == {"nvme_tb": 30.7, "raid": "1"}
    assert server["storage"]["nvme_tb"].yaml_text == "30.7"
    assert server["software"]["cuda"] == "12.2"
    assert server["support"]["until"] == dt.date(2029, 12, 31)
    assert server["network"] == {"nvlink": True, "spare": None, "note": None}
    assert server["tags"] == ["a", "b", "yes", dt.date(2027, 3, 1)]


# Plain scalars YAML 1.1 types (https://yaml.org/type/), each alone and quoted.
SCALARS = [
    "yes", "No", "ON", "off", "y", "n", "true", "True", "FALSE", "null", "Null", "NULL", "~", "",
    "0", "-0", "+1", "012", "0o17", "0x1F", "0b101", "1_000", "1:30", "190:20:30.15", "1.5", "12.10",
    "1.0", "0.5", ".5", "1.", "-.5", "1e5", "1.0e+5", "1.5E-3", ".inf", "-.Inf", ".NaN", "nan", "inf",
    "Infinity", "2027-01-15", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2027-13-01",
    "=", "00", "1.2.3", "535.129.03", "24x7", "v1.", "R&D", "50%", "a b", "it's", "x #y", ":x", "x:y",
    "12345678901234567890",
]


@pytest.mark.parametrize("scalar", SCALARS)
@pytest.mark.parametrize("style", ["plain", "single", "double", "flow", "key"])
def test_yaml_1_1_scalars(scalar: str, style: str) -> None:
    text = {
        "plain": f"a: {scalar}\nb: [x]\n",
        "single": "a: '{}'\n".format(scalar.replace("'", "''")),
        "double": f'a: "{scalar}"\n',
        "flow": f"a: [{scalar}, x]\n",
        "key": f"{scalar}: 1\n",
    }[style]
    assert_equivalent(text)


@pytest.mark.parametrize("text", [
    "a: 2027-01-15\nb: '2027-01-15'\n",  # the same text plain and quoted
    "a: yes\nb: \"yes\"\n",
    "a: 0x1F\nb: '0x1F'\n",
    "a: '2027-01-15'\nb: \"2027-01-15\"\n",  # quoted only: strings
    "a: 1.\nb: 1.0\n",  # rapidyaml writes both as 1.0
    "a: .5\nb: 0.5\n",
    "a: inf\n",
    "a: 2027-02-30\n",  # not a date: the event parser's error
])
def test_texts_the_fast_path_must_get_right(text: str) -> None:
    assert_equivalent(text)


# (id, text): syntax the fast path leaves to the event parser.
REFUSED = [
    ("anchor", "a: &x 1\nb: *x\n"),
    ("merge", "a: &x {p: 1}\nb:\n  <<: *x\n"),
    ("tag", "a: !!str 1\n"),
    ("custom-tag", "a: !Ref b\n"),
    ("directive", "%YAML 1.1\n---\na: 1\n"),
    ("block-literal", "a: |\n  text\n"),
    ("block-folded", "a: >\n  text\n"),
    ("complex-key", "? [a, b]\n: 1\n"),
    ("escape", 'a: "x\\ty"\n'),
    ("tab", "a:\n\tb: 1\n"),
    ("cr", "a: 1\r\nb: 2\r\n"),
    ("control", "a: x\x1by\n"),
    ("nel", "a: x\x85y\n"),
    ("duplicate", "a: 1\na: 2\n"),
    ("scalar-document", "just text\n"),
    ("bad-date", "a: 2027-13-01\n"),
    ("reserved", "a: @x\n"),
    ("invalid", "a: [1, 2\n"),
    ("mixed-quoting", "a: 2027-01-15\nb: '2027-01-15'\n"),
    ("rewritten-number", "a: 1.\n"),
    ("rewritten-string", "a: inf\n"),
    ("rewritten-key", "inf: 1\n"),
    ("rewritten-negative-key", "-.Inf: 1\n"),
    ("rewritten-in-a-list", "a: [x, .NaN]\n"),
    ("rewritten-in-a-nested-list", "a:\n  - [x, [.nan]]\n"),
    ("rewritten-quoted", "a: '.inf'\n"),  # the same JSON as a plain one: refused too
    ("empty-key", '"": 1\n'),
    ("empty-key-unwritten", "a: 1\n: 2\n"),
    ("comment-in-flow", "a: {x: 1 #c}\n"),
]


@pytest.mark.parametrize(
    "text",
    ["a: x.inf\n", "a: 'x .nan'\n", "inf_x: 1\n", "a: '#x'\n", "a: 'x#'\n", "a: [1, 2] # c\n", "a: ''\n"],
)
def test_rewritten_spellings_inside_longer_texts_are_read(text: str) -> None:
    assert fastpath.load(text) is not None
    assert_equivalent(text)


def test_the_characters_looked_at_are_those_yaml_does_not_print_or_opens_syntax_with() -> None:
    """_LOOK, written as the class of what it finds, is the complement of what
    YAML 1.1 prints (https://yaml.org/spec/1.1/#id868518) but for \\n and the
    characters that open syntax left to the event parser: every code point."""
    opening = fastpath._NODE_START | fastpath._ALWAYS | {"<"}
    printable = re.compile("[\n\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        looked = char in opening or not printable.match(char) or char in "\x85\u2028\u2029\ufeff"
        assert (fastpath._LOOK.match(char) is not None) == looked, hex(code)


@pytest.mark.parametrize("code", range(128))
def test_an_ascii_text_is_looked_through_when_it_holds_a_character_look_finds(code: int) -> None:
    """The shortcut for ASCII texts (a text with none of _LOOK's characters needs no
    event parser) keeps each character _LOOK finds: at a node's start, a text with
    it is refused as before, and one with only the others is read."""
    char = chr(code)
    kept = bytes([code]).translate(None, fastpath._UNLOOKED)
    assert (kept == char.encode()) == (fastpath._LOOK.match(char) is not None)
    needs = fastpath._needs_events(f"a: [x, {char}y]\n")
    looked = fastpath._LOOK.match(char) is not None
    assert needs == (char in fastpath._NODE_START or (looked and char != "<"))


@pytest.mark.parametrize("text", [pytest.param(t, id=i) for i, t in REFUSED])
def test_refused(text: str) -> None:
    assert fastpath.load(text) is None


@pytest.mark.parametrize("text", ["a: [1, 2\n", "a: b: c\n", "a: 'x\n"])
def test_rapidyaml_errors_print_nothing(text: str, capfd: pytest.CaptureFixture[str]) -> None:
    """rapidyaml prints its errors on file descriptor 2; the event parser reports them."""
    assert fastpath.load(text) is None
    assert capfd.readouterr() == ("", "")


def test_without_rapidyaml_the_event_parser_reads_every_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(fastpath, "ryml", None)
    path = tmp_path / "servers.yaml"
    path.write_text(SERVERS)
    assert fastpath.load(SERVERS) is None
    (doc,) = reader.read(path)
    assert not isinstance(doc.src, LazySrc)
    assert same(doc.value, parse(SERVERS)[0].value)


def test_positions_come_from_rapidyaml_not_the_event_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(fastpath, "parse", lambda text: calls.append(text) or parse(text))
    text = SERVERS + "---\nkind: Workloads\n"
    docs = fastpath.load(text)
    assert docs is not None and len(docs) == 2
    merged = docs[0].src.descend("servers", 0)
    assert merged.locate(["support", "until"], key=False) == (11, 51)
    assert merged.locate(["tags", 3], key=False) == (13, 27)
    assert docs[1].src.locate(["kind"]) == (15, 1)
    assert calls == []


# Each of libyaml's marks (what the event parser records), as rapidyaml's tree must give it.
MARKS = [
    ("block-mapping", "a:\n  b: 1\n  c: x\n"),
    ("flow-mapping", "a: {b: 1, c: {d: [x]}}\n"),
    ("block-sequence", "a:\n  - 1\n  - x\n"),
    ("sequence-at-key-indentation", "a:\n- 1\n- b: 2\n  c: [3]\nd: 4\n"),
    ("flow-sequence", "a: [1, [2, 3], {b: c}]\n"),
    ("nested-block-sequences", "- - a\n  - b\n- - c\n"),
    ("sequence-of-mappings", "- a: 1\n  b: 2\n- {c: 3}\n- [4]\n"),
    ("quoted", "'a': \"b\"\n\"c d\": 'it''s'\n'e''f': ['g', \"\"]\n"),
    ("empty-values", "a:\nb:   # note\nc: {d: , e, f: }\ng:\n  h:\n"),
    ("empty-quoted", "a: ''\nb: \"\"\n"),
    ("comments-between", "a:   # note\n\n  # more\n  - 1\nb: # c\n  {c: 1}\n"),
    ("multi-line-scalars", "a: one\n  two\nb: \"three\n  four\"\nc: [five\n  six]\n"),
    ("non-ascii", "é: ü\nñ: [ß, \"ç\", {ø: 日本}]\n日本: 語\n"),
    ("wide", "a: \U0001f600 x\nb: [\U0001f600, y]\n"),
    ("documents", "---\na: 1\n---\n# x\n- b\n...\n--- {c: 2}\n--- [d]\n"),
    ("flow-over-lines", "a: [1,\n  2, {b: 3,\n  c: 4}]\n"),
    ("spaces-before-colon", "a : 1\nb  : [2]\n"),
    ("empty-items", "- a\n-\n- b\n-   # note\n"),
    ("dash-on-an-earlier-line", "-\n  - a\n- # note\n\n  # more\n  b: 1\n"),
    ("empty-collections-in-a-block-sequence", "- []\n- {} # note\n-\n- x\n"),
    ("items-after-collections", "- [a,\n  b]\n-\n- {c: [d, {g: h}], e: }\n-\n- - f\n  -\n-\n"),
    ("items-after-multi-line-scalars", "- a\n  b\n-\n- 'c\n  d'\n-\n"),
    ("sequences-in-documents", "- a\n---\n-\n- []\n...\n---\n- {}\n"),
]


@pytest.mark.parametrize("text", [pytest.param(t, id=i) for i, t in MARKS])
def test_positions_from_the_tree_are_the_event_parsers(text: str) -> None:
    docs = assert_equivalent(text)
    assert docs is not None and from_tree(docs)


@pytest.mark.parametrize(
    "text",
    [
        "a: [[], {}]\n",  # empty collections in a flow sequence
        "[[], 1]\n",
        "a: [b: 1]\n",  # a mapping of one pair in a flow sequence: no `{`
        "---\n---\n- []\n",  # a document after an empty one
    ],
)
def test_positions_the_tree_does_not_give_come_from_the_event_parser(text: str) -> None:
    docs = assert_equivalent(text)
    assert docs is not None and not from_tree(docs)


LONG_LIST = "items:\n" + "".join(f"  - {{a: {i}, b: [x, {i}]}}\n" for i in range(fastpath._ITEMS_WALKED + 8))


ALONG = [*MARKS, ("servers", SERVERS), ("long-list", LONG_LIST)]


@pytest.mark.parametrize("text", [pytest.param(t, id=i) for i, t in ALONG])
def test_a_position_is_found_along_its_path_alone(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A finding on each of 10,000 servers once worked out each server's whole
    map: a position is now found from the tree along its path alone, and it is
    the position the whole map (and the event parser) gives."""
    resolved: list[tuple[str | int, ...]] = []
    resolve = fastpath._Tree.resolve

    def counted(tree: Any, positions: Any, index: int, path: tuple[str | int, ...], node: int) -> Any:
        resolved.append(path)
        return resolve(tree, positions, index, path, node)

    monkeypatch.setattr(fastpath._Tree, "resolve", counted)
    for index, eager in enumerate(parse(text)):
        for path in paths(eager.value):
            for key in (True, False):
                for depth in range(len(path) + 1):
                    fresh = fastpath.load(text)
                    assert fresh is not None
                    start = fresh[index].src.resolved()  # a document's root: worked out at once
                    below = start.descend(*path[:depth])
                    resolved.clear()
                    assert below.locate(path[depth:], key=key) == eager.src.descend(*path[:depth]).locate(
                        path[depth:], key=key
                    ), (path, depth, key)
                    walked = all(not isinstance(s, int) or s < fastpath._ITEMS_WALKED for s in path)
                    if walked and from_tree(fresh):
                        assert resolved == [], (path, depth)  # no map worked out on the way


def test_a_long_list_has_its_map_worked_out_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """rapidyaml finds an item by walking from the first: an item far down a
    long list is found in its list's map, worked out once for all of them."""
    resolved: list[tuple[str | int, ...]] = []
    resolve = fastpath._Tree.resolve
    monkeypatch.setattr(
        fastpath._Tree, "resolve", lambda tree, *args: resolved.append(args[2]) or resolve(tree, *args)
    )
    (doc,) = fastpath.load(LONG_LIST) or []
    (eager,) = parse(LONG_LIST)
    count = fastpath._ITEMS_WALKED + 8
    for i in [*range(count), *range(count)]:
        path = ["items", i, "b", 1]
        assert doc.src.locate(path, key=False) == eager.src.locate(path, key=False)
    assert resolved.count(("items",)) == 1


def test_trees_are_parsed_again_when_another_file_was_asked_for_since() -> None:
    """A run keeps only its last few trees: positions asked again of an older file are the same."""
    texts = [f"a{i}: {{b: {i}}}\nc: [x, {{d: {i}}}]\n" for i in range(fastpath._KEPT_TREES + 2)]
    trees = fastpath.Trees()
    loaded = [fastpath.load(text, trees) or [] for text in texts]
    for docs in loaded + loaded[::-1]:
        assert docs[0].src.locate(["c", 1, "d"]) == (2, 9)
        assert len(trees) <= fastpath._KEPT_TREES
    for i, docs in enumerate(loaded):
        assert docs[0].src.locate([f"a{i}", "b"], key=False) == (1, 9)
    assert len(trees) == fastpath._KEPT_TREES


def test_files_asked_in_turn_get_their_maps_worked_out_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Positions asked of several files in turn would parse their trees again and
    again: after a few parses a file's maps are worked out whole, from one tree."""
    monkeypatch.setattr(fastpath, "_BUILDS_BEFORE_WHOLE", 2)
    monkeypatch.setattr(fastpath, "parse", lambda text: pytest.fail("the event parser ran"))
    texts = [SERVERS.replace("gpu-000001", f"gpu-{i}") + "---\nkind: Workloads\n" for i in range(4)]
    trees = fastpath.Trees()  # one run's
    loaded = [fastpath.load(text, trees) or [] for text in texts]
    servers = [docs[0].src.descend("servers", 0) for docs in loaded]
    eager = parse(SERVERS)[0].src.descend("servers", 0)
    for path in (["rack"], ["power_w", "max"], ["storage", "raid"], ["tags", 2]):
        for server in servers:
            assert server.locate(path, key=False) == eager.locate(path, key=False)
    for docs in loaded:
        assert docs[1].src.locate(["kind"]) == (15, 1)
    positions = [docs[0].src._positions for docs in loaded]
    assert [(p._builds, sorted(p._whole)) for p in positions] == [(3, [0, 1])] * 4


def test_lazy_source_maps_pickle_without_resolving() -> None:
    """Parsed files cross process boundaries (parallel parsing, the cache)."""
    (doc,) = fastpath.load(SERVERS) or []
    copy = pickle.loads(pickle.dumps(doc))
    assert same(copy.value, doc.value)
    assert copy.src.descend("servers", 0).locate(["rack"], key=False) == (6, 11)
    assert isinstance(doc.src.children, dict)
    servers = doc.src.children["servers"]  # a node not worked out yet
    assert isinstance(servers, LazySrc) and servers._node is None
    assert pickle.loads(pickle.dumps(servers)).locate([0, "rack"], key=False) == (6, 11)


# ---------------------------------------------------------------- property
SCALAR = st.one_of(
    st.sampled_from(SCALARS),
    st.text(alphabet="ab01:._-+ ~#'\"eExyYnNtTfF", max_size=8),
    st.text(alphabet="a0:,[]{}&*!|>?%@-# '\"\n", max_size=6),
)
KEY = st.one_of(st.sampled_from(["a", "b", "on", "1", "1.", "~", "inf", "a b", "yes"]), SCALAR)


def _scalar(draw: st.DrawFn, indent: int) -> str:
    text = draw(SCALAR).replace("\n", " ")
    style = draw(st.sampled_from(["plain", "single", "double"]))
    if style == "single":
        text = "'{}'".format(text.replace("'", "''"))
    elif style == "double" and '"' not in text:
        text = f'"{text}"'
    if draw(st.booleans()) and " " in text.strip():
        text = text.replace(" ", "\n" + " " * (indent + 2), 1)  # a scalar over two lines
    return text


def _flow(draw: st.DrawFn, items: list[str], indent: int) -> str:
    """Items of a flow collection, on one line or several, maybe with comments."""
    out = ""
    for i, item in enumerate(items):
        if i:
            multi = draw(st.booleans())
            note = " # c" if multi and draw(st.booleans()) else ""
            out += "," + (f"{note}\n{' ' * (indent + 2)}" if multi else " ")
        out += item
    return out


@st.composite
def documents(draw: st.DrawFn, indent: int = 0, depth: int = 0) -> str:
    """A block mapping or sequence of scalars, flow collections and nested blocks."""
    pad = " " * indent
    lines = []
    mapping = draw(st.booleans())
    for _ in range(draw(st.integers(1, 4))):
        head = f"{pad}{draw(KEY)}:" if mapping else f"{pad}-"
        kinds = ["scalar", "scalar", "empty", "flow", "flow-map", "block"]
        kind = draw(st.sampled_from(kinds if depth < 2 else kinds[:3]))
        if kind == "scalar":
            lines.append(f"{head} {_scalar(draw, indent)}")
        elif kind == "empty":
            lines.append(head)
        elif kind == "flow":
            items = [_scalar(draw, indent) for _ in range(draw(st.integers(0, 3)))]
            lines.append(f"{head} [{_flow(draw, items, indent)}]")
        elif kind == "flow-map":
            count = draw(st.integers(0, 3))
            pairs = [f"{draw(KEY)}: {_scalar(draw, indent)}" for _ in range(count)]
            lines.append(f"{head} {{{_flow(draw, pairs, indent)}}}")
        else:
            lines.append(head)
            # A sequence under a key may sit at the key's own indentation.
            inner = indent + (0 if mapping and draw(st.booleans()) else 2)
            lines.append(draw(documents(inner, depth + 1)))
        if draw(st.booleans()):
            lines[-1] += " # note"
    return "\n".join(lines)


PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def streams(draw: st.DrawFn) -> str:
    """One document, or several between `---` markers."""
    docs = draw(st.lists(documents(), min_size=1, max_size=3))
    return "\n---\n".join(docs) + draw(st.sampled_from(["", "\n", "\n---\n", "\n...\n"]))


# The helpers below read events as the event parser does (checker.source.parse:
# libyaml's scanner where PyYAML has it): PyYAML's pure-Python scanner ends a
# plain scalar at `?` in a flow collection, so it refuses `[0?: ]`, which
# libyaml (and the event parser) reads as a one-pair mapping.
def _events(text: str) -> list[yaml.Event]:
    return list(yaml.parse(text, Loader=source._Loader))


def _after_an_empty_document(text: str) -> bool:
    """Whether a document follows an empty one (`- a\n---\n# only a comment\n---\n- b`):
    where it starts is the event parser's by design (fastpath._Tree.document_start)."""
    events = _events(text)
    starts = [i for i, e in enumerate(events) if isinstance(e, yaml.DocumentStartEvent)]
    empty = [isinstance(events[i + 1], yaml.ScalarEvent) and events[i + 1].value == "" for i in starts]
    return any(empty[i] and i + 1 < len(empty) for i in range(len(empty)))


def _pair_in_flow_sequence(text: str) -> bool:
    """Whether the text holds a one-pair mapping in a flow sequence (`[yes, 0: ]`),
    which a generated scalar ending in `:` writes by accident: its positions are
    the event parser's by design (docs/architecture.md, "Source maps")."""
    flow_sequences: list[bool] = []
    for event in _events(text):
        if isinstance(event, yaml.MappingStartEvent) and flow_sequences and flow_sequences[-1]:
            return True
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            flow_sequences.append(isinstance(event, yaml.SequenceStartEvent) and bool(event.flow_style))
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            flow_sequences.pop()
    return False


@PROPERTY
@given(streams())
@example("- [yes, 0?: ]")  # a plain scalar with `?` in a flow sequence (see _events)
def test_generated_yaml_is_read_exactly_or_refused(text: str) -> None:
    try:
        parse(text)
    except YamlProblem:
        assert fastpath.load(text) is None
        return
    docs = assert_equivalent(text)
    # The tree gave every position asked for.
    assert docs is None or from_tree(docs) or _pair_in_flow_sequence(text) or _after_an_empty_document(text)


@pytest.mark.slow
@settings(PROPERTY, max_examples=3000)
@given(streams())
def test_generated_yaml_is_read_exactly_or_refused_at_length(text: str) -> None:
    test_generated_yaml_is_read_exactly_or_refused.hypothesis.inner_test(text)  # type: ignore[attr-defined]


# ---------------------------------------------------------------- in an audit
def test_an_audit_never_works_out_positions_nobody_points_at(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The benchmark fleet: no finding is in the servers file, so that file, read
    by the fast path, is never read again for positions."""
    from benchmarks.fleet import pod_file, write
    from checker.audit import run_audit
    from checker.decide.config import Config, settings
    from checker.load.build import load

    write(40, tmp_path)
    servers = (tmp_path / pod_file(0)).read_text()
    parsed: list[str] = []
    monkeypatch.setattr(fastpath, "parse", lambda text: parsed.append(text) or parse(text))
    cfg = settings(Config(), None, select=[], ignore=[], fail_on=None, rule_dirs=[])
    result = run_audit([tmp_path], cfg, dt.date(2027, 1, 15))
    assert result.findings and all(not f.file.endswith(pod_file(0)) for f in result.findings)
    assert servers not in parsed
    inv, _ = load([tmp_path])
    assert inv.entities()["server/gpu-000003"].line == 4 + 3 * 14 + 1  # worked out when asked
    assert servers not in parsed  # from rapidyaml's tree


def test_findings_in_a_fast_parsed_file_never_run_the_event_parser(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, parsed: list[str]
) -> None:
    """Findings on every server of a fast-parsed file: their positions come from
    rapidyaml's tree (each file is parsed once, the event parser never runs), and
    they are positions the event parser gives."""
    from benchmarks.fleet import write
    from checker.audit import run_audit
    from checker.decide.config import Config, settings

    files = write(40, tmp_path)
    pod = files[-1]
    pod.write_text(pod.read_text().replace("memory_gb: 2048", "memory_gb: 1024"))  # too little for 8 GPUs
    events: list[str] = []
    monkeypatch.setattr(fastpath, "parse", lambda text: events.append(text) or parse(text))
    monkeypatch.setattr(source, "parse", lambda text: events.append(text) or parse(text))
    cfg = settings(Config(), None, select=[], ignore=[], fail_on=None, rule_dirs=[])
    result = run_audit([tmp_path], cfg, dt.date(2027, 1, 15))
    in_servers = [f for f in result.findings if f.file == str(pod)]
    assert len(in_servers) == 40
    assert all(parsed.count(p.name) == 1 for p in files)
    fast = {p.read_text() for p in files if fastpath.load(p.read_text()) is not None}
    assert str(pod) in {str(p) for p in files if p.read_text() in fast}
    assert not fast & set(events)  # (the facility file has anchors: the event parser reads it)
    monkeypatch.undo()
    for finding in in_servers:
        (doc,) = parse(Path(finding.file).read_text())
        server = next(i for i, s in enumerate(doc.value["servers"]) if finding.entity.endswith(s["name"]))
        assert (finding.line, finding.column) == doc.src.locate(["servers", server, "memory_gb"]), finding


@pytest.mark.parametrize(
    ("text", "likely"),
    [
        ("kind: Facility\nname: f1\n", True),
        ("x: &a 1\ny: *a\n", False),
        ("a: !!str 1\n", False),
        ("<<: {a: 1}\n", False),
        ("a:\tb\n", False),
        ("a: b\r\n", False),
        ('a: "x\\ty"\n', False),
    ],
)
def test_where_a_file_is_parsed_is_decided_by_the_marks_the_fast_path_leaves(text: str, likely: bool) -> None:
    assert fastpath.may_take(text.encode()) is likely
    if not likely:
        assert fastpath.load(text) is None  # the event parser reads it, so a worker may


def test_a_scalars_offset_comes_from_its_address_in_the_text_without_a_copy() -> None:
    import numpy
    import ryml

    buffer = bytearray("a: héllo\nb: [1, 'x']\nc: ''\n".encode())
    tree = ryml.parse_in_place(buffer)
    views = [tree.val(n) for n in range(tree.size()) if tree.has_val(n) and tree.val(n) is not None]
    assert len(views) == 4
    # numpy.frombuffer never copies: the address numpy.asarray gives is the buffer's own.
    framed = [numpy.frombuffer(v, dtype=numpy.uint8).__array_interface__["data"][0] for v in views]
    assert [fastpath._address(v) for v in views] == framed
    base = fastpath._address(memoryview(buffer))
    assert [fastpath._address(v) - base for v in views] == [3, 14, 18, 26]


class _Uncounted(str):
    def count(self, *args: object) -> int:  # type: ignore[override]
        raise AssertionError("a small text's nodes were counted")


def test_only_a_large_text_has_its_nodes_counted() -> None:
    """A node every few bytes is refused only in a text of a megabyte or more
    (_DENSE_MIN_BYTES): a smaller one is not read through twice to count them."""
    assert not fastpath._dense(_Uncounted("- 1\n" * 1000))
    dense = "- 1\n" * 300_000
    assert fastpath._dense(dense) and fastpath._dense(dense.encode())
    assert not fastpath._dense("x" * 2_000_000) and not fastpath._dense(b"x" * 2_000_000)
