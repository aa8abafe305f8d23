"""The evaluate stage's results, kept between runs in the cache folder.

A rule's outcome on a fact depends on nothing but the rule's compiled
condition and the values of the fields it reads; a message depends on nothing
but its template and the values it reads. Everything else an audit takes in
(the files, the catalog and knowledge tables, the defaults, the config, the
`--as-of` date) reaches the rules only through those values. So both are
kept per distinct value, not per file: a warm audit sends durable-rules only
the facts it has not seen, and renders only the messages it has not rendered,
whichever file changed (issue 25).

Two entries, each keyed by the cache's salt, the code that made it
(`rulebook.code_salt`: every module of checker, durable-rules' engine,
pydantic and Jinja) and a digest of what it depends on in the rulebook:

- outcomes: per fact kind, the names of the fields its conditions read and,
  for each distinct tuple of their values, the conditions that fired; keyed
  by every selected rule's kind and condition, in order;
- messages: per rule, for each tuple of the values its message reads, the
  text; keyed by every selected rule's id, message and the fields it reads;

and one entry per block of kept rows, a servers file's or a chunk of racks or
feeds (Found: what was found on each row, where, and what each finding's
message reads), keyed by the rows' version (checker.derive.kept_rows,
checker.derive.kept_tables) and by the rules.

An entry is what this run used and what it added, and at most as many of
the last run's others (a pull request that flips one file back and forth
still hits): its size follows the inventory's number of distinct facts, not
the number of runs. An entry is read as every cache entry is (signed,
checked type by type as it is read; checker.load.cache) and anything wrong
with it makes it empty: the run evaluates and renders as a cold one does.
Output never depends on it: the tests compare warm runs with cold ones byte
for byte.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import json
import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from checker.load import cache
from checker.load.cache import expect

if TYPE_CHECKING:
    from checker.evaluate.rulebook import CompiledRule

FORMAT = 1
# A value the memo keys: what a fact's cell or a message's field can be.

Key = tuple[Any, ...]  # the values and their types: 1, 1.0 and true are three keys


def typed(values: Sequence[Any]) -> Key:
    """The key of a tuple of values: the values, then their types (as _distinct keys facts)."""
    return (*values, *map(type, values))


@functools.lru_cache(maxsize=1)
def _salt() -> bytes:
    from checker.evaluate.rulebook import code_salt

    digest = hashlib.sha256(code_salt())
    digest.update(f"evaluate memo {FORMAT}\x00".encode())
    # durable-rules' engine is a compiled module: the .py files' stamps do not cover it.
    from checker._vendor import durable_rules_engine

    info = Path(durable_rules_engine.__file__ or "").stat()
    digest.update(f"durable {info.st_size} {info.st_mtime_ns}\x00".encode())
    return digest.digest()


def _key(what: str, parts: Iterable[Any]) -> str:
    digest = hashlib.sha256(_salt())
    digest.update(what.encode() + b"\x00")
    digest.update(json.dumps(list(parts), sort_keys=True, ensure_ascii=True, default=str).encode())
    return digest.hexdigest()


@dataclass
class _Table:
    """One part of an entry: what was known when the run began, and what it used or added."""

    known: dict[Any, Any] = field(default_factory=dict)
    used: dict[Any, Any] = field(default_factory=dict)
    added: bool = False

    def get(self, key: Any) -> Any:
        got = self.known.get(key)
        if got is not None:
            self.used[key] = got
        return got

    def put(self, key: Any, value: Any) -> None:
        self.used[key] = value
        self.added = True

    def use(self, key: Any, value: Any) -> None:
        """What a run that looked `key` up would leave: the known value used, else `value` added."""
        got = self.known.get(key)
        if got is None:
            self.put(key, value)
        else:
            self.used[key] = got

    def kept(self) -> dict[Any, Any]:
        """What the next run finds: this run's, then as many of the others."""
        out = dict(self.used)
        room = len(self.used)
        for key, value in self.known.items():
            if room <= 0:
                break
            if key not in out:
                out[key] = value
                room -= 1
        return out


@dataclass
class _Entry:
    store: cache.Cache | None
    key: str
    tables: dict[Any, _Table]

    def table(self, name: Any) -> _Table:
        got = self.tables.get(name)
        if got is None:
            got = self.tables[name] = _Table()
        return got

    def save(self, body: Any) -> None:
        if self.store is None or not any(t.added for t in self.tables.values()):
            return
        with contextlib.suppress(cache.Unencodable):  # nesting marshal does not write: not kept
            self.store.put(self.key, cache.pack(body))
        for t in self.tables.values():
            t.added = False


def _load(store: cache.Cache | None, key: str, read: Callable[[Any], dict[Any, _Table]]) -> dict[Any, _Table]:
    """What the entry holds; a miss, or anything wrong with it: nothing known."""
    return (store.decoded(key, read) if store is not None else None) or {}


def _values(raw: Any) -> tuple[Any, ...]:
    expect(raw, tuple)
    if not cache.SCALAR_TYPES.issuperset(map(type, raw)):
        raise cache.BadEntry("a value that is not a scalar")
    return raw  # type: ignore[no-any-return]


# ---------------------------------------------------------------- rule outcomes
class Outcomes:
    """The conditions that fired per distinct fact, per kind and the fields read."""

    def __init__(self, store: cache.Cache | None, rules: Sequence[CompiledRule]) -> None:
        key = _key("outcomes", ((r.rule.on, r.when.condition) for r in rules))
        self._entry = _Entry(store, key, _load(store, key, _outcomes_in))

    def table(self, kind: str, names: Sequence[str], conditions: int) -> _Table:
        """The outcomes of `conditions` conditions on facts of `kind`, keyed by the values of `names`."""
        return self._entry.table((kind, tuple(names), conditions))

    def save(self) -> None:
        body = [
            (kind, list(names), conditions, [(key[: len(key) // 2], got) for key, got in t.kept().items()])
            for (kind, names, conditions), t in self._entry.tables.items()
        ]
        self._entry.save(("outcomes", FORMAT, body))


def _outcomes_in(body: Any) -> dict[Any, _Table]:
    if type(body) is not tuple or len(body) != 3 or body[:2] != ("outcomes", FORMAT):
        raise cache.BadEntry("not outcomes")
    tables: dict[Any, _Table] = {}
    for item in expect(body[2], list):
        kind, names, conditions, rows = expect(item, tuple)
        expect(kind, str), expect(conditions, int)
        names = tuple(expect(n, str) for n in expect(names, list))
        known: dict[Any, Any] = {}
        for row in expect(rows, list):
            cells, fired = expect(row, tuple)
            cells = _values(cells)
            if len(cells) != len(names):
                raise cache.BadEntry("cells that are not the names'")
            fired = expect(fired, tuple)
            if not all(type(i) is int and 0 <= i < conditions for i in fired):
                raise cache.BadEntry("a condition that is not the kind's")
            known[typed(cells)] = fired
        tables[(kind, names, conditions)] = _Table(known)
    return tables


# ---------------------------------------------------------------- messages
class MessageMemo:
    """Rendered messages per rule and the values its message reads."""

    def __init__(self, store: cache.Cache | None, rules: Sequence[CompiledRule]) -> None:
        key = _key("messages", ((r.id, r.template.source, r.message_fields) for r in rules))
        self._entry = _Entry(store, key, _load(store, key, _messages_in))

    def table(self, rule: str) -> _Table:
        return self._entry.table(rule)

    def save(self) -> None:
        body = [
            (str(rule), [(key[: len(key) // 2], text) for key, text in t.kept().items()])
            for rule, t in self._entry.tables.items()
        ]
        self._entry.save(("messages", FORMAT, body))


def _messages_in(body: Any) -> dict[Any, _Table]:
    if type(body) is not tuple or len(body) != 3 or body[:2] != ("messages", FORMAT):
        raise cache.BadEntry("not messages")
    tables: dict[Any, _Table] = {}
    for item in expect(body[2], list):
        rule, rows = expect(item, tuple)
        expect(rule, str)
        known: dict[Any, Any] = {}
        for row in expect(rows, list):
            values, text = expect(row, tuple)
            known[typed(_values(values))] = expect(text, str)
        tables[rule] = _Table(known)
    return tables


# ---------------------------------------------------------------- found on kept rows
# One finding as Found keeps it: the rule's index among the rules, the line and
# column it is located at, and what its message reads (engine.values_shape).
Kept = tuple[int, int, int, tuple[Any, ...]]
FOUND_FORMAT = 2  # 2: a column of each (1: a tuple of findings a row)


class KeptColumns(NamedTuple):
    """The findings of an entry of Found, a column of each of their parts, in the
    order they were found: the row each is on (among the block's), its rule's
    index among the rules, its line and column, and what its message reads."""

    rows: list[int]
    rules: list[int]
    lines: list[int]
    columns: list[int]
    shapes: list[tuple[Any, ...]]


class Found:
    """What the rules found on each row of kept rows (a servers file's,
    checker.derive.kept_rows, or a chunk of racks or feeds,
    checker.derive.kept_tables: their `Block.version`), one entry a block,
    keyed by that version and by every selected rule's id, kind, condition,
    severity, category, remediation, located path and message fields, in order:
    all a finding is made of but its fact's entity, file and place, which the
    version holds. Rows that are the same are then neither matched nor located
    again, and their findings are not shaped again for grouping. An entry holds
    them a column at a time, read back checked a column at a time (a
    100,000-server fleet's 75,000 findings on racks, a tuple each, took 0.09 s
    to check one by one)."""

    def __init__(self, store: cache.Cache, rules: Sequence[CompiledRule]) -> None:
        self._store, self._count = store, len(rules)
        self._rules = _key("found", (
            (r.id, r.rule.on, r.when.condition, r.rule.severity, r.rule.category, r.rule.remediation,
             r.locate_path, r.message_fields) for r in rules
        ))

    def _entry(self, version: bytes) -> str:
        return hashlib.sha256(self._rules.encode() + b"\x00" + version).hexdigest()

    def get(self, version: bytes, count: int) -> KeptColumns | None:
        """The findings on the `count` rows of that version, or None."""
        return self._store.decoded(self._entry(version), functools.partial(_found_in, count=count,
                                                                              rules=self._count))

    def put(self, version: bytes, found: list[tuple[Kept, ...]]) -> None:
        """Keep the findings on each row of that version (a tuple of them a row)."""
        items = [(row, *item) for row, kept in enumerate(found) for item in kept]
        columns = [list(c) for c in zip(*items, strict=True)] if items else [[], [], [], [], []]
        with contextlib.suppress(cache.Unencodable):
            self._store.put(self._entry(version), cache.pack(("found", FOUND_FORMAT, len(found), columns)))


def _found_in(body: Any, count: int, rules: int) -> KeptColumns:
    """An entry's findings, checked a column at a time: each on one of the
    `count` rows, in their order, of a rule among the `rules`, at a line and
    column, reading a tuple of scalars."""
    if body.__class__ is not tuple or len(body) != 4 or body[:2] != ("found", FOUND_FORMAT):
        raise cache.BadEntry("not findings")
    if body[2].__class__ is not int or body[2] != count:
        raise cache.BadEntry("not the findings of each row")
    columns = body[3]
    if columns.__class__ is not list or len(columns) != 5 or not {list}.issuperset(map(type, columns)):
        raise cache.BadEntry("not the columns of findings")
    found = KeptColumns(*columns)
    if len(set(map(len, columns))) != 1:
        raise cache.BadEntry("not a column of each")
    numbers = itertools.chain(found.rows, found.rules, found.lines, found.columns)
    if not {int}.issuperset(map(type, numbers)):
        raise cache.BadEntry("not a finding of these rules")
    rows, of = found.rows, found.rules
    if rows and not (rows[0] >= 0 and rows[-1] < count and all(map(operator.le, rows, rows[1:]))):
        raise cache.BadEntry("not the findings of each row")
    if of and not (min(of) >= 0 and max(of) < rules):
        raise cache.BadEntry("not a finding of these rules")
    shapes = found.shapes
    if not {tuple}.issuperset(map(type, shapes)):
        raise cache.BadEntry("not what a message reads")
    if not cache.SCALAR_TYPES.issuperset(map(type, itertools.chain.from_iterable(shapes))):
        raise cache.BadEntry("not what a message reads")
    return found


# ---------------------------------------------------------------- both
@dataclass(frozen=True)
class Memo:
    """What earlier runs evaluated and rendered, for the rules of this one."""

    outcomes: Outcomes
    messages: MessageMemo
    found: Found


def open_memo(folder: Path | None, rules: Sequence[CompiledRule]) -> Memo | None:
    """The memo kept in the cache `folder` for `rules` (None: no cache, or one that cannot be used)."""
    store = cache.open_cache(folder) if folder is not None else None
    if store is None:
        return None
    return Memo(Outcomes(store, rules), MessageMemo(store, rules), Found(store, rules))
