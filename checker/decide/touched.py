"""Where the change is: `checker diff`'s new findings moved to the lines it touched.

A finding points at the field its rule names (`locate`) or at its entity. A
server that inherits the field from `defaults:`, a catalog model or a YAML
anchor is then pointed at the shared line, and a rack's or a facility's
finding at the rack or the facility, while what the change did was add a
server to it. On a pull request such an annotation lands outside the diff,
where no file view shows it. So a new finding whose line the change did not
touch moves to the first line the change touched of, in this order:

1. its entity's own lines (a server's own mapping, not what it inherits);
2. the own lines of the servers its entity holds (HOLDS: a rack's, a feed's
   rack's, a facility's, a workload's), the first in the inventory's order;
3. the lines those values come from (`defaults:`, an anchor): a change to the
   defaults is where the cause of its servers' findings is;

and stays where it is when the change touched none of them (it was caused
elsewhere: a catalog model, a rule file). A waiver's finding stays on the
waiver, which is what it is about.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from checker.core.findings import Finding
from checker.derive.facts import Fact
from checker.load.build import written
from checker.source.parse import Src


@dataclass(frozen=True)
class Lines:
    """The lines of one file the change touched: sorted, disjoint (first, last) spans."""

    spans: tuple[tuple[int, int], ...] = ()

    def __contains__(self, line: object) -> bool:
        if not isinstance(line, int):
            return False
        i = bisect.bisect_right(self.spans, (line, float("inf")))
        return i > 0 and self.spans[i - 1][0] <= line <= self.spans[i - 1][1]

    def __bool__(self) -> bool:
        return bool(self.spans)



EVERY_LINE = Lines(((1, 2**31),))  # a file the base does not have


# What holds servers, as a key of the fact of an entity of each kind: the
# servers a change touched in it are where its finding's cause is.
Key = tuple[Any, ...]
HOLDS: dict[str, Callable[[Mapping[str, Any]], Key]] = {
    "rack": lambda v: ("rack", v.get("facility"), v.get("name")),
    "feed": lambda v: ("rack", v.get("facility"), v.get("rack")),
    "facility": lambda v: ("facility", v.get("name")),
    "ups": lambda v: ("facility", v.get("facility")),
    "cdu": lambda v: ("facility", v.get("facility")),
    "cooling_unit": lambda v: ("facility", v.get("facility")),
    "workload": lambda v: ("workload", v.get("name")),
}


def _holders(server: Mapping[str, Any]) -> tuple[Key, ...]:
    """The keys (as HOLDS spells them) of what holds a server."""
    return (
        ("rack", server.get("facility"), server.get("rack")),
        ("facility", server.get("facility")),
        ("workload", server.get("workload")),
    )


KEPT_CATEGORIES = frozenset({"waiver"})


class _Index:
    """The head's facts by entity, and its servers by what holds them (each
    built when first asked for), servers in the inventory's order."""

    def __init__(self, facts: Sequence[Fact]) -> None:
        self._facts = facts
        self._own: dict[str, Fact] | None = None
        self._held: dict[Key, list[Fact]] | None = None

    def own(self, entity: str) -> Fact | None:
        if self._own is None:
            self._own = {}
            for fact in self._facts:
                # A server's framework and container facts share its id: the server's own is kept.
                if fact.kind in HOLDS or fact.kind == "server":
                    self._own.setdefault(fact.entity, fact)
        return self._own.get(entity)

    def held(self, fact: Fact) -> list[Fact]:
        holds = HOLDS.get(fact.kind)
        if holds is None:
            return []
        if self._held is None:
            self._held = {}
            for server in self._facts:
                if server.kind == "server":
                    for k in _holders(server.values):
                        self._held.setdefault(k, []).append(server)
        return self._held.get(holds(fact.values), [])



def _positions(src: Src) -> Iterator[tuple[int, int]]:
    """Every position in a source map: its own, its keys' and its children's."""
    stack = [src]
    while stack:
        node = stack.pop()
        yield node.line, node.column
        if node.keys:
            yield from node.keys.values()
        children = node.children
        if isinstance(children, dict):
            stack.extend(children.values())
        elif isinstance(children, list):
            stack.extend(children)


def _first_touched(fact: Fact, lines: Lines, inherited: bool) -> tuple[int, int] | None:
    """The first position the change touched among the lines the entity wrote
    itself (its own map starts at its line: a position before it is an
    anchor's it merges, since an alias always comes after its anchor), or,
    `inherited`, among every line its values come from (`defaults:`, anchors)."""
    if inherited:
        hits = [p for p in _positions(fact.src) if p[0] in lines]
        return min(hits) if hits else None
    src = written(fact.src)
    start = (src.line, src.column)
    if start[0] in lines:
        return start
    hits = [p for p in _positions(src) if p >= start and p[0] in lines]
    return min(hits) if hits else None


def relocate(
    findings: Iterable[Finding], facts: Sequence[Fact], touched: Callable[[str], Lines]
) -> tuple[Finding, ...]:
    """`findings` (the head's), each on a line the change touched where its cause is."""
    index = _Index(facts)
    # A facility's findings walk the same servers: each one's answer is worked out once.
    seen: dict[tuple[int, bool], tuple[int, int] | None] = {}

    def first(fact: Fact, inherited: bool) -> tuple[int, int] | None:
        k = (id(fact), inherited)
        if k not in seen:
            lines = touched(fact.file)
            seen[k] = _first_touched(fact, lines, inherited) if lines else None
        return seen[k]

    return tuple(_moved(f, index, touched, first) or f for f in findings)


def _moved(
    f: Finding,
    index: _Index,
    touched: Callable[[str], Lines],
    first: Callable[[Fact, bool], tuple[int, int] | None],
) -> Finding | None:
    if not f.entity or f.category in KEPT_CATEGORIES or f.line in touched(f.file):
        return None
    own = index.own(f.entity)
    if own is None:
        return None
    candidates = [own, *index.held(own)]
    for inherited in (False, True):
        for fact in candidates:
            where = first(fact, inherited)
            if where is not None:
                return replace(f, file=fact.file, line=where[0], column=where[1])
    return None

