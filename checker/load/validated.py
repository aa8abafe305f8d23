"""A file's validated documents, kept between runs in the cache folder.

Validation is most of the load stage of a warm audit (decoding the parsed
file, merging `defaults:` and the catalog, pydantic), and a pull request
usually changes one file of many. An entry holds, for a file whose documents
are all of kinds that keep (checker.load.build.KINDS) and validated without a
problem of their own, each document's validated model; for a `kind: Servers`
document, its facility and rollout date and each server's validated model
with what its source map is made of (its index, and the shapes of the merges
of its defaults and its catalog model). A warm run rebuilds the models and
builds them as a cold run builds the ones it validates (checker.load.build):
references, duplicates, PSU cabling, power shelves and a facility's own
checks run again, since they depend on other files. Source maps stay lazy:
a fast-parsed document's comes back from the file's text, another's from
its parsed entry, and only when a position is asked for, which the file's
positions entry (Positions, below) answers first.

Keyed by the file's bytes and the code (cache.code_salt: checker's modules,
pydantic, the parser, the built-in catalog); the entry also holds a digest
of the catalog its servers were merged with (the catalog documents of the
inventory and the rule folders can change without the file changing), and
its servers are used only when the run's catalog has that digest.

A model is rebuilt from its own fields, checked type by type as they are read
(classes by name, from checker.load.models; fields by name; values of the
types validation gives), without running validation again: the entry is
signed (checker.load.cache) and holds only what validation produced. What
a class, a fields set and a set of parts need checked is checked once per
entry (a fleet's servers share a few). A document's servers, and a
facility's racks and feeds, are written a column at a time (a field's
values, or the one value all of a file's servers share, written once) and
checked a column at a time, each column with a call in C: a warm
100,000-server audit reads 175,000 such models, and checking them model
by model was most of what reading its entries cost. Anything
wrong with an entry makes it a miss: the file is decoded or parsed and
validated as in a cold run, and its entry written again.

Nothing wrong with an entry can show later than when it is read: everything
is checked then, a column at a time, though a model is made only when a
stage asks for it. A kept servers document's servers (ServerRun) and a kept
facility's racks and their feeds (KeptFacility: 75,000 models at 100,000
servers, written as tables, TableRun) are read by their columns, and their
models mostly never made. A facility entry says whether placing it reported anything
(KeptModel.placed): what placing checks of its racks and feeds is of the
document alone, so where it reported nothing and its name is free, a warm
run places them unchecked (checker.load.build).
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import functools
import hashlib
import itertools
import operator
import typing
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar, overload

from pydantic import BaseModel

from checker.load import cache
from checker.load import models as m
from checker.load.cache import SCALAR_TYPES, expect
from checker.source.parse import WrittenFloat

FORMAT = 6  # 6: scalar columns as cache.column_out spells them; 5: servers by columns; 4: racks as tables

# What merging a source map needs from the values merged (checker.load.build's
# _merge_values): `over`'s keys in order, and the shape of each key whose value
# merged two mappings.
Shape = tuple[tuple[str, ...], "dict[str, Shape] | None"]


@dataclass(frozen=True)
class KeptServer:
    """One validated server of a document and what its source map is made from."""

    index: int  # in the document's `servers:` list
    server: m.Server
    defaults: Shape  # the merge of its defaults under its own fields
    catalog: Shape | None  # the merge of its catalog model's fields under those, if it names one


@dataclass(frozen=True)
class KeptServers:
    """A `kind: Servers` document's validated servers."""

    index: int  # the document's index in its file
    deferred: bool  # the fast path read it: its source map comes back from the text alone
    facility: str
    rollout_date: dt.date | None
    # Those written, or those read back (ServerRun: each model made when asked).
    servers: Sequence[KeptServer]


@dataclass(frozen=True)
class KeptModel:
    """Another document's validated model (a kind whose loading reads nothing else of it)."""

    index: int
    deferred: bool
    kind: str
    model: m.Model
    # Placing it reported nothing (checker.load.build): what placing a document
    # checks is of the document alone while its name is free.
    placed: bool


@dataclass(frozen=True)
class KeptFacility(KeptModel):
    """A kept facility as read back: its racks (the model's `racks`, a TableRun)
    and their feeds in the same order, each rack's and feed's model made only
    when asked; what each feed's rack is (its index in `racks`), and its index
    among that rack's feeds."""

    racks: TableRun[m.Rack]
    feeds: TableRun[m.Feed]
    feed_racks: tuple[int, ...]
    feed_at: tuple[int, ...]


KeptDoc = KeptServers | KeptModel


def key(content: str) -> str:
    """The entry's key, for a file whose parsed entry is `content` (cache.content_key)."""
    return hashlib.sha256(cache.code_salt() + f"validated {FORMAT}\x00{content}".encode()).hexdigest()


def catalog_digest(fields: dict[str, dict[str, Any]], broken: Sequence[str]) -> bytes:
    """What merging a server depends on besides its file: every catalog model's
    fields, and the names of models whose document did not validate."""
    body = (sorted((name, cache.value_out(value)) for name, value in fields.items()), sorted(broken))
    return hashlib.sha256(cache.pack(body)).digest()


# ---------------------------------------------------------------- writing
# A model is spelled (class name, fields-set number, values, parts number,
# others): its scalar values in field order (None where another value goes),
# the number of a set of (field, part) pairs in the entry's `combos` (the
# parts it shares with others: a fleet's servers mostly share one set), and
# its other values as (field, value) pairs. Each distinct fields-set and set
# of parts is written once: a model is then rebuilt by a few calls in C.
class _Writer:
    def __init__(self) -> None:
        self.parts: list[Any] = []
        self.combos: list[tuple[tuple[str, int], ...]] = []
        self.sets: list[tuple[str, ...]] = []
        self._parts: dict[int, int] = {}  # id of a part -> its number
        self._combos: dict[tuple[tuple[str, int], ...], int] = {}
        self._sets: dict[tuple[str, ...], int] = {}
        self.shapes: dict[bytes, Any] = {}  # equal shapes written as one object

    def model(self, model: BaseModel, tabled: str | None = None) -> tuple[Any, ...]:
        """`tabled`: a field whose models are written as a table beside (`table`),
        spelled here as no models."""
        if model.__pydantic_extra__ or model.__pydantic_private__:
            raise cache.Unencodable("a model with extra or private values")
        cls = type(model)
        if not isinstance(model, m.Model) or tuple(model.__dict__) != _fields(cls)[0]:
            raise cache.Unencodable("a model whose values are not its fields")
        values: list[Any] = []
        shared: list[tuple[str, int]] = []
        others: list[tuple[str, Any]] = []
        for name, value in model.__dict__.items():
            if name == tabled:
                values.append(None)
                others.append((name, []))
                continue
            if value.__class__ in SCALAR_TYPES:
                values.append(value)
                continue
            values.append(None)
            if isinstance(value, m.Model):
                shared.append((name, self.part(value)))
            else:
                others.append((name, _value_out(value, self)))
        kept = self.fields_set(model)
        combo = self._combos.setdefault(tuple(shared), len(self._combos))
        if combo == len(self.combos):
            self.combos.append(tuple(shared))
        return (cls.__name__, kept, values, combo, tuple(others))

    def fields_set(self, model: BaseModel) -> int:
        """The number of the model's fields set, written once however many share it."""
        fields_set = tuple(sorted(model.model_fields_set))
        kept = self._sets.setdefault(fields_set, len(self._sets))
        if kept == len(self.sets):
            self.sets.append(fields_set)
        return kept

    def table(self, models: Sequence[BaseModel], cls: type[m.Model]) -> tuple[Any, ...] | None:
        """Models all of class `cls` spelled as a table: the class, each one's fields
        set, and a column of each field (TableRun reads it back checked a column at a
        time: a facility's 25,000 racks and 50,000 feeds as parts were 0.2 s of a warm
        100,000-server audit, most of it checking each part's values one by one).
        None where a field's values have no column spelling (encode then keeps
        nothing of the file)."""
        names = _fields(cls)[0]
        for model in models:
            if type(model) is not cls or model.__pydantic_extra__ or model.__pydantic_private__:
                return None
            if tuple(model.__dict__) != names:
                return None
        sets = [self.fields_set(model) for model in models]
        columns: list[tuple[str, str, Any]] = []
        for name in names:
            values = [model.__dict__[name] for model in models]
            spelled = self._column(values)
            if spelled is None:
                return None
            columns.append((name, *spelled))
        return (cls.__name__, sets, columns)

    def _column(self, values: list[Any]) -> tuple[str, Any] | None:
        """A field's values as a column: scalars ("s"), lists of texts or None ("n"),
        empty lists ("e"), or lists of models of one class, as the counts of each
        and the table of them all ("t"); None if none of these."""
        kinds = set(map(type, values))
        if SCALAR_TYPES.issuperset(kinds):
            return "s", cache.column_out(values)
        if kinds != {list} and kinds != {list, type(None)}:
            return None
        items = list(itertools.chain.from_iterable(v for v in values if v is not None))
        if not items:
            return ("e", None) if kinds == {list} else ("n", values)
        item_kinds = set(map(type, items))
        if item_kinds == {str}:
            return "n", values
        if len(item_kinds) != 1 or kinds != {list}:
            return None
        (cls,) = item_kinds
        if not issubclass(cls, m.Model):
            return None
        child = self.table(items, cls)
        return None if child is None else ("t", ([len(v) for v in values], child))

    def part(self, model: m.Model) -> int:
        """A part's number: written once, however many models share it."""
        index = self._parts.get(id(model))
        if index is None:
            spelled = self.model(model)
            index = self._parts[id(model)] = len(self.parts)
            self.parts.append(spelled)
        return index

    def shape(self, shape: Shape | None) -> Any:
        if shape is None:
            return None
        return self.shapes.setdefault(cache.pack(shape), shape)


def encode(digest: bytes, docs: Sequence[KeptDoc]) -> bytes:
    """The entry's payload (the documents in file order); cache.Unencodable if
    a value has no spelling."""
    w = _Writer()
    out: list[tuple[Any, ...]] = []
    for d in sorted(docs, key=lambda d: d.index):
        if isinstance(d, KeptModel) and isinstance(d.model, m.Facility):  # its racks as a table
            table = w.table(list(d.model.racks), m.Rack)
            if table is None:
                raise cache.Unencodable("a rack's or feed's value with no column spelling")
            out.append(("facility", d.index, d.deferred, d.placed, w.model(d.model, "racks"), table))
            continue
        if isinstance(d, KeptModel):
            out.append(("model", d.index, d.deferred, d.kind, d.placed, w.model(d.model)))
            continue
        rollout = d.rollout_date.isoformat() if d.rollout_date else None
        out.append(("servers", d.index, d.deferred, d.facility, rollout, _servers_out(d.servers, w)))
    tables = (w.sets, w.combos, w.parts)
    return cache.pack(("validated", FORMAT, digest, tables, out))


def _servers_out(servers: Sequence[KeptServer], w: _Writer) -> tuple[Any, ...]:
    """A document's servers a column at a time (ServerRun reads them back): their
    indexes and shapes, and a column of each part of their models' spelling,
    a field's values as one column (most of a file's servers share most of theirs)."""
    spelled = [w.model(s.server) for s in servers]
    names, kept, values, combos, others = zip(*spelled, strict=True) if spelled else ((),) * 5
    if len(set(map(len, values))) > 1:
        raise cache.Unencodable("servers of more than one class")
    fields = list(zip(*values, strict=True)) if values else [() for _ in _fields(m.Server)[0]]
    return (
        [s.index for s in servers],
        [w.shape(s.defaults) for s in servers],
        [w.shape(s.catalog) for s in servers],
        *map(cache.column_out, (names, kept, combos)), [cache.column_out(c) for c in fields],
        list(others),
    )


def _value_out(value: Any, w: _Writer) -> Any:
    kind = type(value)
    if kind in SCALAR_TYPES:
        return value
    if isinstance(value, m.Model):
        return ("p", w.part(value))
    if kind is list or kind is TableRun:  # a kept facility's racks, written again: a list
        return [_value_out(v, w) for v in value]
    if kind is dict:
        if not {str}.issuperset(map(type, value)):
            raise cache.Unencodable("a mapping key that is not a string")
        return {k: _value_out(v, w) for k, v in value.items()}
    if kind is tuple:
        return ("u", [_value_out(v, w) for v in value])
    if kind is WrittenFloat:
        return ("f", float(value), value.yaml_text)
    if kind is dt.date:
        return ("d", value.isoformat())
    raise cache.Unencodable(f"no spelling for {kind.__name__}")


# ---------------------------------------------------------------- reading
class _Reader:
    """An entry's tables, checked as they are read, and its models rebuilt from them.

    Parts are checked when the entry is read and each is made only when asked
    for (`part`); a kept facility's racks and feeds are tables (TableRun)."""

    def __init__(self, tables: Any) -> None:
        if tables.__class__ is not tuple or len(tables) != 3:
            raise cache.BadEntry("not the tables")
        sets, combos, parts = tables
        self.sets = [frozenset(_strs(s)) for s in expect(sets, list)]
        self.combos: list[dict[str, m.Model]] = []
        self._raw_combos = expect(combos, list)
        # Each (class name, fields set, set of parts) checked once, with what building reads.
        self._plans: dict[tuple[str, int, int, type[m.Model]], _Plan] = {}
        self._fast = _fast_ok()
        self.shapes: dict[int, Shape] = {}
        # Each part's plan, values and other values (as written, checked), and the part once made.
        self._part_plans: list[_Plan] = []
        self._part_values: tuple[list[Any], ...] = ()
        self._part_others: tuple[Any, ...] = ()
        self._parts: list[m.Model | None] = []
        self._read_parts(expect(parts, list))

    def _read_parts(self, raws: list[Any]) -> None:
        """The parts, each checked as `model` checks one, a column at a time: what
        needs no other part, then each run of parts whose plans are known (their
        values, other values), and each new plan once those before it are
        checked, its set of parts of parts before the first that reads it. A
        part and a set of parts refer only to parts before them (so that making
        one never comes back to it); none is made here but a set of parts'."""
        if not {tuple}.issuperset(map(type, raws)) or not {5}.issuperset(map(len, raws)):
            raise cache.BadEntry("not a model")
        if not raws:
            return
        names, kept, values, combos, others = zip(*raws, strict=True)
        # Exact types before the lookups: True is 1 as a key.
        if not {str}.issuperset(map(type, names)) or not {int}.issuperset(map(type, (*kept, *combos))):
            raise cache.BadEntry("not a model")
        if not {list}.issuperset(map(type, values)) or not {tuple}.issuperset(map(type, others)):
            raise cache.BadEntry("not the values of a model")
        if not SCALAR_TYPES.issuperset(map(type, itertools.chain.from_iterable(values))):
            raise cache.BadEntry("a value of a model that is no scalar")
        self._part_values, self._part_others = values, others
        self._parts = [None] * len(raws)
        keys = list(zip(names, kept, combos, strict=True))
        first = {key: n for n, key in reversed(list(enumerate(keys)))}
        plans: dict[_Key, _Plan] = {}
        for (cls, fields_set, combo), n in sorted(first.items(), key=operator.itemgetter(1)):
            self._checked(keys, plans, n)
            plans[(cls, fields_set, combo)] = self.plan(cls, fields_set, combo, m.Model, n)
        self._checked(keys, plans, len(keys))

    def _checked(self, keys: list[_Key], plans: dict[_Key, _Plan], upto: int) -> None:
        """Parts up to `upto` checked, their plans all in `plans`."""
        start = len(self._part_plans)
        got = list(map(plans.__getitem__, keys[start:upto]))
        if list(map(len, self._part_values[start:upto])) != list(map(len, map(_NAMES, got))):
            raise cache.BadEntry("not the fields of a part")
        self._part_plans += got
        owners = list(itertools.compress(range(start, upto), self._part_others[start:upto]))
        self._check_others(owners, [self._part_others[n] for n in owners])

    def _check_others(self, owners: list[int], others: list[tuple[Any, ...]]) -> None:
        """The other values of parts `owners`, checked as `others` checks each one's,
        a column at a time (a facility's 25,000 racks' feeds): pairs of a field
        of the part's class and a value, a list of parts (each before its own)
        read as one column of numbers, any other value one by one."""
        pairs = list(itertools.chain.from_iterable(others))
        if not {tuple}.issuperset(map(type, pairs)) or not {2}.issuperset(map(len, pairs)):
            raise cache.BadEntry("not a value")
        of = list(itertools.chain.from_iterable(map(itertools.repeat, owners, map(len, others))))
        fields, values = zip(*pairs, strict=True) if pairs else ((), ())
        allowed = map(operator.attrgetter("allowed"), map(self._part_plans.__getitem__, of))
        if not {str}.issuperset(map(type, fields)) or not all(map(frozenset.__contains__, allowed, fields)):
            raise cache.BadEntry("not a field of a part")
        listed = [(v, n) for v, n in zip(values, of, strict=True) if v.__class__ is list and v]
        refs = list(itertools.chain.from_iterable(v for v, _ in listed))
        below = list(itertools.chain.from_iterable(itertools.repeat(n, len(v)) for v, n in listed))
        if _are_parts(refs, below):
            rest = [(v, n) for v, n in zip(values, of, strict=True) if v.__class__ is not list]
        else:  # a list of other values among them: each list read as any value is
            rest = list(zip(values, of, strict=True))
        for value, n in rest:
            _value_in(value, _unmade, n)

    def part(self, n: int) -> m.Model:
        """Part `n` (checked when the entry was read), made when first asked."""
        got = self._parts[n]
        if got is None:
            plan, other = self._part_plans[n], self._part_others[n]
            own = self.others(other, plan, n) if other else ()
            got = self._parts[n] = self.build(plan, self._part_values[n], own)
        return got

    def combo(self, index: Any, limit: int) -> dict[str, m.Model]:
        """Set of parts `index`, of parts before `limit` (those before the first model it is read for)."""
        if index.__class__ is not int or not 0 <= index < len(self._raw_combos):
            raise cache.BadEntry("no such set of parts")
        while len(self.combos) <= index:
            pairs = expect(self._raw_combos[len(self.combos)], tuple)
            built = {}
            for pair in pairs:
                name, part = expect(pair, tuple) if len(pair) == 2 else _bad("not a part")
                if part.__class__ is not int or not 0 <= part < limit:
                    raise cache.BadEntry("no such part")
                built[expect(name, str)] = self.part(part)
            self.combos.append(built)
        return self.combos[index]

    def model(self, raw: Any, expected: type[m.Model]) -> m.Model:
        name, kept, values, combo, others = self._spelled(raw)
        plan = self.plan(name, kept, combo, expected)
        if values.__class__ is not list or len(values) != len(plan.names):
            raise cache.BadEntry(f"not the fields of {name}")
        if not SCALAR_TYPES.issuperset(map(type, values)):
            raise cache.BadEntry(f"a value of {name} that is no scalar")
        return self.build(plan, values, self.others(others, plan))

    def facility(
        self, raw: Any, table: Any
    ) -> tuple[m.Facility, TableRun[m.Rack], TableRun[m.Feed], tuple[int, ...], tuple[int, ...]]:
        """A facility document's model whose racks are written as a table beside it
        (_Writer.table): its `racks` a TableRun, and its racks' feeds likewise."""
        _, _, _, _, others = self._spelled(raw)
        if others.__class__ is not tuple:
            raise cache.BadEntry("not the values of Facility")
        written = [pair for pair in others if pair.__class__ is tuple and pair[:1] == ("racks",)]
        if len(written) != 1 or written[0][1].__class__ is not list or written[0][1]:
            raise cache.BadEntry("not the racks of a facility")
        racks = TableRun(self, table, m.Rack)
        feeds, counts = racks.models_of("feeds", m.Feed)
        feed_racks = tuple(itertools.chain.from_iterable(map(itertools.repeat, range(len(racks)), counts)))
        feed_at = tuple(itertools.chain.from_iterable(map(range, counts)))
        model = self.model(raw, m.Facility)
        assert isinstance(model, m.Facility)
        _set(model, "__dict__", {**model.__dict__, "racks": racks})
        return model, racks, feeds, feed_racks, feed_at

    def _spelled(self, raw: Any) -> tuple[Any, ...]:
        if raw.__class__ is not tuple or len(raw) != 5:
            raise cache.BadEntry("not a model")
        name, kept, _, combo, _ = raw
        # Exact types before the lookup: True is 1 as a key.
        if name.__class__ is not str or kept.__class__ is not int or combo.__class__ is not int:
            raise cache.BadEntry("not a model")
        return raw

    def others(
        self, raw: Any, plan: _Plan, limit: int | None = None, part: Callable[[int], Any] | None = None
    ) -> tuple[tuple[str, Any], ...]:
        """A model's values that are neither scalars nor shared parts, checked and
        read (`part`: what a part's number gives, those before `limit`)."""
        if raw.__class__ is not tuple:
            raise cache.BadEntry(f"not the values of {plan.cls.__name__}")
        get, below = part or self.part, len(self._parts) if limit is None else limit
        out = []
        for pair in raw:
            if pair.__class__ is not tuple or len(pair) != 2:
                raise cache.BadEntry("not a value")
            field_name, value = pair
            if field_name.__class__ is not str or field_name not in plan.allowed:
                raise cache.BadEntry(f"not a field of {plan.cls.__name__}")
            out.append((field_name, _value_in(value, get, below)))
        return tuple(out)

    def build(self, plan: _Plan, values: list[Any], others: tuple[tuple[str, Any], ...]) -> m.Model:
        """The model of checked values, as validation made it."""
        own = dict(zip(plan.names, values, strict=True))
        if plan.shared:
            own.update(plan.shared)
        own.update(others)
        if not self._fast:
            return plan.cls.model_construct(set(plan.fields_set), **own)
        model = object.__new__(plan.cls)
        _set(model, "__dict__", own)
        _set(model, "__pydantic_fields_set__", set(plan.fields_set))
        _set(model, "__pydantic_extra__", None)
        _set(model, "__pydantic_private__", None)
        return model

    def plan(
        self, name: str, kept: int, combo: int, expected: type[m.Model], limit: int | None = None
    ) -> _Plan:
        got = self._plans.get((name, kept, combo, expected))
        if got is None:
            below = len(self._parts) if limit is None else limit
            got = self._plans[(name, kept, combo, expected)] = self._plan(name, kept, combo, expected, below)
        return got

    def _plan(self, name: str, kept: int, combo: int, expected: type[m.Model], limit: int) -> _Plan:
        """What building a model of this class, fields set and set of parts reads,
        each checked: the class (of checker.load.models, and `expected`), its
        fields, the fields set and the parts (fields of the class)."""
        cls = _classes().get(name)
        if cls is None or not issubclass(cls, expected):
            raise cache.BadEntry(f"not a model: {name!r}")
        if not 0 <= kept < len(self.sets):
            raise cache.BadEntry("no such fields set")
        names, allowed = _fields(cls)
        shared = self.combo(combo, limit)
        if not allowed.issuperset(self.sets[kept]) or not allowed.issuperset(shared):
            raise cache.BadEntry(f"not the fields of {name}")
        return _Plan(cls, names, allowed, shared, self.sets[kept])

    def shape(self, raw: Any) -> Shape:
        got = self.shapes.get(id(raw))
        if got is None:
            got = self.shapes[id(raw)] = _shape_in(raw)
        return got


_NAMES = operator.attrgetter("names")
_Key = tuple[str, int, int]  # a part's class name, fields set and set of parts


def _unmade(n: int) -> None:
    """What a part's number reads as while the entry is checked: nothing is made."""


def _are_parts(raws: list[Any], limits: list[int]) -> bool:
    """Whether each of `raws` is a part's number, each before its limit (at C speed)."""
    if not {tuple}.issuperset(map(type, raws)) or not {2}.issuperset(map(len, raws)):
        return False
    tags, numbers = zip(*raws, strict=True) if raws else ((), ())
    return (
        {"p"}.issuperset(tags)
        and {int}.issuperset(map(type, numbers))
        and all(map(operator.lt, numbers, limits))
        and (not numbers or min(numbers) >= 0)
    )


def _bad(what: str) -> Any:
    raise cache.BadEntry(what)


def _strs(raw: Any) -> tuple[str, ...]:
    if raw.__class__ is not tuple or not {str}.issuperset(map(type, raw)):
        raise cache.BadEntry("not names")
    return raw


def decode(payload: bytes) -> tuple[bytes, list[KeptDoc]]:
    """The catalog digest an entry was written under, and its documents in file
    order; cache.BadEntry on anything encode does not write."""
    body = cache.unpack(payload)
    if type(body) is not tuple or len(body) != 5 or body[:2] != ("validated", FORMAT):
        raise cache.BadEntry("not validated documents")
    _, _, digest, tables, raw_docs = body
    r = _Reader(tables)
    docs: list[KeptDoc] = []
    for raw in expect(raw_docs, list):
        if type(raw) is tuple and len(raw) == 6 and raw[0] == "model":
            _, index, deferred, kind, placed, spelled = raw
            head = (expect(index, int), expect(deferred, bool), expect(kind, str))
            model = r.model(spelled, m.Model)
            if isinstance(model, m.Facility):  # written with its racks as a table, never so
                raise cache.BadEntry("a facility with its racks as parts")
            docs.append(KeptModel(*head, model, expect(placed, bool)))
            continue
        if type(raw) is tuple and len(raw) == 6 and raw[0] == "facility":  # its racks as a table
            _, index, deferred, placed, spelled, table = raw
            head = (expect(index, int), expect(deferred, bool), "Facility")
            facility, racks, feeds, of_rack, at = r.facility(spelled, table)
            docs.append(KeptFacility(*head, facility, expect(placed, bool), racks, feeds, of_rack, at))
            continue
        if type(raw) is not tuple or len(raw) != 6 or raw[0] != "servers":
            raise cache.BadEntry("not a document")
        _, index, deferred, facility, rollout, servers = raw
        kept = ServerRun(servers, r)
        try:
            date = dt.date.fromisoformat(expect(rollout, str)) if rollout is not None else None
        except ValueError as exc:
            raise cache.BadEntry(str(exc)) from None
        at, fast, name = expect(index, int), expect(deferred, bool), expect(facility, str)
        docs.append(KeptServers(at, fast, name, date, kept))
    if [d.index for d in docs] != sorted({d.index for d in docs}):
        raise cache.BadEntry("documents out of order")
    return expect(digest, bytes), docs


M = TypeVar("M", bound=m.Model)
C = TypeVar("C", bound=m.Model)


class _Run(Generic[M]):
    """Models of a kept entry read by their columns (`column`), each made only
    when asked (`model`): what every run of them shares."""

    _plans: list[_Plan]

    def __len__(self) -> int:
        raise NotImplementedError

    def model(self, i: int) -> M:
        raise NotImplementedError

    def column(self, name: str) -> list[Any]:
        """Each model's field `name`, as its model would hold it (a value of its
        own, else a shared part, else its scalar), read once; never changed."""
        got = self._columns.get(name)
        if got is None:
            got = self._columns[name] = self._column(name)
        return got

    @functools.cached_property
    def _columns(self) -> dict[str, list[Any]]:
        return {}

    def _column(self, name: str) -> list[Any]:
        raise NotImplementedError


class ServerRun(_Run[m.Server], Sequence[KeptServer]):
    """A kept servers document's servers as read back: checked a column at a time
    when the entry is read (everything _Reader.model checks of one model), each
    server's model made only when it is asked for. A warm run asks for few: the
    load places a document's servers by their columns (checker.load.build) and
    the later stages read the fields they need a column at a time (`column`),
    so a file whose racks did not change makes no model (5 us a server)."""

    def __init__(self, raw: Any, r: _Reader) -> None:
        self._reader = r
        if raw.__class__ is not tuple or len(raw) != 8:
            raise cache.BadEntry("not the servers of a document")
        index, defaults, catalog, names, kept, combos, values, others = raw
        if index.__class__ is not list or not {int}.issuperset(map(type, index)):
            raise cache.BadEntry("not a server")
        self._count = count = len(index)
        # Exact types before the lookups: True is 1 as a key.
        names, kept, combos = (cache.column_cells(column, count) for column in (names, kept, combos))
        if not {int}.issuperset(map(type, (*kept, *combos))) or not {str}.issuperset(map(type, names)):
            raise cache.BadEntry("not a server")
        keys = list(zip(names, kept, combos, strict=True))
        plans = {key: r.plan(*key, m.Server) for key in set(keys)}
        self._plans = list(map(plans.__getitem__, keys))
        fields = {plan.names for plan in plans.values()}
        if values.__class__ is not list or len(fields) > 1 or any(len(values) != len(f) for f in fields):
            raise cache.BadEntry("not the fields of a server")
        # Each field's values: one for every server (a file's servers mostly share
        # most of theirs, written once), or one each.
        self._cells: list[tuple[bool, Any]] = [cache.column_in(column, count) for column in values]
        if others.__class__ is not list or len(others) != count or not {tuple}.issuperset(map(type, others)):
            raise cache.BadEntry("not the values of a server")
        # The few servers with values of other kinds (lists, mappings), read now.
        self._others = {
            i: r.others(others[i], self._plans[i]) for i in itertools.compress(range(count), others)
        }
        if defaults.__class__ is not list or catalog.__class__ is not list:
            raise cache.BadEntry("not the shapes of the servers")
        if len(defaults) != count or len(catalog) != count:
            raise cache.BadEntry("not the shapes of the servers")
        self.indexes: list[int] = index
        # Each server's shapes: of its defaults merge, and of its catalog merge (None: no model named).
        self.defaults: list[Shape] = _shapes(defaults, r, optional=False)
        self.catalogs: list[Shape | None] = _shapes(catalog, r, optional=True)
        self._models: list[m.Server | None] = [None] * count

    def __len__(self) -> int:
        return self._count

    @functools.cached_property
    def _groups(self) -> list[list[int]]:
        """The servers of each class, fields set and set of parts (a file's mostly share one)."""
        plans = self._plans
        if len(set(map(id, plans))) <= 1:
            return [list(range(len(plans)))] if plans else []
        groups: dict[int, list[int]] = {}
        for i, plan in enumerate(plans):
            groups.setdefault(id(plan), []).append(i)
        return list(groups.values())

    def _column(self, name: str) -> list[Any]:
        count = self._count
        out: list[Any] = [None] * count
        for rows in self._groups:
            plan = self._plans[rows[0]]
            if name not in plan.allowed:
                raise AttributeError(f"{plan.cls.__name__} has no field {name!r}")
            # Set at C speed: a warm 100,000-server audit reads 3,000 columns of 400 models.
            whole = len(rows) == count  # the run's only group, in order
            if name in plan.shared:
                cells: Iterable[Any] = itertools.repeat(plan.shared[name])
            else:
                same, data = self._cells[plan.names.index(name)]
                cells = itertools.repeat(data) if same else data if whole else map(data.__getitem__, rows)
            if whole:
                out = list(itertools.islice(cells, count))
            else:
                collections.deque(map(out.__setitem__, rows, cells), maxlen=0)
        for i, value in self._own(name):
            out[i] = value
        return out

    @overload
    def __getitem__(self, i: int) -> KeptServer: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[KeptServer]: ...
    def __getitem__(self, i: int | slice) -> KeptServer | Sequence[KeptServer]:
        if isinstance(i, slice):
            return [self[j] for j in range(len(self))[i]]
        return KeptServer(self.indexes[i], self.model(i), self.defaults[i], self.catalogs[i])

    def model(self, i: int) -> m.Server:
        """Server `i`'s model, made when first asked."""
        got = self._models[i]
        if got is None:
            values = [data if same else data[i] for same, data in self._cells]
            made = self._reader.build(self._plans[i], values, self._others.get(i, ()))
            assert isinstance(made, m.Server)
            got = self._models[i] = made
        return got

    def _own(self, name: str) -> Iterator[tuple[int, Any]]:
        """The values of field `name` of other kinds (lists, mappings), with the index
        of each server that has one."""
        for i, pairs in self._others.items():
            for field_name, value in pairs:
                if field_name == name:
                    yield i, value


class TableRun(_Run[M], Sequence[M]):
    """Models of one class written as a table (_Writer.table: a facility's racks,
    their feeds), checked a column at a time when the entry is read, as
    _Reader.model checks each model (the class, each fields set, each value a
    scalar, a list of texts, or models of the table of that field); each model
    made when first asked, a column read without making any."""

    def __init__(self, r: _Reader, raw: Any, expected: type[M]) -> None:
        self._reader = r
        if raw.__class__ is not tuple or len(raw) != 3:
            raise cache.BadEntry("not a table")
        name, sets, columns = raw
        cls = _classes().get(name) if name.__class__ is str else None
        if cls is None or not issubclass(cls, expected):
            raise cache.BadEntry(f"not a table of {expected.__name__}")
        self.cls = cls
        if sets.__class__ is not list or not {int}.issuperset(map(type, sets)):
            raise cache.BadEntry("not the fields sets of a table")
        if sets and not (min(sets) >= 0 and max(sets) < len(r.sets)):
            raise cache.BadEntry("no such fields set")
        names, allowed = _fields(cls)
        plans: dict[int, _Plan] = {}
        for k in set(sets):
            if not allowed.issuperset(r.sets[k]):
                raise cache.BadEntry(f"not the fields of {cls.__name__}")
            plans[k] = _Plan(cls, names, allowed, {}, r.sets[k])
        self._plans = list(map(plans.__getitem__, sets))
        self._count = count = len(sets)
        if columns.__class__ is not list or len(columns) != len(names):
            raise cache.BadEntry(f"not a column of each field of {cls.__name__}")
        # Each field's values as the models hold them (None: lists made when asked),
        # and the fields of lists: empty (None) or models of a table (where each one's start).
        self._cells: list[list[Any] | None] = []
        self._lists: dict[str, tuple[list[int], list[int], TableRun[Any]] | None] = {}
        for field_name, column in zip(names, columns, strict=True):
            if column.__class__ is not tuple or len(column) != 3 or column[0] != field_name:
                raise cache.BadEntry(f"not the column of {cls.__name__}.{field_name}")
            self._cells.append(self._column_in(field_name, column[1], column[2]))
        self._index = {field_name: i for i, field_name in enumerate(names)}
        self._models: list[M | None] = [None] * count

    def _column_in(self, name: str, kind: Any, data: Any) -> list[Any] | None:
        """One column, checked: its values, or None for a field of lists made when asked."""
        count = self._count
        if kind == "s":  # scalars, as every entry spells a column of them
            return list(cache.column_cells(data, count))
        if kind == "n":
            if data.__class__ is not list or len(data) != count:
                raise cache.BadEntry("not a value of each model")
            if not (
                _LIST_OR_NONE.issuperset(map(type, data))
                and {str}.issuperset(map(type, itertools.chain.from_iterable(filter(None, data))))
            ):
                raise cache.BadEntry("a value of a model that is no list of texts")
            return data
        if kind == "e" and data is None:
            self._lists[name] = None
            return None
        if kind != "t" or data.__class__ is not tuple or len(data) != 2:
            raise cache.BadEntry("not a column")
        counts, table = data
        if counts.__class__ is not list or len(counts) != count or not {int}.issuperset(map(type, counts)):
            raise cache.BadEntry("not the count of each model's list")
        child: TableRun[Any] = TableRun(self._reader, table, m.Model)
        if (counts and min(counts) < 0) or sum(counts) != len(child):
            raise cache.BadEntry("not the models of each model's list")
        self._lists[name] = (list(itertools.accumulate(counts, initial=0))[:-1], counts, child)
        return None

    def models_of(self, name: str, cls: type[C]) -> tuple[TableRun[C], list[int]]:
        """The models of field `name` of each model, all of class `cls`, as one
        run, and how many each model has."""
        if name not in self._lists:
            raise cache.BadEntry(f"no models in {self.cls.__name__}.{name}")
        held = self._lists[name]
        if held is None:  # every list empty
            empty = [(f, "s", cache.column_out(())) for f in _fields(cls)[0]]
            return TableRun(self._reader, (cls.__name__, [], empty), cls), [0] * self._count
        _, counts, child = held
        if child.cls is not cls:
            raise cache.BadEntry(f"not each a {cls.__name__}")
        return typing.cast(TableRun[C], child), counts

    def __len__(self) -> int:
        return self._count

    def model(self, i: int) -> M:
        got = self._models[i]
        if got is None:
            values = [None if cells is None else cells[i] for cells in self._cells]
            others = tuple((name, self._list_of(held, i)) for name, held in self._lists.items())
            made = self._reader.build(self._plans[i], values, others)
            got = self._models[i] = typing.cast(M, made)
        return got

    @staticmethod
    def _list_of(held: tuple[list[int], list[int], TableRun[Any]] | None, i: int) -> list[Any]:
        """Model `i`'s list of a field of lists (`held`, as _lists holds it)."""
        if held is None:
            return []
        starts, counts, child = held
        return list(map(child.model, range(starts[i], starts[i] + counts[i])))

    def _column(self, name: str) -> list[Any]:
        at = self._index.get(name)
        if at is None:
            raise AttributeError(f"{self.cls.__name__} has no field {name!r}")
        cells = self._cells[at]
        if cells is not None:
            return cells
        held = self._lists[name]
        if held is None:
            return [[] for _ in range(self._count)]
        starts, counts, child = held
        return [list(map(child.model, range(s, s + c))) for s, c in zip(starts, counts, strict=True)]

    @overload
    def __getitem__(self, i: int) -> M: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[M]: ...
    def __getitem__(self, i: int | slice) -> M | Sequence[M]:
        if isinstance(i, slice):
            return [self.model(j) for j in range(len(self))[i]]
        return self.model(range(len(self))[i])

    # The value of a model's field (Facility.racks): equal to the list it stands for.
    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, TableRun)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))


_LIST_OR_NONE = frozenset({list, type(None)})


def _shapes(raws: Sequence[Any], r: _Reader, optional: bool) -> list[Any]:
    """Each server's shape (`optional`: None where none is written), each
    distinct one read once (the writer writes equal shapes as one object)."""
    by_id = {id(raw): raw for raw in raws}
    read = {key: None if raw is None and optional else r.shape(raw) for key, raw in by_id.items()}
    return list(map(read.__getitem__, map(id, raws)))


@functools.lru_cache(maxsize=1)
def _classes() -> dict[str, type[m.Model]]:
    def below(cls: type[m.Model]) -> Iterator[type[m.Model]]:
        for sub in cls.__subclasses__():
            yield sub
            yield from below(sub)

    found: dict[str, type[m.Model]] = {}
    for cls in below(m.Model):
        if cls.__module__ == m.__name__ and found.setdefault(cls.__name__, cls) is not cls:
            raise AssertionError(f"two models named {cls.__name__}")  # a bug: names must be unique
    return found


@functools.cache
def _fields(cls: type[m.Model]) -> tuple[tuple[str, ...], frozenset[str]]:
    names = tuple(cls.model_fields)
    return names, frozenset(names)


def _value_in(raw: Any, part: Callable[[int], Any], limit: int) -> Any:
    """A value as written, checked and read; a part's number (one before `limit`) read by `part`."""
    kind = type(raw)
    if kind in SCALAR_TYPES:
        return raw
    if kind is list:
        return [_value_in(v, part, limit) for v in raw]
    if kind is dict:
        return {expect(k, str): _value_in(v, part, limit) for k, v in raw.items()}
    if kind is tuple and len(raw) == 2 and raw[0] == "p":  # a part's number: most values not scalars
        if type(raw[1]) is int and 0 <= raw[1] < limit:
            return part(raw[1])
    elif kind is tuple and raw:
        tag, *rest = raw
        if tag == "u" and len(rest) == 1:
            return tuple(_value_in(v, part, limit) for v in expect(rest[0], list))
        if tag == "f" and len(rest) == 2:
            return WrittenFloat(expect(rest[0], float), expect(rest[1], str))
        if tag == "d" and len(rest) == 1:
            try:
                return dt.date.fromisoformat(expect(rest[0], str))
            except ValueError as exc:
                raise cache.BadEntry(str(exc)) from None
    raise cache.BadEntry(f"unexpected {kind.__name__} in a model")


def _shape_in(raw: Any) -> Shape:
    if type(raw) is not tuple or len(raw) != 2:
        raise cache.BadEntry("not a shape")
    names, nested = raw
    if type(names) is not tuple or not {str}.issuperset(map(type, names)):
        raise cache.BadEntry("not a shape")
    if nested is None:
        return (names, None)
    return (names, {expect(k, str): _shape_in(v) for k, v in expect(nested, dict).items()})


# ---------------------------------------------------------------- building a model
class _Plan(NamedTuple):
    """How the models of one class, fields set and set of parts are built
    (_Reader.model: the model of its values, as validation made it, without
    validating again; pydantic's model_construct where its layout cannot be
    set directly)."""

    cls: type[m.Model]
    names: tuple[str, ...]  # its fields, in order
    allowed: frozenset[str]
    shared: dict[str, m.Model]  # the parts, by field
    fields_set: frozenset[str]


_set = object.__setattr__


@functools.lru_cache(maxsize=1)
def _fast_ok() -> bool:
    """Whether setting a model's state directly gives what model_construct gives
    (a third of its cost): pydantic's own layout, checked on this pydantic."""
    values: dict[str, Any] = {"model": "h100-sxm-80gb", "count": 8}
    slow = m.GpuRef.model_construct({"model", "count"}, **values)
    fast = object.__new__(m.GpuRef)
    try:
        _set(fast, "__dict__", dict(values))
        _set(fast, "__pydantic_fields_set__", {"model", "count"})
        _set(fast, "__pydantic_extra__", None)
        _set(fast, "__pydantic_private__", None)
    except AttributeError:
        return False
    state = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
    return fast == slow and all(getattr(fast, a, None) == getattr(slow, a, None) for a in state)


# ---------------------------------------------------------------- positions
# A position asked of a kept document: (document index, path descended to, path
# located from there, key or value: True/False, None for the value's own place).
At = tuple[int, tuple[str | int, ...], tuple[str | int, ...], bool | None]


def _positions_key(content: str) -> str:
    return hashlib.sha256(cache.code_salt() + f"positions {FORMAT}\x00{content}".encode()).hexdigest()


class Positions:
    """The positions worked out in one file, kept between runs: a pure function of
    the file's bytes and the parser's code, so a warm run asks the source map for
    none it was asked before. Read from `store` when first asked, as every entry
    is (signed, checked type by type); anything wrong with it is an empty memo."""

    def __init__(self, store: cache.Cache, content: str) -> None:
        self._store, self._key = store, _positions_key(content)
        self._known: dict[At, tuple[int, int]] | None = None
        self._new: dict[At, tuple[int, int]] = {}

    def renew(self, store: cache.Cache) -> None:
        """Keep what is worked out from now on in `store` (a resident process's next
        command, checker.load.build._kept_file: what is known stays known)."""
        if store != self._store:  # another folder: its own entry is what is known there
            self._store, self._known, self._new = store, None, {}

    def get(self, at: At) -> tuple[int, int] | None:
        if self._known is None:
            self._known = self._load()
        return self._known.get(at) or self._new.get(at)

    def put(self, at: At, position: tuple[int, int]) -> tuple[int, int]:
        self._new[at] = position
        return position

    def _load(self) -> dict[At, tuple[int, int]]:
        return self._store.decoded(self._key, _positions_in) or {}  # anything wrong: nothing known

    def save(self) -> None:
        """Keep what this run worked out, with what earlier runs did (a no-op if nothing is new)."""
        if not self._new:
            return
        known = {**(self._known or {}), **self._new}
        rows = [(*at, *pos) for at, pos in known.items()]
        with contextlib.suppress(cache.Unencodable):
            self._store.put(self._key, cache.pack(("positions", FORMAT, rows)))
        self._known, self._new = known, {}


_STEPS = frozenset({str, int})
_KEYS = frozenset({bool, type(None)})  # whether the key or the value was located; None: the node


def _positions_in(body: Any) -> dict[At, tuple[int, int]]:
    """The positions of an entry, each checked a column at a time (at C speed:
    a facility's racks and feeds are tens of thousands of positions)."""
    if body.__class__ is not tuple or len(body) != 3 or body[:2] != ("positions", FORMAT):
        raise cache.BadEntry("not positions")
    rows = expect(body[2], list)
    if not rows:
        return {}
    if not {tuple}.issuperset(map(type, rows)) or set(map(len, rows)) != {6}:
        raise cache.BadEntry("not a position")
    index, descended, located, key, line, column = zip(*rows, strict=True)
    steps = itertools.chain.from_iterable((*descended, *located))
    if (
        not {int}.issuperset(map(type, (*index, *line, *column)))
        or not {tuple}.issuperset(map(type, (*descended, *located)))
        or not _STEPS.issuperset(map(type, steps))
        or not _KEYS.issuperset(map(type, key))
    ):
        raise cache.BadEntry("not a position")
    at = zip(index, descended, located, key, strict=True)
    return dict(zip(at, zip(line, column, strict=True), strict=True))
