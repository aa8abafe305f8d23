"""GitHub workflow commands: annotations whose values cannot forge another command."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from checker.core.findings import Finding
from checker.render.github import annotation
from tests.conftest import Run
from tests.helpers import assert_golden


def test_github_golden(golden_run: Callable[[str], Run]) -> None:
    run = golden_run("github")
    assert (run.code, run.err) == (0, "")
    assert_golden("audit.github.txt", run.out)


@pytest.mark.parametrize(
    ("severity", "waived", "command"),
    [("error", False, "::error "), ("warning", False, "::warning "), ("info", False, "::notice "),
     ("error", True, "::notice ")],
)
def test_severity_maps_to_command(severity: str, waived: bool, command: str) -> None:
    f = Finding("r.x", severity, "power", "rack/f/A", "m", "", "a.yaml", 3, 5, waived)  # type: ignore[arg-type]
    assert annotation(f).startswith(command)


def test_values_are_escaped() -> None:
    f = Finding("r.x", "error", "power", "e", "50%\n::error::forged", "", "a,b:c.yaml", 3, 5)
    assert annotation(f) == "::error file=a%2Cb%3Ac.yaml,line=3,col=5,title=r.x::50%25%0A::error::forged"
