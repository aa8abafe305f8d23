"""GitHub Actions workflow commands: an annotation on the exact line of the PR.

https://docs.github.com/actions/reference/workflow-commands-for-github-actions
Values are escaped as the Actions toolkit does (toolkit/packages/core
command.ts): `%`, CR and LF everywhere, and `:` and `,` in properties, so a
message can neither end the command early nor forge another one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from checker.core.findings import Finding
from checker.decide.result import AuditResult
from checker.render.context import PLAIN, RenderContext
from checker.render.shown import shown
from checker.render.text import left_out_lines, summary_line

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}
LEVELS = ("error", "warning", "notice")  # most severe first
# GitHub shows 10 error, 10 warning and 10 notice annotations per step, in the
# order they are printed, and drops the rest (50 per job): actions/toolkit,
# docs/problem-matchers.md, "Limitations".
SHOWN_PER_LEVEL = 10


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def level(f: Finding) -> str:
    # A waived finding is shown, quietly: it no longer blocks the merge.
    return "notice" if f.waived else COMMANDS[f.severity]


def annotation(f: Finding, title: str | None = None) -> str:
    title = title or (f"{f.rule} (waived)" if f.waived else f.rule)
    props = f"file={_prop(f.file)},line={f.line},col={f.column},title={_prop(title)}"
    return f"::{level(f)} {props}::{_data(f.message)}"


def annotation_lines(findings: Iterable[Finding], titles: dict[int, str] | None = None) -> list[str]:
    """Annotations, errors first, then warnings, then notices (each level in the
    order given), so the ones GitHub shows are the most severe; first, a notice
    when a level has more than GitHub shows, saying how many it hides.
    `titles`: a title for some findings (by id), instead of their rule's."""
    ordered = sorted(findings, key=lambda f: LEVELS.index(level(f)))
    lines = [annotation(f, (titles or {}).get(id(f))) for f in ordered]
    note = hidden_note(Counter(level(f) for f in ordered))
    return [note, *lines] if note else lines


def hidden_note(counts: Counter[str]) -> str | None:
    """`::notice title=checker::...` when GitHub will hide some annotations."""
    hidden = [(n - SHOWN_PER_LEVEL, lvl) for lvl in LEVELS if (n := counts[lvl]) > SHOWN_PER_LEVEL]
    if not hidden:
        return None
    what = " and ".join(f"{n} {lvl}{'s' if n > 1 else ''}" for n, lvl in hidden)
    return (
        f"::notice title=checker::{what} not shown as annotations: GitHub shows {SHOWN_PER_LEVEL} "
        "of each level per step (the most severe are first); every one is in this step's log"
    )


def render(result: AuditResult, ctx: RenderContext = PLAIN) -> str:
    view = shown(result, ctx.max_per_rule)
    lines = annotation_lines(view.findings)
    lines += left_out_lines(view.left_out)
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"
