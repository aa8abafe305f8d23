"""The YAML source map: values with positions, refusals (duplicates, tags, alias bombs, bad bytes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.source import parse as source
from checker.source import reader
from checker.source.parse import YamlProblem, decode, parse

TEXT = """\
kind: Facility
name: f1
racks:
  - name: R01
    feeds:
      - {name: A, amps: 32}
"""


def test_positions_of_keys_and_values() -> None:
    (doc,) = parse(TEXT)
    assert doc.value["racks"][0]["feeds"][0]["amps"] == 32
    assert (doc.src.line, doc.src.column) == (1, 1)
    assert doc.src.locate(["name"]) == (2, 1)  # a field's key ...
    assert doc.src.locate(["name"], key=False) == (2, 7)  # ... or its value
    assert doc.src.locate(["racks", 0]) == (4, 5)
    assert doc.src.locate(["racks", 0, "feeds", 0, "amps"]) == (6, 19)
    assert doc.src.locate(["racks", 0, "feeds", 0, "amps"], key=False) == (6, 25)


@pytest.mark.parametrize(("path", "expected"), [
    (["racks", 0, "feeds", 0, "voltage"], (6, 9)),  # missing field: the mapping that should hold it
    (["racks", 3], (4, 3)),  # index out of range: the list
    (["power", "it_capacity_kw"], (1, 1)),  # nothing of it exists: the document
    (["name", "deeper"], (2, 7)),  # a scalar has no children: the scalar
])
def test_locate_stops_at_the_deepest_existing_part(path: list[str | int], expected: tuple[int, int]) -> None:
    (doc,) = parse(TEXT)
    assert doc.src.locate(path) == expected


# (id, text, rule, line, column, message)
PROBLEMS: list[tuple[str, str, str, int, int, str]] = [
    ("duplicate-key", "a: 1\nb: 2\na: 3\n", "schema.duplicate-key", 3, 1,
     "duplicate key 'a' (first set on line 1)"),
    ("duplicate-in-flow", "a: {x: 1, x: 2}\n", "schema.duplicate-key", 1, 11,
     "duplicate key 'x' (first set on line 1)"),
    ("duplicate-nested", "a:\n  b:\n    c: 1\n    c: 1\n", "schema.duplicate-key", 4, 5,
     "duplicate key 'c' (first set on line 3)"),
    ("mapping-in-scalar", "a: b: c\n", "schema.yaml", 1, 5,
     "invalid YAML: mapping values are not allowed in this context"),
    ("tab-indent", "a:\n\tb: 1\n", "schema.yaml", 2, 1,
     "invalid YAML: while scanning for the next token found character that cannot start any token"),
    ("bad-indent", "a:\n  - 1\n - 2\n", "schema.yaml", 3, 2,
     "invalid YAML: while parsing a block mapping did not find expected key"),
    ("python-tag", "a: !!python/object/apply:os.system [ls]\n", "schema.yaml", 1, 4,
     "unsupported YAML tag tag:yaml.org,2002:python/object/apply:os.system"),
    ("custom-tag", "a: !Ref b\n", "schema.yaml", 1, 4, "unsupported YAML tag !Ref"),
    ("set-tag", "a: !!set {x, y}\n", "schema.yaml", 1, 4, "unsupported YAML tag tag:yaml.org,2002:set"),
    ("bad-int", "a: !!int lots\n", "schema.yaml", 1, 4,
     "bad int: invalid literal for int() with base 10: 'lots'"),
    ("bad-date", "a: 2027-01-15\nb: 2027-13-01\n", "schema.yaml", 2, 4,
     "bad timestamp: month must be in 1..12"),
    ("complex-key", "? [a, b]\n: 1\n", "schema.yaml", 1, 3, "mapping keys must be plain names"),
    ("merge-a-scalar", "a: &x 1\nb:\n  <<: *x\n", "schema.yaml", 3, 3,
     "`<<` must merge a mapping or a list of mappings"),
    ("recursive-alias", "a: &x\n  b: *x\n", "schema.yaml", 2, 6,
     "alias *x refers to no complete anchor before it (undefined or recursive)"),
    ("undefined-alias", "a: *nope\n", "schema.yaml", 1, 4,
     "alias *nope refers to no complete anchor before it (undefined or recursive)"),
]


@pytest.mark.parametrize(("text", "rule", "line", "column", "message"),
                         [pytest.param(*case[1:], id=case[0]) for case in PROBLEMS])
def test_problems(text: str, rule: str, line: int, column: int, message: str) -> None:
    with pytest.raises(YamlProblem) as exc:
        parse(text)
    got = (exc.value.rule, exc.value.line, exc.value.column, exc.value.message)
    assert got == (rule, line, column, message)


def test_keys_keep_their_text_and_values_are_yaml_typed() -> None:
    """`on:` stays the key 'on' (YAML 1.1 would make it True); values follow the safe schema."""
    (doc,) = parse("on: yes\n1: off\nnull: ~\nd: 2027-01-15\nv: '12.10'\nf: 12.10\n")
    assert doc.value == {"on": True, "1": False, "null": None, "d": doc.value["d"], "v": "12.10", "f": 12.1}
    assert str(doc.value["d"]) == "2027-01-15"
    assert repr(doc.value["f"]) == "12.10"  # a float keeps its written text, for messages


def test_merge_keys() -> None:
    (doc,) = parse("""\
x-base: &base {a: 1, b: 2}
x-more: &more {b: 3, c: 4}
one:
  <<: *base
  b: 20
many:
  <<: [*base, *more]
""")
    assert doc.value["one"] == {"a": 1, "b": 20}  # an explicit key wins over the merged one
    assert doc.value["many"] == {"a": 1, "b": 2, "c": 4}  # earlier mappings in the list win
    # Merged values are found where they are written: in the anchor.
    assert doc.src.locate(["one", "a"], key=False) == (1, 19)
    assert doc.src.locate(["one", "b"], key=False) == (5, 6)
    assert doc.src.locate(["many", "c"], key=False) == (2, 25)


def test_an_alias_may_repeat_a_template_many_times() -> None:
    rows = "".join(f"  - {{<<: *srv, name: s{i}}}\n" for i in range(500))
    template = "x-srv: &srv {rack: R01, u_height: 2, power_w: {max: 1000, typical: 800}}\n"
    (doc,) = parse(f"{template}servers:\n{rows}")
    assert len(doc.value["servers"]) == 500
    assert doc.value["servers"][499] == {"rack": "R01", "u_height": 2,
                                         "power_w": {"max": 1000, "typical": 800}, "name": "s499"}


def bomb(levels: int, width: int) -> str:
    lines = [f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused_from_node_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    """9 levels x 9 aliases: aliases are counted, never expanded; refused at the alias
    that takes the count past 100 x written + 100,000."""
    built = []
    real = source._scalar
    monkeypatch.setattr(source, "_scalar", lambda *a: built.append(1) or real(*a))
    with pytest.raises(YamlProblem) as exc:
        parse(bomb(9, 9))
    assert len(built) <= 9 * 2  # only the scalars as written: 'lol' x 9 (and nothing expanded)
    assert exc.value.rule == "schema.alias-bomb"
    assert exc.value.message.startswith("aliases expand ") and "refused as an alias bomb" in exc.value.message


def test_a_small_alias_tree_is_accepted() -> None:
    (doc,) = parse(bomb(3, 3))
    assert doc.value["l2"] == [[["lol"] * 3] * 3] * 3


def test_documents() -> None:
    docs = parse("a: 1\n---\nb: 2\n...\n---\n- c\n")
    assert [d.value for d in docs] == [{"a": 1}, {"b": 2}, ["c"]]
    assert [(d.src.line, d.src.column) for d in docs] == [(1, 1), (3, 1), (6, 1)]


@pytest.mark.parametrize("text", ["", "\n", "# only a comment\n"])
def test_no_documents(text: str) -> None:
    assert parse(text) == []


@pytest.mark.parametrize("text", ["---\n", "a: 1\n---\n", "---\n# to do\n---\na: 1\n", "--- # c\n",
                                  "---\n...\n---\na: 1\n"])
def test_empty_documents_between_markers_are_dropped(text: str) -> None:
    assert [d.value for d in parse(text)] == ([{"a": 1}] if "a: 1" in text else [])


@pytest.mark.parametrize("text", ["---\n~\n", "---\nnull\n", "---\n!!null\n", "Null\n"])
def test_a_written_null_document_is_empty_however_spelt(text: str) -> None:
    assert parse(text) == []


# ---------------------------------------------------------------- bytes
def test_decode_strips_a_bom() -> None:
    assert decode(b"\xef\xbb\xbfa: 1\n") == "a: 1\n"


@pytest.mark.parametrize(("data", "line", "column", "byte"), [
    (b"a: 1\nb: 2\nc: \xff\n", 3, 4, "0xff"),
    (b"a: 1\n\xc3\x28\n", 2, 1, "0xc3"),  # a truncated two-byte sequence
    (b"\xfc", 1, 1, "0xfc"),
])
def test_decode_points_at_the_first_bad_byte(data: bytes, line: int, column: int, byte: str) -> None:
    with pytest.raises(YamlProblem) as exc:
        decode(data)
    assert (exc.value.rule, exc.value.line, exc.value.column) == ("schema.encoding", line, column)
    assert exc.value.message == f"not UTF-8: byte {byte} cannot be decoded"


@pytest.mark.parametrize(("data", "line", "column"), [
    ("location: Zürich ".encode() + b"\xff\n", 1, 18),  # 17 characters precede the bad byte (18 bytes)
    ("a: 1\nb: 日本 ".encode() + b"\xff\n", 2, 7),  # 3-byte characters count once
    pytest.param(b"\xef\xbb\xbfa: \xff\n", 1, 4, id="bom"),  # a BOM is no character
    pytest.param(b"\xef\xbb\xbfa: 1\nb: \xff\n", 2, 4, id="bom-second-line"),
])
def test_decode_column_counts_characters(data: bytes, line: int, column: int) -> None:
    with pytest.raises(YamlProblem) as exc:
        decode(data)
    assert (exc.value.line, exc.value.column, exc.value.message) == (
        line, column, "not UTF-8: byte 0xff cannot be decoded")


def test_read_a_file(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_bytes("name: Zürich\n".encode())
    (doc,) = reader.read(path)
    assert doc.value == {"name": "Zürich"}


@pytest.mark.parametrize(
    ("lines", "offset", "expected"),
    [
        (["when: a > 1"], (1, 5), (1, 11)),  # plain
        (["when: 'a > 1'"], (1, 5), (1, 12)),  # single-quoted
        (["when: 'x == ''y'' and z'"], (1, 14), (1, 23)),  # '' is one character
        (['when: "x == \\"y\\" and z"'], (1, 14), (1, 23)),  # \" is one character
        (['when: "\\x41 and z"'], (1, 7), (1, 17)),  # \xNN is one character
        (["when: >-", "  a >", "  1"], (1, 5), (3, 3)),  # folded: lines joined by a space
        (["when: |-", "  a >", "  1"], (2, 1), (3, 3)),  # literal: lines kept
        (["when: >-", "  a", "", "  b"], (2, 1), (4, 3)),  # a blank line breaks a folded scalar
        (["when: a > 1"], (9, 1), (1, 7)),  # beyond the value: the value's start
    ],
)
def test_scalar_position_maps_value_offsets_back_to_the_file(
    lines: list[str], offset: tuple[int, int], expected: tuple[int, int]
) -> None:
    assert source.scalar_position(lines, (1, 7), offset) == expected


def _typed(value: object) -> object:
    """A value with the type of every part (1, 1.0 and True are equal in Python)."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value), value, getattr(value, "yaml_text", None))


# Each scalar plain, quoted, as a key and in a flow list, twice: the second of
# each is a scalar the file has seen (its tag and value worked out once).
REPEATED = "\n".join(
    f"k{i}: {text}\nq{i}: '{text}'\n{text or 'e'}{i}: [{text}, {text}, '{text}']\nr{i}: {text}"
    for i, text in enumerate(["yes", "No", "~", "0", "1.5", "1.50", "-0.0", "0.0", ".inf", "2027-01-15",
                              "2027-01-15 10:00:00", "a b", "null", "-1", "1e3", "1.0e+3"])
) + "\nt: !!str 1\nu: !!str 1\nv: !!binary aGk=\nw: !!binary aGk=\n"


def test_scalars_worked_out_once_per_file_are_what_each_alone_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    once = parse(REPEATED)
    monkeypatch.setattr(source._Builder, "scalar", lambda self, event: source._scalar(self.loader, event))
    monkeypatch.setattr(
        source._Builder, "tag", lambda self, event, kind, value: source._tag(self.loader, event, kind, value)
    )
    each = parse(REPEATED)
    assert [_typed(d.value) for d in once] == [_typed(d.value) for d in each]
    assert once[0].src.locate(["r3"]) == each[0].src.locate(["r3"])


@pytest.mark.parametrize("text", ["a: 012\nb: 012\n", "a: 1_0\nb: [1_0]\n", "a: 2027-02-30\nb: 2027-02-30\n"])
def test_a_scalar_refused_once_is_refused_where_it_is_first(text: str) -> None:
    with pytest.raises(YamlProblem) as problem:
        parse(text)
    assert (problem.value.line, problem.value.column) == (1, 4)
