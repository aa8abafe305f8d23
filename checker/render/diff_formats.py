"""How `checker diff` writes a format (the `diff` column of render.FORMATS): its
own text, JSON, Markdown (a pull-request comment) and GitHub annotations; an
audit format (sarif, junit, html) of the head audit narrowed to the change's
findings.

Each leads with the verdict and its reason in words, and lists the change's
findings most severe first: new, worsened (warning -> error), resolved and,
apart, new ones a waiver covers (checker.decide.compare).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from checker.core.findings import Finding
from checker.core.terminal import escape
from checker.decide.compare import FIGURES, Delta, DiffResult, Worsened, blocks, by_severity
from checker.decide.result import AuditResult
from checker.render.context import PLAIN, RenderContext
from checker.render.github import annotation_lines
from checker.render.groups import NAMES_SHOWN, FindingGroup, group, name_of
from checker.render.json_format import dumps, finding_json
from checker.render.shown import shown
from checker.render.templating import environment
from checker.render.text import group_line, left_out_lines

DiffFormatter = Callable[[DiffResult, RenderContext], str]

MARKER = "<!-- checker:comment -->"  # how the Action finds its own comment to update
# GitHub refuses a comment longer than 65,536 characters; the comment shows
# fewer rows per section until it fits (each section says how many it leaves out).
COMMENT_LIMIT = 65_000
SYMBOLS = {"pass": "✔", "fail": "✖", "invalid": "✖"}


def _kw(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _signed(value: float | None, unit: str = "") -> str:
    if value is None:
        return "n/a"
    text = f"{value:+.1f}" if unit in ("kW",) else f"{value:+g}"
    return f"{text} {unit}".rstrip()


def delta_parts(d: Delta) -> list[str]:
    """What changed of a rack or facility, in words: power first (as it always was)."""
    parts = [f"{d.load_change:+.1f} kW"]
    if d.headroom_before != d.headroom_after:
        parts[0] += f", headroom {_kw(d.headroom_before)} -> {_kw(d.headroom_after)} kW"
    cool_b, cool_a = d.before.get("cooling_headroom_kw"), d.after.get("cooling_headroom_kw")
    if cool_b != cool_a:
        parts.append(f"cooling headroom {_kw(cool_b)} -> {_kw(cool_a)} kW")
    elif d.changed("heat_kw"):
        parts.append(f"heat {_signed(d.change('heat_kw'), 'kW')}")
    if d.changed("u_used") or d.changed("u_free"):
        used = _signed(d.change("u_used"), "U")
        free_b, free_a = d.before.get("u_free"), d.after.get("u_free")
        parts.append(used + (f" (free {_num(free_b)} -> {_num(free_a)})" if free_b != free_a else ""))
    if d.changed("weight_kg"):
        parts.append(_signed(d.change("weight_kg"), "kg"))
    for name, word in (("servers", "server"), ("gpus", "GPU")):
        n = d.change(name)
        if d.changed(name) and n is not None:
            parts.append(f"{n:+g} {word}" + ("" if abs(n) == 1 else "s"))
    return parts


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:g}"


def delta_line(d: Delta) -> str:
    """`rack sh1/H01: +20.4 kW, headroom 15.8 -> -4.6 kW; heat +20.4 kW; +16 U (free 26 -> 10); ...`."""
    kind, _, name = d.entity.partition("/")
    return f"{kind} {name}: " + "; ".join(delta_parts(d))


def verdict(result: DiffResult) -> str:
    return "fail" if result.exit_code == 1 else ("invalid" if result.exit_code == 2 else "pass")


def reason(result: DiffResult) -> str:
    """Why the verdict is what it is, in words: the most severe finding that
    decides it, or what passed."""
    at = result.fail_on
    if result.exit_code == 2:
        problems = [f for f in result.head.detected if f.category == "schema"] or list(result.head.detected)
        if not problems:
            return "the inventory cannot be read"
        first = result.head.with_messages([by_severity(problems)[0]])[0]
        return f"{_plural(len(problems), 'input error')}, first {first.file}:{first.line}: {first.message}"
    blocking = result.blocking()
    if result.exit_code == 1 and blocking:
        more = len(blocking) - 1
        tail = f" (and {more} more new or worsened at or above {at})" if more else ""
        return blocking[0].message + tail
    if result.exit_code == 1:
        failing = [f for f in result.head.detected if blocks(f, at)]
        shown_first = result.head.with_messages(by_severity(failing)[:1])
        tail = f": {shown_first[0].message}" if shown_first else ""
        return (
            f"no new or worsened finding at or above {at}, but the inventory already has "
            f"{_plural(len(failing), 'finding')} at or above it{tail}"
        )
    s = result.sections
    below = len(s.new) + len(s.worsened)
    text = f"no new or worsened finding at or above {at}"
    return text + (f" ({_plural(below, 'finding')} below it)" if below else "")


def headline(result: DiffResult) -> str:
    """`fail: rack hx1/H01 draws 30.6 kW, over its 18.4 kW 2N feed capacity`."""
    return f"{verdict(result)}: {reason(result)}"


def _counts(result: DiffResult) -> str:
    s = result.sections
    return (
        f"{len(s.new)} new, {len(s.worsened)} worsened, {len(s.resolved)} resolved, "
        f"{len(s.waived)} waived, {len(result.deltas)} capacity changes"
    )


def was_text(w: Worsened) -> str:
    """`was warning power.rack-headroom`, or `was waived` for a lifted waiver."""
    if w.was.rule == w.finding.rule and w.was.waived:
        return "was waived"
    return f"was {w.was.severity} {w.was.rule}"


def groups(findings: Sequence[Finding], of: AuditResult, ctx: RenderContext) -> list[FindingGroup]:
    """A diff's findings (with their messages), alike ones once (render/groups.py)."""
    return group(findings, of.messages.shape) if ctx.group else [FindingGroup(f) for f in findings]


def worsened_groups(result: DiffResult, ctx: RenderContext) -> list[tuple[FindingGroup, Worsened]]:
    """Worsened findings alike (and alike in what they were) once, with the first one's pair."""
    pairs = {id(w.finding): w for w in result.sections.worsened}
    findings = [w.finding for w in result.sections.worsened]
    if ctx.group:
        shape = result.head.messages.shape
        found = group(findings, lambda f: (shape(f), was_text(pairs[id(f)])))
    else:
        found = [FindingGroup(f) for f in findings]
    return [(g, pairs[id(g.first)]) for g in found]


def text(result: DiffResult, ctx: RenderContext = PLAIN) -> str:
    s = result.sections
    lines = [f"checker diff against {escape(result.ref)} ({result.commit[:12]}): {escape(headline(result))}"]
    lines.append(f"new findings: {len(s.new)}")
    lines += [f"  {group_line(g, ctx)}" for g in groups(s.new, result.head, ctx)]
    lines.append(f"worsened findings: {len(s.worsened)}")
    lines += [f"  {group_line(g, ctx)} ({escape(was_text(w))})" for g, w in worsened_groups(result, ctx)]
    lines.append(f"resolved findings: {len(s.resolved)}")
    lines += [f"  {group_line(g, ctx)}" for g in groups(s.resolved, result.base, ctx)]
    lines.append(f"waived findings: {len(s.waived)}")
    lines += [f"  {group_line(g, ctx)}" for g in groups(s.waived, result.head, ctx)]
    lines.append(f"capacity changes: {len(result.deltas)}")
    lines += [f"  {escape(delta_line(d))}" for d in result.deltas]
    lines.append(f"checker diff: {_counts(result)}: {verdict(result)}")
    return "\n".join(lines) + "\n"


def _delta_json(d: Delta) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "entity": d.entity,
        "load_kw": {"before": d.load_before, "after": d.load_after, "change": d.load_change},
    }
    for f in FIGURES:
        if f.name not in doc:
            before, after = d.before.get(f.name), d.after.get(f.name)
            doc[f.name] = {"before": before, "after": after, "change": d.change(f.name)}
    return doc


def json_format(result: DiffResult, ctx: RenderContext = PLAIN) -> str:
    s = result.sections
    doc = {
        "tool": "checker",
        "version": result.head.version,
        "as_of": result.head.as_of.isoformat(),
        "base": {"ref": result.ref, "commit": result.commit},
        "verdict": verdict(result),
        "new": [finding_json(f) for f in result.new],
        "resolved": [finding_json(f) for f in result.resolved],
        "capacity_changes": [_delta_json(d) for d in result.deltas],
        # Added with worsened findings (the fields above keep their meaning):
        "reason": reason(result),
        "counts": {
            "new": len(s.new),
            "worsened": len(s.worsened),
            "resolved": len(s.resolved),
            "waived": len(s.waived),
        },
        "worsened": [{**finding_json(w.finding), "was": finding_json(w.was)} for w in s.worsened],
    }
    return dumps(doc)


def _capped(found: Sequence[FindingGroup], per_rule: int, rows: int) -> tuple[list[FindingGroup], int]:
    """The first `per_rule` groups of each rule (0: all), at most `rows` in all;
    and how many findings are left out."""
    seen: dict[str, int] = {}
    kept: list[FindingGroup] = []
    for g in found:
        seen[g.first.rule] = seen.get(g.first.rule, 0) + 1
        if (per_rule <= 0 or seen[g.first.rule] <= per_rule) and len(kept) < rows:
            kept.append(g)
    return kept, sum(len(g.findings) for g in found) - sum(len(g.findings) for g in kept)


def _remediations(result: DiffResult) -> list[tuple[str, str]]:
    """Each rule of the change's blocking-or-not new and worsened findings once,
    most severe first, with what to do about it."""
    metas = {r.id: r for r in result.head.rules}
    s = result.sections
    out: dict[str, str] = {}
    for f in by_severity([*s.new, *(w.finding for w in s.worsened)]):
        if f.rule not in out:
            meta = metas.get(f.rule)
            out[f.rule] = f.remediation or (meta.remediation if meta else "")
    return [(rule, fix) for rule, fix in out.items() if fix]


def _delta_cells(d: Delta) -> dict[str, str]:
    """The comment's capacity table: one cell per figure group, `—` where nothing changed."""
    none = "—"
    power = f"{d.load_change:+.1f} kW" if d.load_change else none
    if d.headroom_before != d.headroom_after:
        shown = power if power != none else "+0.0 kW"
        power = f"{shown} (headroom {_kw(d.headroom_before)} → {_kw(d.headroom_after)})"
    cool_b, cool_a = d.before.get("cooling_headroom_kw"), d.after.get("cooling_headroom_kw")
    cooling = none
    if d.changed("heat_kw"):
        cooling = f"heat {_signed(d.change('heat_kw'), 'kW')}"
    if cool_b != cool_a:
        cooling = f"{cooling if cooling != none else 'heat +0.0 kW'} (headroom {_kw(cool_b)} → {_kw(cool_a)})"
    u = none
    if d.changed("u_used") or d.changed("u_free"):
        u = _signed(d.change("u_used"))
        free_b, free_a = d.before.get("u_free"), d.after.get("u_free")
        u += f" (free {_num(free_b)} → {_num(free_a)})" if free_b != free_a else ""
    cells = {"power": power, "cooling": cooling, "u": u}
    for name, unit in (("weight_kg", "kg"), ("servers", ""), ("gpus", "")):
        cells[name] = _signed(d.change(name), unit) if d.changed(name) else none
    return cells


def markdown(result: DiffResult, ctx: RenderContext = PLAIN) -> str:
    """The pull-request comment: the verdict first, with its reason in words.
    Rows per section shrink until it fits a GitHub comment."""
    rows = 10**9
    while True:
        body = _markdown(result, ctx, rows)
        if len(body) <= COMMENT_LIMIT or rows <= 5:
            return body
        rows = min(rows, 200) // 2


def _markdown(result: DiffResult, ctx: RenderContext, rows: int) -> str:
    s = result.sections
    per_rule = ctx.max_per_rule

    def section(findings: Sequence[Finding], of: AuditResult) -> tuple[list[FindingGroup], int]:
        return _capped(groups(findings, of, ctx), per_rule, rows)

    pairs = worsened_groups(result, ctx)
    was = {id(g.first): w for g, w in pairs}
    worsened_shown, worsened_left = _capped([g for g, _ in pairs], per_rule, rows)
    template = environment().get_template("diff.md.j2")
    return template.render(
        result=result,
        symbol=SYMBOLS[verdict(result)],
        verdict=verdict(result),
        reason=reason(result),
        counts=_counts(result),
        new=section(s.new, result.head),
        worsened=([(g, was[id(g.first)]) for g in worsened_shown], worsened_left),
        resolved=section(s.resolved, result.base),
        waived=section(s.waived, result.head),
        was_text=was_text,
        names_shown=0 if per_rule == 0 else NAMES_SHOWN,
        name_of=name_of,
        remediations=_remediations(result),
        deltas=[(d, _delta_cells(d)) for d in result.deltas],
        link=ctx.link,
        marker=MARKER,
    )


def github(result: DiffResult, ctx: RenderContext = PLAIN) -> str:
    """Annotations of the change's findings, most severe first (a worsened one
    titled with what it was), each on a line the change touched where its
    cause is; then the diff's summary line."""
    s = result.sections
    view = shown(result.head_narrowed(), ctx.max_per_rule)
    titles = {}
    worse = {(w.finding.rule, w.finding.entity, w.finding.file, w.finding.line): w for w in s.worsened}
    for f in view.findings:
        w = worse.get((f.rule, f.entity, f.file, f.line))
        if w is not None:
            titles[id(f)] = f"{f.rule} (worsened: {was_text(w)})"
    lines = annotation_lines(by_severity(view.findings), titles)
    lines += left_out_lines(view.left_out)
    lines.append(f"checker diff: {_counts(result)}: {verdict(result)}")
    return "\n".join(lines) + "\n"


def narrowed(render: Callable[[AuditResult, RenderContext], str]) -> DiffFormatter:
    """An audit format written by `checker diff`: the head audit, the change's findings only."""
    return lambda result, ctx: render(result.head_narrowed(), ctx)

