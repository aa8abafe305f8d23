"""Alike findings shown once: the formats people read (text, Markdown, the
pull-request comment) show the findings of one rule whose messages differ only
in their entity's name as one line, with how many there are and their names.

Sixteen "server ... runs an unknown framework" lines for one rack say one thing
sixteen times; a reviewer wants it once, with the servers it covers. Grouping
is display only, like the per-rule cap: JSON, SARIF, JUnit, the annotations and
the verdict keep one finding per entity, and `--no-group` shows one line each.

Alike means same rule, severity and waived state, and a message that is the
same but for the entity's own name (Messages.shape: the values the message's
template reads, so only the first finding of a group has its message
rendered). The group stands where its first finding stands in output order,
at that finding's place; its other members are named, and each name is the
entity `checker explain` and JSON know it by.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass

from checker.core.findings import Finding, entity_name
from checker.decide.result import AuditResult

# Names listed in a line before "and N more": a line a person can read.
NAMES_SHOWN = 10


@dataclass(frozen=True)
class FindingGroup:
    first: Finding  # shown in full, with its message
    others: tuple[Finding, ...] = ()  # alike, in output order

    @property
    def findings(self) -> tuple[Finding, ...]:
        return (self.first, *self.others)

    def listed(self, limit: int = NAMES_SHOWN) -> tuple[tuple[Finding, ...], int]:
        """The other members a line names (at most `limit`, 0: all) and how many it does not."""
        if limit <= 0 or len(self.others) <= limit:
            return self.others, 0
        return self.others[:limit], len(self.others) - limit


def name_of(f: Finding) -> str:
    """What a grouped line calls a member: its entity's name (`sh1-b01-inf2`)."""
    return entity_name(f.entity) or f.entity


@dataclass(frozen=True)
class ShownGroups:
    groups: tuple[FindingGroup, ...]  # in output order; first findings with their messages
    left_out: dict[str, int]  # rule id -> findings in groups not shown (rules that lost some)


def group(findings: Iterable[Finding], shape: Callable[[Finding], Hashable]) -> list[FindingGroup]:
    """Alike findings together, each group where its first member is; a finding
    without an entity (an input error) is its own group: its place is all it has."""
    members: dict[Hashable, list[Finding]] = {}
    order: list[Hashable] = []
    for i, f in enumerate(findings):
        key = shape(f) if f.entity else ("", i)
        if key not in members:
            members[key] = []
            order.append(key)
        members[key].append(f)
    return [FindingGroup(members[k][0], tuple(members[k][1:])) for k in order]


def shown_groups(result: AuditResult, limit: int, *, alike: bool = True) -> ShownGroups:
    """The first `limit` groups of each rule (0: every one), in output order,
    their first findings with messages; `alike=False`: a group per finding."""
    groups: Iterable[FindingGroup] = (
        group(result.detected, result.messages.shape) if alike else map(FindingGroup, result.detected)
    )
    kept: list[FindingGroup] = []
    seen: dict[str, int] = {}
    left: dict[str, int] = {}
    for g in groups:
        rule = g.first.rule
        seen[rule] = seen.get(rule, 0) + 1
        if limit <= 0 or seen[rule] <= limit:
            kept.append(g)
        else:
            left[rule] = left.get(rule, 0) + len(g.others) + 1
    shown = [FindingGroup(result.messages.of(g.first), g.others) for g in kept]
    return ShownGroups(tuple(shown), dict(sorted(left.items())))
