"""A finding's fingerprint for code-review services: its rule and entity, never its line.

GitHub code scanning tells alerts apart by rule, file and the result's
`partialFingerprints.primaryLocationLineHash`, which its upload action
computes from the text of the result's line when the SARIF has none
(https://docs.github.com/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning,
"Providing data to track code scanning alerts across runs"): the findings
of one rack's line would merge into one alert. GitLab keys Code Quality
issues by `fingerprint` alone (gitlab-org/gitlab
lib/gitlab/ci/reports/codequality_reports.rb), so equal ones merge too.

A finding is identified as `checker diff` matches it (decide.compare.key):
by rule and entity, or by rule, file and message for an input error, which
has no entity. Findings that share that key (one rule on the several
frameworks of one server) are numbered in output order, as GitHub numbers
equal lines, so each keeps a fingerprint of its own. The line is left out:
a finding keeps its alert when lines above it move.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable

from checker.core.findings import Finding
from checker.decide.compare import key


def fingerprints(findings: Iterable[Finding]) -> list[str]:
    """One fingerprint per finding, in order: 32 hex digits (128 bits of SHA-256)."""
    seen: Counter[tuple[str, str, str]] = Counter()
    out = []
    for f in findings:
        k = key(f)
        seen[k] += 1
        text = "\0".join((*k, str(seen[k])))
        out.append(hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32])
    return out
