"""Evaluate compiled rules over facts with durable-rules, synchronously.

durable.engine.Host starts timer threads that dispatch actions every 0.2 s,
so actions would run partly on those threads and findings could be lost or
raced. Our host starts none; we drain actions ourselves until none is
pending, so every rule x matching fact yields exactly one match, in order.

durable-rules 2.0.28 limits (measured, see checker/evaluate/expr.py): more than 64
alternatives matching one fact fail with error 303, and about 512 under one
kind in one ruleset make an assert never return. Rules are therefore packed
into rulesets per fact kind, at most MAX_ALTERNATIVES alternatives each.
Facts are serialised here, without exponents: a number such as 1e-05 makes
durable's parser drop that fact and every later one of the batch, silently.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import marshal
import math
import operator
import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, cast

import numpy as np

# durable-rules 2.0.28, compiled with checker (checker/_vendor/durable/README.md).
from checker._vendor import durable_rules_engine
from checker._vendor.durable import engine as durable
from checker.core.builtin import SCHEMA_INVALID
from checker.core.carried import Carried
from checker.core.findings import Finding, Location, by_place, entity_name, located
from checker.core.made import made, setter
from checker.derive.facts import Fact
from checker.derive.rows import Header, Row
from checker.evaluate.expr import MAX_ALTERNATIVES, CompiledWhen, alternatives, fact_key
from checker.evaluate.memo import Found, Kept, KeptColumns, Memo, MessageMemo, Outcomes, typed
from checker.evaluate.rulebook import CompiledRule
from checker.load.cache import SCALAR_TYPES

# Ruleset names, unique in the process: durable's C engine is one per process
# and every ruleset is deleted once run (run_ruleset). A counter, not a cache:
# it holds no run's data, and two audits in one process never share a name.
_names = itertools.count()
FACT_BATCH = 5_000
# durable reads integers as a C long; beyond about 1e15 a float's digits are
# not its value anyway. No quantity in a rollout plan comes near.
_MAX_MAGNITUDE = 1e15
_MAX_INT = 10**15 - 1


class _QuietHost(durable.Host):  # type: ignore[misc]
    """A durable-rules host without background timer threads."""

    def _run(self) -> None:
        pass


def _number(value: float | int) -> str:
    # Valid input can derive a huge number (a 900 MW server on a 1 mW feed is a
    # utilisation of 1e17 %). Clamped, it still compares as "more than any
    # threshold"; the message shows the true value, rendered from the fact.
    if isinstance(value, int):
        return str(max(-_MAX_INT, min(_MAX_INT, value)))
    if not abs(value) < _MAX_MAGNITUDE:
        value = math.copysign(_MAX_INT, value)
    return np.format_float_positional(value, trim="-")


def _value(value: Any, kind: str, key: str) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (int, float)):
        return _number(value)
    raise TypeError(f"{kind} fact field {key}: unsupported value {value!r}")  # a bug, not input


def _plain_number(value: Any) -> bool:
    """Whether json.dumps writes a number as durable can read it (no exponent, no C-long overflow)."""
    if isinstance(value, float):
        return value == 0 or 1e-4 <= abs(value) < 1e15
    return isinstance(value, bool) or abs(value) < _MAX_MAGNITUDE


def fact_json(index: int, kind: str, values: Mapping[str, Any]) -> str:
    """One fact as durable-rules JSON: a unique id (durable refuses an identical
    fact twice), its kind, and every present field under its durable key."""
    fact: dict[str, Any] = {"id": index, "kind": kind}
    plain = True
    # One pass over the values, the hot loop of every audit: NaN is left out
    # (not_a_number reports it), numbers are checked for a plain JSON form.
    for key, value in values.items():
        if value is None or value != value:
            continue
        if plain and isinstance(value, (int, float)) and not _plain_number(value):
            plain = False
        fact[fact_key(key)] = value
    if plain:
        return json.dumps(fact, ensure_ascii=False)  # the common case, at C speed
    parts = [f"{json.dumps(k, ensure_ascii=False)}: {_value(v, kind, k)}" for k, v in fact.items()]
    return "{" + ", ".join(parts) + "}"


# A number durable would misread, in json.dumps output (separators ", " and
# ": "): an exponent, or 16 digits or more before any dot (>= 1e15). Keys and
# string values never start right after '": ' without a quote, so only
# numbers match; a false match merely takes the exact path.
_UNSAFE_NUMBER = re.compile(r'": -?(?:[0-9]{16}|[0-9.]+[eE])')


def cells_json(kind: str, names: Sequence[str], cells: Sequence[tuple[Any, ...]], first: int = 0) -> str:
    """Facts given as the cells of `names` (None: no value) as a durable JSON
    list, each with its index (counted from `first`) as id.

    The common case is one json.dumps at C speed; a NaN or infinity (which
    json.dumps refuses with allow_nan=False) or a number durable would
    misread sends the whole list through fact_json, fact by fact."""
    keys = [fact_key(name) for name in names]
    listed = [
        {"id": i, "kind": kind, **{k: v for k, v in zip(keys, row, strict=True) if v is not None}}
        for i, row in enumerate(cells, first)
    ]
    try:
        text = json.dumps(listed, ensure_ascii=False, allow_nan=False)
    except ValueError:
        text = None
    if text is None or _UNSAFE_NUMBER.search(text):
        sent = [dict(zip(names, row, strict=True)) for row in cells]
        return "[" + ", ".join(fact_json(i, kind, values) for i, values in enumerate(sent, first)) + "]"
    return text


def _pack(costs: Sequence[int]) -> list[list[int]]:
    """Indices packed in order into groups of at most MAX_ALTERNATIVES total cost."""
    packed: list[list[int]] = [[]]
    budget = 0
    for i, cost in enumerate(costs):
        if packed[-1] and budget + cost > MAX_ALTERNATIVES:
            packed.append([])
            budget = 0
        packed[-1].append(i)
        budget += cost
    return packed


def run_ruleset(conditions: Sequence[Mapping[str, Any]], facts: str) -> set[tuple[int, int]]:
    """(condition index, fact id) for every single-fact condition that fires on the
    facts (a JSON list, each fact with an "id"); the conditions go into one ruleset."""
    name = f"checker{next(_names)}"
    # Actions are drained from the C engine directly (_fired), so `run` is never called.
    definition = {f"r{i}": {"all": [{"m": c}], "run": _never} for i, c in enumerate(conditions)}
    handle = _QuietHost({name: definition}).get_ruleset(name)._handle
    try:
        result = durable_rules_engine.assert_facts(handle, facts)
        # 1 is "not handled": no rule matched any fact, which is normal.
        if result[0] not in (0, 1):
            raise RuntimeError(f"durable-rules refused the facts (code {result[0]})")
        return _fired(handle)
    finally:
        # The C engine keeps every ruleset (and its facts) until deleted.
        durable_rules_engine.delete_ruleset(handle)


def _never(closure: Any) -> None:
    raise AssertionError("durable-rules actions are drained by checker.evaluate.engine._fired")


def _fired(handle: int) -> set[tuple[int, int]]:
    """Every pending action as (rule index, fact id), taken from the C engine.

    durable's Python dispatch (Ruleset.dispatch) builds a closure, serialises
    the session state and re-reads it for every action: most of the rules
    stage on a large fleet. Our actions only record the match and never touch
    the state, so the state is not written back; each action is completed
    and the next one started, until none is pending."""
    fired: set[tuple[int, int]] = set()
    started = durable_rules_engine.start_action(handle)
    while started:
        _, message, state = started
        while message:
            ((action, matched),) = json.loads(message).items()
            fired.add((int(action[1:]), int(matched["m"]["id"])))
            message = durable_rules_engine.complete_and_start_action(handle, state)
        started = durable_rules_engine.start_action(handle)
    return fired


def match_kind(
    kind: str,
    conditions: Sequence[CompiledWhen],
    facts: Sequence[Mapping[str, Any]],
    outcomes: Outcomes | None = None,
    seen: list[Outcome | None] | None = None,
) -> list[tuple[int, int]]:
    """(condition index, fact index) for conditions over facts of one kind, the
    conditions packed into rulesets within durable-rules' alternatives limits.
    `outcomes`: what earlier runs found per distinct fact (checker.evaluate.memo);
    durable is sent only the facts it does not know. `seen`: given, each fact's
    outcome as the memo keeps it is set there (None: a fact with a NaN)."""
    if not conditions or not facts:
        return []
    # durable stores every field it is sent: send only those the conditions read.
    fields = frozenset().union(*(c.fields for c in conditions))
    names, distinct, members, keys = _distinct(facts, fields)
    table = outcomes.table(kind, names, len(conditions)) if outcomes is not None else None
    known = [table.get(key) for key in keys] if table is not None else [None] * len(keys)
    todo = [i for i, got in enumerate(known) if got is None]
    fired_on: dict[int, list[int]] = {i: [] for i in todo}
    chunks = _pack([alternatives(c.condition) for c in conditions])
    # Every condition reads one fact, so facts can go in batches, each into
    # rulesets of its own: durable's memory (it keeps every fact it is sent)
    # and the JSON text stay the size of a batch, however large the fleet.
    for first in range(0, len(todo), FACT_BATCH):
        text = cells_json(kind, names, [distinct[i] for i in todo[first : first + FACT_BATCH]], first)
        for chunk in chunks:
            wrapped = [{"$and": [{"kind": kind}, conditions[i].condition]} for i in chunk]
            for j, one in run_ruleset(wrapped, text):
                fired_on[todo[one]].append(chunk[j])
    for i, fired in fired_on.items():
        known[i] = tuple(sorted(fired))
        # NaN is unequal to itself: a key holding one would never be found again.
        if table is not None and all(map(operator.eq, distinct[i], distinct[i])):
            table.put(keys[i], known[i])
    if seen is not None:
        at = (kind, tuple(names), len(conditions))
        for n, got in enumerate(known):
            if all(map(operator.eq, distinct[n], distinct[n])):
                outcome = Outcome(at, keys[n], tuple(got or ()))
                for i in members[n]:
                    seen[i] = outcome
    return sorted((c, fact) for n, fired in enumerate(known) for c in fired or () for fact in members[n])


class Outcome:
    """One distinct fact's outcome as the memo keeps it: its table (kind, the
    names read, the number of conditions), its key and the conditions that
    fired. Compared by identity: every fact of one distinct tuple shares one."""

    __slots__ = ("fired", "key", "table")

    def __init__(self, table: tuple[str, tuple[str, ...], int], key: tuple[Any, ...], fired: tuple[int, ...]):
        self.table, self.key, self.fired = table, key, fired

    def used(self, outcomes: Outcomes) -> None:
        """Say to the memo this run used it, as a run that matched its fact would."""
        outcomes.table(*self.table).use(self.key, self.fired)


def _distinct(
    facts: Sequence[Mapping[str, Any]], fields: frozenset[str]
) -> tuple[list[str], list[tuple[Any, ...]], list[list[int]], list[tuple[Any, ...]]]:
    """The `fields` the conditions read that the facts have, the distinct
    tuples of their values, for each tuple the indices of every fact
    that holds it, and each tuple's key (its values and their types).

    A condition reads one fact and only those fields, so facts equal in them
    match the same conditions: durable is sent each distinct one once. A rollout
    of a thousand identical servers differs only in names and places, which
    few conditions read. Values are compared with their types (1, 1.0 and true
    are equal in Python, not in JSON)."""
    names, projected = _projected(facts, sorted(fields))
    # Each tuple object spelled once: the rows of a block share one (_projected).
    ids = list(map(id, projected))
    objects = dict(zip(ids, projected, strict=True))
    shared = len(objects) < len(projected)
    spelled: list[Hashable]
    try:
        # Grouped by their marshal bytes (format 2: no references), which tell
        # 1, 1.0 and true apart as the typed key does, at C speed; the typed key
        # (the memo's) is made for each distinct tuple only.
        if shared:
            spellings = map(marshal.dumps, objects.values(), itertools.repeat(2))
            spelled = list(map(dict(zip(objects, spellings, strict=True)).__getitem__, ids))
        else:
            spelled = list(map(marshal.dumps, projected, itertools.repeat(2)))
    except ValueError:  # a value marshal does not write: the typed key of each
        spelled = [(*cells, *map(type, cells)) for cells in projected]
    # Each distinct spelling numbered in the order it first appears, every fact
    # given its number, and each number's facts in order, at C speed.
    number = {key: n for n, key in enumerate(dict.fromkeys(spelled))}
    at = np.fromiter(map(number.__getitem__, spelled), np.intp, len(spelled))
    order = np.argsort(at, kind="stable")
    counts = np.bincount(at, minlength=len(number))
    ends = np.cumsum(counts)
    starts = (ends - counts).tolist()
    distinct = [projected[i] for i in order[starts].tolist()]  # each number's first fact
    members = [part.tolist() for part in np.split(order, ends[:-1])]
    return names, distinct, members, [(*cells, *map(type, cells)) for cells in distinct]


def _projected(
    facts: Sequence[Mapping[str, Any]], names: list[str]
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """`names`, and their values in each fact (None where absent), as tuples.

    Facts built by checker.derive.facts are rows of one header per kind: their cells
    are picked by position at C speed. A name the header lacks is None in
    every fact, as in facts of other headers: the names (the memo's table,
    checker.evaluate.memo) are the same however the facts' columns are laid out
    (a resident process carries each file's rows, a process of its own makes
    them all at once)."""
    rows = cast(Sequence[Row], facts) if set(map(type, facts)) == {Row} else ()
    headers = set(map(operator.attrgetter("header"), rows))
    if len(headers) != 1:
        return names, [tuple(map(values.get, names)) for values in facts]
    (header,) = headers
    absent = len(header.names)  # one past the cells: None, appended where a name is absent
    positions = [header.index.get(name, absent) for name in names]
    project = _projector(positions, absent)
    # Runs of rows of one block (a kept file's rows are one run), found at C speed.
    blocks = np.fromiter(map(id, map(operator.attrgetter("block"), rows)), np.uintp, len(rows))
    cuts = [0, *(np.flatnonzero(blocks[1:] != blocks[:-1]) + 1).tolist(), len(rows)]
    projected: list[tuple[Any, ...]] = []
    for lo, hi in itertools.pairwise(cuts):
        projected += _project_block(rows[lo:hi], names, header, project)
    return names, projected


# A block whose conditions read more columns that differ among its rows is projected a row at a time.
_MOST_VARYING = 8


Projector = Callable[[tuple[Any, ...]], tuple[Any, ...]]  # a row's cells -> the cells read


def _project_block(
    rows: Sequence[Row], names: list[str], header: Header, project: Projector
) -> list[tuple[Any, ...]]:
    """The projections of rows of one block (or of no block). A block's columns
    alike in all its rows (Block.same) are the same in every projection: its
    rows are told apart by the other columns read alone, spelled by marshal
    (format 2: 1, 1.0 and true, or 0.0 and -0.0, differ), and each distinct
    projection is made once and shared by its rows."""
    block = rows[0].block
    cells = list(map(operator.attrgetter("cells"), rows))
    varying = [header.index[n] for n in names if n in header.index and (block is None or n not in block.same)]
    if block is None or len(varying) > _MOST_VARYING:
        return list(map(project, cells))
    keys: list[Hashable] = [b""] * len(cells)
    if varying:
        try:
            keys = list(map(marshal.dumps, map(operator.itemgetter(*varying), cells), itertools.repeat(2)))
        except ValueError:  # a value marshal does not write: projected a row at a time
            return list(map(project, cells))
    firsts = dict(zip(reversed(keys), reversed(cells), strict=True))  # each key's first row
    shared = {key: project(one) for key, one in firsts.items()}
    return list(map(shared.__getitem__, keys))


def _projector(positions: list[int], absent: int) -> Projector:
    """The cells at `positions` of a row's cells, as a tuple (`absent`: one past
    the cells, None)."""
    if absent in positions:
        pick = operator.itemgetter(*positions)
        if len(positions) > 1:
            return lambda cells: pick((*cells, None))
        return lambda cells: (pick((*cells, None)),)
    if len(positions) > 1:
        return operator.itemgetter(*positions)
    (only,) = positions
    return lambda cells: (cells[only],)


def match(
    rules: Sequence[CompiledRule],
    facts: Sequence[tuple[str, Mapping[str, Any]]],
    outcomes: Outcomes | None = None,
    seen: list[Outcome | None] | None = None,
) -> list[tuple[int, int]]:
    """(rule index, fact index) for every rule that fires on a (kind, values) fact
    (`seen`: as match_kind's, for every fact)."""
    rules_by_kind: dict[str, list[int]] = {}
    for i, rule in enumerate(rules):
        rules_by_kind.setdefault(rule.rule.on, []).append(i)
    facts_by_kind: dict[str, list[int]] = {}
    for i, (kind, _) in enumerate(facts):
        facts_by_kind.setdefault(kind, []).append(i)
    fired: list[tuple[int, int]] = []
    for kind, rule_ids in rules_by_kind.items():
        fact_ids = facts_by_kind.get(kind, [])
        values = [facts[f][1] for f in fact_ids]
        some: list[Outcome | None] | None = [None] * len(fact_ids) if seen is not None else None
        pairs = match_kind(kind, [rules[r].when for r in rule_ids], values, outcomes, some)
        fired += [(rule_ids[r], fact_ids[f]) for r, f in pairs]
        for f, outcome in zip(fact_ids, some or (), strict=False):
            seen[f] = outcome  # type: ignore[index]
    return sorted(fired)


def not_a_number(facts: Sequence[Fact]) -> list[Finding]:
    """A field that is NaN cannot be compared: it is left out of the fact (no rule
    fires on it) and reported at the entity it belongs to, never skipped silently."""
    if not _any_nan(facts):
        return []
    return [
        located(
            SCHEMA_INVALID,
            "schema",
            Location(fact.file, fact.src.line, fact.src.column),
            f"{fact.entity}: {name} cannot be evaluated (it is not a number); check the values it is "
            "derived from",
            entity=fact.entity,
        )
        for fact in facts
        if _has_nan(fact.values)
        for name, value in fact.values.items()
        if value != value  # only NaN is unequal to itself
    ]


def _any_nan(facts: Sequence[Fact]) -> bool:
    """Whether any fact holds NaN (a NaN is rare: most audits have none). A row
    answers for itself, once in its life (Row.has_nan: a row carried from the
    last command was asked then); other values are asked now."""
    values = list(map(operator.attrgetter("values"), facts))
    if set(map(type, values)) != {Row}:
        return any(map(_has_nan, values))
    # What each row knows already read at C speed; only the others asked.
    known = list(map(operator.attrgetter("nan"), values))
    if True in known:
        return True
    return None in known and any(row.has_nan for row, nan in zip(values, known, strict=True) if nan is None)


def _has_nan(values: Mapping[str, Any]) -> bool:
    """Whether any value is NaN, asked of every value at C speed (map and
    operator.ne): all facts are checked, few fail."""
    if isinstance(values, Row):
        return values.has_nan
    cells = tuple(values.values())
    return any(map(operator.ne, cells, cells))


@dataclass(frozen=True)
class Messages:
    """The messages of the rule findings a format shows, rendered when it asks
    (`of`). evaluate leaves them empty: a 10,000-server audit has 7,500 findings
    and its log shows 300; rendering them all costs 0.14 s, more than the rules
    that found them. A message template that fails on a finding nobody sees is
    then not an error; `checker rules test` runs every template on its rule's
    examples."""

    rules: Mapping[str, CompiledRule] = field(default_factory=dict)
    facts: Sequence[Fact] = ()
    # The messages earlier runs rendered (checker.evaluate.memo); None: render each.
    memo: MessageMemo | None = None
    # What `shape` says of the values of rule findings, by fact index and rule id,
    # where worked out already (the resident process's: _carried_findings).
    shaped: Sequence[Mapping[str, Hashable]] = ()
    # How each rule's message fields are read off rows of each header, made as asked (values_shape).
    pickers: Pickers = field(default_factory=dict, compare=False, repr=False)

    def of(self, f: Finding) -> Finding:
        """`f` with its message (as it is when it has one, or is not a rule's)."""
        if f.message or f.fact < 0:
            return f
        fact = self.facts[f.fact]
        message = self._message(self.rules[f.rule], fact)
        # The constructor, not dataclasses.replace: a third of the cost of a message.
        return Finding(
            f.rule, f.severity, f.category, f.entity, message, f.remediation,
            f.file, f.line, f.column, f.waived, f.fact,
        )


    def _message(self, rule: CompiledRule, fact: Fact) -> str:
        if self.memo is None:
            return rule.render(fact.values, fact.entity)
        read = tuple(map(fact.values.get, rule.message_fields))
        # NaN is unequal to itself: such a key would never be found again.
        if not SCALAR_TYPES.issuperset(map(type, read)) or not all(map(operator.eq, read, read)):
            return rule.render(fact.values, fact.entity)
        table, key = self.memo.table(rule.id), typed(read)
        message: str | None = table.get(key)
        if message is None:
            message = rule.render(fact.values, fact.entity)
            table.put(key, message)
        return message

    def save(self) -> None:
        """Keep the messages rendered so far for the next run (a no-op without a memo)."""
        if self.memo is not None:
            self.memo.save()

    def shape(self, f: Finding) -> Hashable:
        """What `f`'s message says but for the name of its entity, without
        rendering it: the values its template reads, the entity's own name
        replaced by a marker (`render.groups` shows alike findings once).
        Findings that carry their message are shaped from its text."""
        if f.message or f.fact < 0:
            name = entity_name(f.entity)
            text = _SELF.join(_name_pattern(name).split(f.message)) if name else f.message
            return (f.rule, f.severity, f.waived, text)
        got = self.shaped[f.fact].get(f.rule) if self.shaped else None
        if got is None:
            got = values_shape(self.rules[f.rule], self.facts[f.fact], self.pickers)
        return (f.rule, f.severity, f.waived, got)


def values_shape(rule: CompiledRule, fact: Fact, pickers: Pickers | None = None) -> Hashable:
    """The values `rule`'s message reads of `fact`, its entity's own name replaced
    by a marker (Messages.shape of a rule finding, but for its rule, severity and
    waived state)."""
    name = entity_name(fact.entity)
    own = {name, fact.entity, name.rpartition("/")[2]}  # rack `A01` of facility `sh1` is `rack/sh1/A01`
    values = fact.values
    if pickers is not None and isinstance(values, Row):  # its cells picked at C speed, as Row.get reads them
        at = (rule.message_fields, values.header)
        pick = pickers.get(at) or pickers.setdefault(at, _picker(*at))
        read = pick(values.cells)
    else:
        read = tuple(map(values.get, rule.message_fields))
    if SCALAR_TYPES.issuperset(map(type, read)):  # the common case, at a fifth of the cost of _frozen
        return tuple([_SELF if v in own else v for v in read])
    return tuple(_frozen(v, own) for v in read)


# Stands for the entity's own name in a shape.
_SELF = "\x00"


# The picker of each rule's message fields in rows of each header (values_shape), made once a run.
Pickers = dict[tuple[tuple[str, ...], Header], Projector]


def _picker(names: tuple[str, ...], header: Header) -> Projector:
    """The cells of `names` in a row of `header`, None where it has no such
    column (Row.get: a None cell and an absent name both read None)."""
    absent = len(header.names)
    return _projector([header.index.get(name, absent) for name in names], absent) if names else _nothing


def _nothing(cells: tuple[Any, ...]) -> tuple[Any, ...]:
    return ()


def _name_pattern(name: str) -> re.Pattern[str]:
    # The name as a whole word: server `s1` is not the `s1` in `s12`.
    return re.compile(rf"(?<![\w./-]){re.escape(name)}(?![\w-])")


def _frozen(value: Any, own: set[str]) -> Hashable:
    if isinstance(value, str) and value in own:
        return _SELF
    if isinstance(value, list | tuple):
        return tuple(_frozen(v, own) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _frozen(v, own)) for k, v in value.items()))
    return value if isinstance(value, Hashable) else repr(value)


def evaluate(
    rules: Sequence[CompiledRule], facts: Sequence[Fact], memo: Memo | None = None,
    carried: Carried | None = None,
) -> tuple[list[Finding], Messages]:
    """One finding per rule x matching fact, located at `locate` or the entity,
    in output order; the messages of rule findings are rendered when shown.
    `memo`: the outcomes and messages of earlier runs (checker.evaluate.memo),
    the same findings and messages found cheaper. `carried`: the resident
    process's (checker.core.carried): what the rules found on each fact the
    last command had too (the same object) is found so again, unasked."""
    findings = not_a_number(facts)
    outcomes = memo.outcomes if memo else None
    shaped: list[Mapping[str, Hashable]] = []
    # What was found on kept rows (a process of its own with a cache folder; the
    # resident process carries what it found on each fact instead).
    kept = _kept_blocks(facts) if memo is not None and carried is None else {}
    if memo is not None and kept:
        findings += _found_again(rules, facts, outcomes, memo.found, kept, shaped)
    elif carried is None:
        fired = match(rules, [(f.kind, f.values) for f in facts], outcomes)
        by, on = [r for r, _ in fired], [i for _, i in fired]
        findings += _findings(list(map(rules.__getitem__, by)), list(map(facts.__getitem__, on)), on)
    else:
        findings += _carried_findings(rules, facts, outcomes, carried, shaped)
    if outcomes is not None:
        outcomes.save()
    messages = Messages({r.id: r for r in rules}, facts, memo.messages if memo else None, shaped)
    return sorted(findings, key=by_place), messages


def _findings(rules: Sequence[CompiledRule], facts: Sequence[Fact], at: Sequence[int]) -> list[Finding]:
    """The finding of each rule of `rules` on the fact beside it in `facts` (at
    index `at` among the audit's facts), located at the rule's `locate` path or
    the entity: made a column at a time (a 100,000-server fleet's 75,000 rack
    findings took 0.47 s made one by one, most of it `Finding.__init__`)."""
    return _made_findings(rules, facts, at, list(map(_located, facts, map(_LOCATE_PATH, rules))))


def _made_findings(
    rules: Sequence[CompiledRule], facts: Sequence[Fact], at: Sequence[int],
    positions: Sequence[tuple[int, int]],
) -> list[Finding]:
    """The finding of each rule of `rules` on the fact beside it, at the position beside it."""
    each = itertools.repeat
    columns = {
        "rule": map(_RULE_ID, rules), "severity": map(_SEVERITY, rules), "category": map(_CATEGORY, rules),
        "entity": map(_ENTITY, facts), "message": each(""), "remediation": map(_REMEDIATION, rules),
        "file": map(_FILE, facts), "line": map(_LINE, positions), "column": map(_COLUMN, positions),
        "waived": each(False), "fact": at,
    }
    slots = [(_SET_FINDING[name], cells) for name, cells in columns.items()]
    found: list[Finding] = made(Finding, len(at), slots)
    return found


def _kept_blocks(facts: Sequence[Fact]) -> dict[int, tuple[bytes, list[int]]]:
    """The facts whose rows are kept rows (a servers file's or a chunk of racks or
    feeds: checker.derive.kept_rows, kept_tables; a Block with a version), by
    block: its version and the facts' indices, in order. Found at C speed: a
    block's rows are one run of facts."""
    rows = list(map(_VALUES, facts))
    if set(map(type, rows)) != {Row}:  # values of other kinds (a test's dicts): none kept
        return {}
    blocks = list(map(_BLOCK, rows))
    ids = np.fromiter(map(id, blocks), np.uintp, len(blocks))
    cuts = [0, *(np.flatnonzero(ids[1:] != ids[:-1]) + 1).tolist(), len(blocks)]
    kept: dict[int, tuple[bytes, list[int]]] = {}
    for lo, hi in itertools.pairwise(cuts):
        block = blocks[lo]
        if block is not None and block.version is not None:
            kept.setdefault(id(block), (block.version, []))[1].extend(range(lo, hi))
    return kept


def _found_again(
    rules: Sequence[CompiledRule], facts: Sequence[Fact], outcomes: Outcomes | None, found: Found,
    kept: Mapping[int, tuple[bytes, list[int]]], shaped: list[Mapping[str, Hashable]],
) -> list[Finding]:
    """The findings of the rules on the facts, those on kept rows as an earlier
    run found them (memo.Found: neither matched nor located again); the others
    matched, and what was found on each block of kept rows without an entry
    kept for the next run. `shaped` is given each fact's findings' values_shape
    where known (kept rows'), as _carried_findings gives it."""
    shapes: list[Mapping[str, Hashable]] = [_NO_SHAPES] * len(facts)
    covered = np.zeros(len(facts), dtype=bool)
    out: list[Finding] = []
    missing: list[tuple[bytes, list[int]]] = []
    for version, at in kept.values():
        got = found.get(version, len(at))
        if got is None:
            missing.append((version, at))
            continue
        covered[at] = True
        out += _kept_findings(rules, facts, at, got, shapes)
    todo = np.flatnonzero(~covered).tolist()
    fired = match(rules, [(facts[i].kind, facts[i].values) for i in todo], outcomes)
    by, on = [r for r, _ in fired], [todo[j] for _, j in fired]
    new = _findings(list(map(rules.__getitem__, by)), list(map(facts.__getitem__, on)), on)
    out += new
    if missing:  # each finding on those blocks' rows, shaped once here (grouping reads it from `shapes`)
        pending = np.zeros(len(facts), dtype=bool)
        for _, at in missing:
            pending[at] = True
        pickers: Pickers = {}
        on_fact: dict[int, list[Kept]] = {}
        for r, finding in zip(by, new, strict=True):
            if pending[finding.fact]:
                shape = cast(tuple[Any, ...], values_shape(rules[r], facts[finding.fact], pickers))
                on_fact.setdefault(finding.fact, []).append((r, finding.line, finding.column, shape))
        for i, items in on_fact.items():
            shapes[i] = {rules[r].id: shape for r, _, _, shape in items}
        for version, at in missing:
            rows = [tuple(on_fact.get(i, ())) for i in at]
            if all(SCALAR_TYPES.issuperset(map(type, shape)) for row in rows for *_, shape in row):
                found.put(version, rows)  # else (a list a message reads): matched each run
    shaped += shapes
    return out


def _kept_findings(
    rules: Sequence[CompiledRule], facts: Sequence[Fact], at: Sequence[int], got: KeptColumns,
    shapes: list[Mapping[str, Hashable]],
) -> list[Finding]:
    """The findings an entry of memo.Found holds on the facts at `at`, made a
    column at a time as _findings makes them, and their shapes put in `shapes`."""
    on = list(map(at.__getitem__, got.rows))
    by = list(map(rules.__getitem__, got.rules))
    per_fact: dict[int, dict[str, Hashable]] = {}
    for i, rule, shape in zip(on, map(_RULE_ID, by), got.shapes, strict=True):
        per_fact.setdefault(i, {})[rule] = shape
    for i, own in per_fact.items():
        shapes[i] = own
    positions = list(zip(got.lines, got.columns, strict=True))
    return _made_findings(by, list(map(facts.__getitem__, on)), on, positions)


_VALUES, _BLOCK = operator.attrgetter("values"), operator.attrgetter("block")


def _located(fact: Fact, path: tuple[str | int, ...]) -> tuple[int, int]:
    return fact.src.locate(path, key=True)


_SET_FINDING = {f.name: setter(Finding, f.name) for f in dataclasses.fields(Finding)}
_LOCATE_PATH = operator.attrgetter("locate_path")
_RULE_ID, _SEVERITY = operator.attrgetter("rule.id"), operator.attrgetter("rule.severity")
_CATEGORY, _REMEDIATION = operator.attrgetter("rule.category"), operator.attrgetter("rule.remediation")
_ENTITY, _FILE = operator.attrgetter("entity"), operator.attrgetter("file")
_LINE, _COLUMN = operator.itemgetter(0), operator.itemgetter(1)


@dataclass(frozen=True)
class _Found:
    """What the rules found on one fact: its findings (made for it at `index`
    among the facts) and its outcome as the memo keeps it."""

    fact: Fact
    index: int
    findings: tuple[Finding, ...]
    outcome: Outcome | None
    shapes: Mapping[str, Hashable]  # of each finding's values (values_shape), by its rule

    @classmethod
    def of(cls, fact: Fact, index: int, rules: Sequence[CompiledRule], outcome: Outcome | None) -> _Found:
        """The findings of `rules` (those that fired) on `fact`, at `index` among the facts."""
        findings = tuple(_findings(rules, [fact] * len(rules), [index] * len(rules)))
        shapes = {rule.id: values_shape(rule, fact) for rule in rules} if rules else _NO_SHAPES
        return cls(fact, index, findings, outcome, shapes)

    def at(self, index: int) -> _Found:
        """The same findings of the fact at another index."""
        moved = tuple(dataclasses.replace(f, fact=index) for f in self.findings)
        return _Found(self.fact, index, moved, self.outcome, self.shapes)


_NO_SHAPES: Mapping[str, Hashable] = MappingProxyType({})


class _LastFound:
    """What the rules found on each fact of one file in the last command that read
    it (by the fact's id: the fact is held, so its id is no other object's),
    for these rules only."""

    def __init__(self) -> None:
        self.rules: tuple[CompiledRule, ...] = ()
        self.found: dict[int, _Found] = {}

    def of(self, rules: Sequence[CompiledRule]) -> dict[int, _Found]:
        """What was found by these very rules (nothing, if by others)."""
        if len(self.rules) != len(rules) or not all(map(operator.is_, self.rules, rules)):
            self.rules, self.found = tuple(rules), {}
        return self.found


def _carried_findings(
    rules: Sequence[CompiledRule], facts: Sequence[Fact], outcomes: Outcomes | None, carried: Carried,
    shaped: list[Mapping[str, Hashable]],
) -> list[Finding]:
    """The findings of the rules on the facts, those of each fact the last command
    had (the same object: it is immutable, and so is each rule) as they were
    then: only the others are matched and located. The memo is told every
    fact's outcome, as a run that matched them all would tell it; `shaped` is
    given each fact's findings' values_shape, worked out once in their life."""
    # One holder per rulebook and file: what was found in a file is kept while it is read,
    # whichever other files are (audits of two inventories in turn keep both).
    book = marshal.dumps(list(map(id, rules)), 2)
    last = [
        carried.get("found", hashlib.blake2b(book + file.encode()).digest(), _LastFound, _LastFound)
        for file in sorted(set(map(operator.attrgetter("file"), facts)))
    ]
    # Each holder's table is that of the last command that read its file: most share one.
    was: dict[int, _Found] = {}
    for table in {id(t): t for t in (holder.of(rules) for holder in last)}.values():
        was.update(table)
    # A table holds its facts: a fact's id found there is that very fact.
    known: list[_Found | None] = list(map(was.get, map(id, facts)))
    new = np.fromiter(map(operator.is_, known, itertools.repeat(None)), bool, len(known))
    todo = np.flatnonzero(new).tolist()
    seen: list[Outcome | None] = [None] * len(todo)
    fired: dict[int, list[int]] = {}
    for r, j in match(rules, [(facts[i].kind, facts[i].values) for i in todo], outcomes, seen):
        fired.setdefault(j, []).append(r)
    for j, i in enumerate(todo):
        known[i] = _Found.of(facts[i], i, [rules[r] for r in fired.get(j, ())], seen[j])
    found = cast(list[_Found], known)
    where = np.fromiter(map(operator.attrgetter("index"), found), np.intp, len(found))
    for i in np.flatnonzero(where != np.arange(len(found))).tolist():
        found[i] = found[i].at(i)
    shaped += map(operator.attrgetter("shapes"), found)
    if outcomes is not None:
        for outcome in set(map(operator.attrgetter("outcome"), found)) - {None}:
            outcome.used(outcomes)
    now = dict(zip(map(id, facts), found, strict=True))
    for holder in last:
        holder.found = now
    return [f for got in found for f in got.findings]
