"""Waivers: a finding of one rule on one entity (globs allowed) is accepted until a date.

`rule: power.rack-*` and `entity: rack/sh1/A0*` are fnmatch globs over rule ids
and entity ids. An expired waiver no longer waives and is an error; one that
expires within 30 days of --as-of is a warning (the build will fail soon); one
that matches no finding is a warning. Reason, owner and expiry are required
(checker/load/models.py).
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from checker.core.builtin import SCHEMA_REFERENCE, WAIVER_EXPIRED, WAIVER_EXPIRING, WAIVER_UNUSED
from checker.core.errors import clip
from checker.core.findings import Finding, Severity, located
from checker.core.suggest import did_you_mean
from checker.load.build import Placed
from checker.load.models import Waiver

EXPIRING_DAYS = 30


_GLOB = re.compile(r"[*?\[]")


class _Index:
    """The active waivers by what they name, so matching a finding looks at the
    waivers that name its rule and entity (a dict lookup) and those whose
    patterns hold a glob, not at every waiver: thousands of waivers over
    thousands of findings stay linear."""

    def __init__(self, waivers: Sequence[Placed[Waiver]]) -> None:
        self.exact: dict[tuple[str, str], list[int]] = {}
        self.by_rule: dict[str, list[tuple[re.Pattern[str], int]]] = {}
        self.globbed: list[tuple[re.Pattern[str], re.Pattern[str], int]] = []
        for w in waivers:
            rule, entity = w.value.rule, w.value.entity
            if _GLOB.search(rule):
                self.globbed.append((_compiled(rule), _compiled(entity), id(w)))
            elif _GLOB.search(entity):
                self.by_rule.setdefault(rule, []).append((_compiled(entity), id(w)))
            else:
                self.exact.setdefault((rule, entity), []).append(id(w))

    def names(self, rule: str) -> bool:
        """Whether a waiver can name findings of `rule` (most rules have none)."""
        return bool(self.globbed) or rule in self.by_rule or rule in self._exact_rules

    @functools.cached_property
    def _exact_rules(self) -> frozenset[str]:
        return frozenset(rule for rule, _ in self.exact)

    def hits(self, f: Finding) -> list[int]:
        found = list(self.exact.get((f.rule, f.entity), ()))
        found += [i for entity, i in self.by_rule.get(f.rule, ()) if entity.match(f.entity)]
        found += [i for rule, entity, i in self.globbed if rule.match(f.rule) and entity.match(f.entity)]
        return found


def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(fnmatch.translate(pattern))  # fnmatchcase's own translation


@dataclass(frozen=True)
class WaiverRecord:
    """A waiver as the reports list it: what it waives, who owns it, why, until when,
    and its state on the audit day (active, expiring, expired, unused)."""

    rule: str
    entity: str
    owner: str
    reason: str
    expires: dt.date
    file: str
    line: int
    state: str
    waived: int  # findings it waives


def waiver_records(
    findings: Sequence[Finding], waivers: Sequence[Placed[Waiver]], as_of: dt.date
) -> tuple[WaiverRecord, ...]:
    """Every waiver, in file order, with the count of the (waived) findings it matches
    (expired ones too: through an index of every waiver, not each against each finding)."""
    index = _Index(waivers)
    matched: dict[int, int] = {}
    for f in findings:
        if f.waived:
            for i in index.hits(f):
                matched[i] = matched.get(i, 0) + 1
    out = []
    for w in waivers:
        v = w.value
        n = matched.get(id(w), 0)
        if v.expires < as_of:
            state = "expired"
        elif n == 0:
            state = "unused"
        elif (v.expires - as_of).days <= EXPIRING_DAYS:
            state = "expiring"
        else:
            state = "active"
        at = w.at()
        out.append(WaiverRecord(v.rule, v.entity, v.owner, v.reason, v.expires, w.file, at.line, state, n))
    return tuple(sorted(out, key=lambda r: (r.file, r.line)))


def apply_waivers(
    findings: Sequence[Finding],
    waivers: Sequence[Placed[Waiver]],
    as_of: dt.date,
    selected: Sequence[str],
    known_rules: Sequence[str],
) -> list[Finding]:
    """Mark waived findings and report expired, expiring, unused and dangling waivers."""
    index = _Index([w for w in waivers if w.value.expires >= as_of])
    named = {rule: index.names(rule) for rule in {f.rule for f in findings}}
    used: set[int] = set()
    out: list[Finding] = []
    for f in findings:
        hits = index.hits(f) if named[f.rule] and f.category != "schema" else []
        used.update(hits)
        out.append(f.with_waived() if hits else f)
    for w in waivers:
        out.extend(_waiver_findings(w, as_of, id(w) in used, selected, known_rules))
    return out


def _waiver_findings(
    w: Placed[Waiver],
    as_of: dt.date,
    used: bool,
    selected: Sequence[str],
    known_rules: Sequence[str],
) -> list[Finding]:
    v = w.value
    what = f"waiver for {clip(v.rule)} on {clip(v.entity)}"
    if not any(fnmatch.fnmatchcase(rule, v.rule) for rule in known_rules):
        hint = did_you_mean(v.rule, known_rules)
        message = f"waiver names unknown rule '{clip(v.rule)}'{hint}"
        where = w.at(["rule"], key=False)
        return [located(SCHEMA_REFERENCE, "schema", where, message, entity=clip(v.entity))]
    if v.expires < as_of:
        message = f"{what} expired on {v.expires.isoformat()}; the finding is no longer waived"
        fix = "Fix the finding or renew the waiver."
        return [_finding(WAIVER_EXPIRED, w, message, "error", fix)]
    out = []
    if (v.expires - as_of).days <= EXPIRING_DAYS:
        message = f"{what} expires on {v.expires.isoformat()}, within {EXPIRING_DAYS} days"
        out.append(_finding(WAIVER_EXPIRING, w, message, "warning", "Plan the fix or renew the waiver."))
    if not used and any(fnmatch.fnmatchcase(rule, v.rule) for rule in selected):
        out.append(_finding(WAIVER_UNUSED, w, f"{what} matches no finding", "warning", "Remove the waiver."))
    return out


def _finding(rule: str, w: Placed[Waiver], message: str, severity: Severity, fix: str) -> Finding:
    where = w.at() if rule == WAIVER_UNUSED else w.at(["expires"], key=False)
    return located(rule, "waiver", where, message, severity=severity, entity=w.value.entity, remediation=fix)
