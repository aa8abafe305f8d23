"""The per-file cache: its payload format, and entries that are never trusted."""

from __future__ import annotations

import datetime as dt
import marshal
import os
import time
from pathlib import Path
from typing import Any

import pytest

from checker.load import cache
from checker.load.cache import BadEntry, Cache, Unencodable, content_key, decode, encode, open_cache
from checker.source import fastpath
from checker.source import parse as source
from checker.source.parse import Document, Src, WrittenFloat, YamlProblem, parse

TEXT = """\
x-psu: &psu {count: 6, rating_w: 3300}
kind: Servers
facility: f1
servers:
  - name: s1
    psu: *psu
    power_w: {max: 1.0e+4, typical: 8400}
    storage: {nvme_tb: 30.70}
    support: {until: 2029-12-31}
    seen: 2026-11-30T08:00:00+01:00
    blob: !!binary aGk=
    note: null
    nvlink: true
  - <<: *psu
    name: s2
---
kind: Workloads
workloads: []
"""


def test_documents_come_back_equal_with_their_source_maps() -> None:
    docs = parse(TEXT)
    back = decode(encode(docs))
    assert back == docs
    assert [d.src for d in back] == [d.src for d in docs]
    server = back[0].value["servers"][0]
    # What the user typed survives: an error message quotes `30.70`, not 30.7.
    assert repr(server["storage"]["nvme_tb"]) == "30.70"
    assert type(server["storage"]["nvme_tb"]) is WrittenFloat
    assert server["support"]["until"] == dt.date(2029, 12, 31)
    assert server["seen"] == dt.datetime(2026, 11, 30, 7, 0, tzinfo=dt.timezone.utc)
    assert server["blob"] == b"hi"
    assert back[0].src.locate(["servers", 1, "count"]) == docs[0].src.locate(["servers", 1, "count"])


FAST = """\
kind: Servers
facility: f1
servers:
  - name: s1
    power_w: {max: 10200, typical: 8400}
    storage: {nvme_tb: 30.70}
    support: {until: 2029-12-31}
"""


def test_a_fast_parsed_file_stores_values_only_and_its_positions_come_from_the_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    docs = fastpath.load(FAST)
    assert docs is not None and fastpath.deferred_index(docs[0].src) == 0
    payload = encode(docs)
    assert marshal.loads(payload)[1][0][1] == 0  # its index, no source map
    parsed: list[str] = []
    monkeypatch.setattr(fastpath, "parse", lambda text: parsed.append(text) or parse(text))
    back = decode(payload, lambda: FAST)
    assert [d.value for d in back] == [d.value for d in docs]
    assert parsed == []  # positions are not worked out until asked for
    eager = parse(FAST)[0].src
    for path in (["servers", 0, "storage", "nvme_tb"], ["servers", 0, "support"], ["facility"]):
        assert back[0].src.locate(path) == eager.locate(path)
    assert parsed == []  # from rapidyaml's tree of the text, not the event parser
    with pytest.raises(BadEntry):
        decode(payload)  # no text to work the positions out from: a miss, not a guess


def test_an_alias_is_written_once() -> None:
    big = "x-a: &a [" + ", ".join(["lol"] * 1000) + "]\nkind: Facility\nname: f1\n"
    text = big + "x-b: [" + ", ".join(["*a"] * 50) + "]\n"
    payload = encode(parse(text))
    assert len(payload) < 2 * len(encode(parse(big)))
    assert decode(payload) == parse(text)


def test_a_yaml_problem_comes_back() -> None:
    back = decode(encode(YamlProblem("schema.yaml", 3, 19, "invalid YAML: oops")))
    assert isinstance(back, YamlProblem)
    assert (back.rule, back.line, back.column, back.message) == ("schema.yaml", 3, 19, "invalid YAML: oops")


@pytest.mark.parametrize("value", [{1, 2}, (1, 2), {1: "a"}, 1.5], ids=["set", "tuple", "int-key", "float"])
def test_what_the_format_cannot_spell_is_not_cached(value: object) -> None:
    with pytest.raises(Unencodable):
        encode([Document({"kind": value}, Src(1, 1, {"kind": Src(1, 7)}, {"kind": (1, 1)}))])


@pytest.mark.parametrize("payload", [
    b"",
    b"garbage",
    marshal.dumps(("docs",)),
    marshal.dumps(("docs", [({"a": 1}, (1,))])),
    marshal.dumps(("docs", [({"a": ("x", 1)}, (1, 1))])),
    marshal.dumps(("docs", [({"a": ("f", "1.0", "1.0")}, (1, 1))])),
    marshal.dumps(("docs", [({"a": 1.5}, (1, 1))])),
    marshal.dumps(("docs", [({"a": 1}, (1, 1, {"a": (1, 1)}))])),
    marshal.dumps(("docs", [({"a": 1}, ("1", 1))])),
    marshal.dumps(("problem", "schema.yaml", "3", 1, "m")),
    marshal.dumps(("exec", "print(1)")),
    marshal.dumps(compile("1", "f", "eval")),
], ids=["empty", "garbage", "no-docs", "short-src", "unknown-tag", "float-as-text", "bare-float",
        "short-entry", "text-line", "text-problem", "unknown-kind", "code-object"])
def test_anything_encode_does_not_write_is_refused(payload: bytes) -> None:
    with pytest.raises(BadEntry):
        decode(payload)


# ---------------------------------------------------------------- entries
@pytest.fixture
def store(tmp_path: Path) -> Cache:
    opened = open_cache(tmp_path / "cache")
    assert opened is not None
    return opened


def test_an_entry_is_read_back(store: Cache) -> None:
    key = content_key(TEXT.encode())
    assert store.get(key, lambda: TEXT) is None
    store.put(key, encode(parse(TEXT)))
    assert store.get(key, lambda: TEXT) == parse(TEXT)
    assert [p.name for p in store.entries.iterdir()] == [key]  # no temporary file left


@pytest.mark.parametrize("damage", [
    lambda data: data[: len(data) // 2],
    lambda data: b"",
    lambda data: b"\x00" * len(data),
    lambda data: data[:-1] + bytes([data[-1] ^ 1]),
], ids=["truncated", "empty", "zeros", "one-bit"])
def test_a_damaged_entry_is_a_miss(store: Cache, damage: object) -> None:
    key = content_key(TEXT.encode())
    store.put(key, encode(parse(TEXT)))
    path = store.entries / key
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    assert store.get(key, lambda: TEXT) is None


def test_an_entry_signed_with_another_secret_is_a_miss(store: Cache, tmp_path: Path) -> None:
    other = open_cache(tmp_path / "other")
    assert other is not None and other.secret != store.secret
    key = content_key(TEXT.encode())
    other.put(key, encode(parse(TEXT)))
    (store.entries / key).write_bytes((other.entries / key).read_bytes())
    assert store.get(key, lambda: TEXT) is None


def test_an_entry_moved_to_another_key_is_a_miss(store: Cache) -> None:
    key, other = content_key(b"a"), content_key(b"b")
    store.put(key, encode(parse(TEXT)))
    (store.entries / key).rename(store.entries / other)
    assert store.get(other, lambda: TEXT) is None


@pytest.mark.parametrize(
    ("module", "name", "value"),
    [
        (cache, "__version__", "99.0.0"),
        # The event parser's values and errors depend on PyYAML and on the
        # libyaml it was built with; the fast path's on rapidyaml.
        (source, "PYYAML_VERSION", "99.0"),
        (source, "LIBYAML_VERSION", "none"),
        (fastpath, "RAPIDYAML_VERSION", "99.0.0"),
    ],
)
def test_keys_change_with_the_checker_and_parser_versions(
    monkeypatch: pytest.MonkeyPatch, module: object, name: str, value: str
) -> None:
    before = content_key(b"kind: Facility\n")
    assert getattr(module, name) != value
    monkeypatch.setattr(module, name, value)
    cache.salt.cache_clear()
    try:
        assert content_key(b"kind: Facility\n") != before
    finally:
        monkeypatch.undo()
        cache.salt.cache_clear()
    assert content_key(b"kind: Facility\n") == before


def test_the_folder_is_private_and_tagged(store: Cache) -> None:
    assert cache._key_file(store.folder).stat().st_mode & 0o777 == 0o600
    assert store.folder.stat().st_mode & 0o777 == 0o700
    tag = (store.folder / "CACHEDIR.TAG").read_text()
    assert tag.startswith("Signature: 8a477f597d28d172789f06886806bc55\n")


def test_a_secret_others_may_read_is_not_trusted(store: Cache) -> None:
    cache._key_file(store.folder).chmod(0o644)
    assert open_cache(store.folder) is None
    info = cache.info(store.folder)
    assert info.problem is not None and "may be read by other users" in info.problem


def test_a_folder_that_cannot_be_made_is_no_cache(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    assert open_cache(tmp_path / "file" / "cache") is None
    assert cache.info(tmp_path / "file" / "cache").problem is not None


def test_entries_unused_for_a_month_are_pruned_once_a_day(store: Cache) -> None:
    old, fresh = store.entries / content_key(b"old"), store.entries / content_key(b"fresh")
    old.write_bytes(b"x")
    fresh.write_bytes(b"x")
    month_ago = time.time() - (cache.MAX_AGE_DAYS + 1) * 86400
    os.utime(old, (month_ago, month_ago))
    assert cache.prune(store, every_s=86400) == 0  # open_cache pruned just now
    assert cache.prune(store, every_s=0) == 1
    assert [p.name for p in store.entries.iterdir()] == [fresh.name]


def test_a_hit_counts_as_a_use(store: Cache) -> None:
    key = content_key(TEXT.encode())
    store.put(key, encode(parse(TEXT)))
    month_ago = time.time() - (cache.MAX_AGE_DAYS + 1) * 86400
    os.utime(store.entries / key, (month_ago, month_ago))
    assert store.get(key, lambda: TEXT) is not None
    assert cache.prune(store, every_s=0) == 0


def test_clean_removes_every_entry(store: Cache) -> None:
    for name in ("a", "b"):
        store.put(content_key(name.encode()), encode([]))
    assert cache.info(store.folder).entries == 2
    assert cache.clean(store.folder) == 2
    assert cache.info(store.folder).entries == 0
    assert cache.clean(store.folder / "nothing-here") == 0


@pytest.mark.parametrize(("environ", "expected"), [
    ({"CHECKER_CACHE_DIR": "/c", "XDG_CACHE_HOME": "/x"}, "/c"),
    ({"XDG_CACHE_HOME": "/x"}, "/x/checker"),
    ({"XDG_CACHE_HOME": "relative"}, "~/.cache/checker"),  # the XDG spec ignores a relative path
    ({}, "~/.cache/checker"),
])
def test_default_folder(environ: dict[str, str], expected: str) -> None:
    assert cache.default_dir(environ) == Path(expected).expanduser()


# A column of scalars as every entry spells it (kept rows, servers, racks and feeds).
NAN = float("nan")


@pytest.mark.parametrize(
    ("cells", "alike"),
    [
        ((1, 1, 1), True),
        (("A01", "A01"), True),
        ((None,), True),
        ((NAN, NAN), True),  # the same bits
        ((1, 1.0, True), False),  # equal in Python, not in JSON
        ((0.0, -0.0), False),  # equal, not the same bits
        ((1, 2), False),
        (("A01", "A02"), False),
    ],
)
def test_a_column_is_written_once_only_when_every_cell_is_alike(cells: tuple[Any, ...], alike: bool) -> None:
    written = cache.column_out(cells)
    assert written[0] is alike
    back = list(cache.column_cells(written, len(cells)))
    assert [(type(c), repr(c)) for c in back] == [(type(c), repr(c)) for c in cells]
