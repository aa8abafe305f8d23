"""GitLab Code Quality: the report a merge request shows findings from.

https://docs.gitlab.com/ci/testing/code_quality/ ("Code Quality report
format"): a JSON array of issues, each with `description`, `check_name`,
`fingerprint`, `severity` (info, minor, major, critical or blocker),
`location.path` and `location.lines.begin`; GitLab reads no other field. It
keys issues by fingerprint (equal ones merge) and compares the merge
request's fingerprints with its target branch's to show what is new and
what is fixed: the fingerprint is the finding's rule and entity
(render/fingerprint.py), so a finding stays the same issue when lines move.
GitLab stops reading the report at the first issue it finds invalid
(gitlab-org/gitlab lib/gitlab/ci/parsers/codequality/code_climate.rb), so
every issue has every field.

Every open finding is an issue; a waived one is left out, as Code Quality
has no way to mark an issue accepted.
"""

from __future__ import annotations

from typing import Any

from checker.core.findings import Finding
from checker.decide.result import AuditResult
from checker.render.context import PLAIN, RenderContext
from checker.render.fingerprint import fingerprints
from checker.render.json_format import dumps

# An error fails the audit (and so the pipeline) at the default --fail-on.
SEVERITIES = {"error": "critical", "warning": "major", "info": "info"}


def issue(f: Finding, fingerprint: str) -> dict[str, Any]:
    return {
        "description": f.message,
        "check_name": f.rule,
        "fingerprint": fingerprint,
        "severity": SEVERITIES[f.severity],
        "location": {"path": f.file, "lines": {"begin": f.line}},
    }


def render(result: AuditResult, ctx: RenderContext = PLAIN) -> str:
    detected = result.detected
    prints = fingerprints(detected)
    chosen = [i for i, f in enumerate(detected) if not f.waived]
    shown = result.with_messages(detected[i] for i in chosen)
    return dumps([issue(f, prints[i]) for f, i in zip(shown, chosen, strict=True)])
