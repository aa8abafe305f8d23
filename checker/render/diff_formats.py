"""How `checker diff` writes a format (the `diff` column of render.FORMATS): its
own text, JSON and Markdown (a PR comment); an audit format (sarif, junit,
github) of the head audit narrowed to the new findings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from checker.core.findings import Finding
from checker.decide.compare import Delta, DiffResult
from checker.decide.result import AuditResult
from checker.render.context import PLAIN, RenderContext
from checker.render.groups import FindingGroup, group
from checker.render.json_format import dumps, finding_json
from checker.render.templating import environment
from checker.render.text import group_line

DiffFormatter = Callable[[DiffResult, RenderContext], str]


def _kw(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def delta_line(d: Delta) -> str:
    """`rack sh1/H01: +20.4 kW, headroom 15.8 -> -4.6 kW`."""
    kind, _, name = d.entity.partition("/")
    line = f"{kind} {name}: {d.load_change:+.1f} kW"
    if d.headroom_before != d.headroom_after:
        line += f", headroom {_kw(d.headroom_before)} -> {_kw(d.headroom_after)} kW"
    return line


def _verdict(result: DiffResult) -> str:
    return "fail" if result.exit_code == 1 else ("invalid" if result.exit_code == 2 else "pass")


def groups(findings: tuple[Finding, ...], of: AuditResult, ctx: RenderContext) -> list[FindingGroup]:
    """A diff's findings (with their messages), alike ones once (render/groups.py)."""
    return group(findings, of.messages.shape) if ctx.group else [FindingGroup(f) for f in findings]


def text(result: DiffResult, ctx: RenderContext = PLAIN) -> str:
    lines = [f"new findings against {result.ref} ({result.commit[:12]}): {len(result.new)}"]
    lines += [f"  {group_line(g, ctx)}" for g in groups(result.new, result.head, ctx)]
    lines.append(f"resolved findings: {len(result.resolved)}")
    lines += [f"  {group_line(g, ctx)}" for g in groups(result.resolved, result.base, ctx)]
    lines.append(f"capacity changes: {len(result.deltas)}")
    lines += [f"  {delta_line(d)}" for d in result.deltas]
    lines.append(
        f"checker diff: {len(result.new)} new, {len(result.resolved)} resolved, "
        f"{len(result.deltas)} capacity changes: {_verdict(result)}"
    )
    return "\n".join(lines) + "\n"


def _delta_json(d: Delta) -> dict[str, Any]:
    return {
        "entity": d.entity,
        "load_kw": {"before": d.load_before, "after": d.load_after, "change": d.load_change},
        "headroom_kw": {"before": d.headroom_before, "after": d.headroom_after},
    }


def json_format(result: DiffResult, ctx: RenderContext = PLAIN) -> str:
    doc = {
        "tool": "checker",
        "version": result.head.version,
        "as_of": result.head.as_of.isoformat(),
        "base": {"ref": result.ref, "commit": result.commit},
        "verdict": _verdict(result),
        "new": [finding_json(f) for f in result.new],
        "resolved": [finding_json(f) for f in result.resolved],
        "capacity_changes": [_delta_json(d) for d in result.deltas],
    }
    return dumps(doc)


def markdown(result: DiffResult, ctx: RenderContext = PLAIN) -> str:
    template = environment().get_template("diff.md.j2")
    return template.render(result=result, verdict=_verdict(result), delta_line=delta_line, link=ctx.link)


def new_only(render: Callable[[AuditResult, RenderContext], str]) -> DiffFormatter:
    """An audit format written by `checker diff`: the head audit, new findings only."""
    return lambda result, ctx: render(result.head_with_new_only(), ctx)
