"""GitHub workflow commands: annotations whose values cannot forge another command."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from checker.core.findings import Finding
from checker.render.github import SHOWN_PER_LEVEL, annotation, annotation_lines
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


def _finding(severity: str, line: int, waived: bool = False) -> Finding:
    entity = f"rack/f/R{line}"
    return Finding("r.x", severity, "power", entity, "m", "", "a.yaml", line, 1, waived)  # type: ignore[arg-type]


def test_the_most_severe_come_first_so_that_github_shows_them() -> None:
    # In file order a warning, a waived error, an error: GitHub shows the first 10 of each level.
    given = [_finding("warning", 1), _finding("error", 2, waived=True), _finding("error", 3)]
    lines = annotation_lines(given)
    assert [line.split(" ", 1)[0] + str(line.split("line=")[1].split(",")[0]) for line in lines] == [
        "::error3", "::warning1", "::notice2",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("errors", "warnings", "note"),
    [
        (10, 10, None),  # all shown
        (11, 2, "1 error not shown as annotations"),
        (14, 12, "4 errors and 2 warnings not shown as annotations"),
    ],
)
def test_a_note_says_how_many_github_hides(errors: int, warnings: int, note: str | None) -> None:
    lines = annotation_lines([*(_finding("error", i) for i in range(errors)),
                         *(_finding("warning", 100 + i) for i in range(warnings))])  # fmt: skip
    assert len(lines) == errors + warnings + (1 if note else 0)
    if note is None:
        assert not lines[0].startswith("::notice")
    else:
        # First, so that it is among the 10 notices GitHub shows whatever follows.
        assert lines[0] == (
            f"::notice title=checker::{note}: GitHub shows {SHOWN_PER_LEVEL} of each level per step "
            "(the most severe are first); every one is in this step's log"
        )
