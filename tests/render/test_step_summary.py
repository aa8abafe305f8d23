"""The job summary within GitHub's 1 MiB: long tables and lists cut alike, each
saying what it left out, the rest whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import fleet
from checker.render import step_summary
from checker.render.step_summary import ADVICE, fit
from tests.conftest import AS_OF, CliRunner

# A report in little: a short table, a list of 8, a table of 300 racks, a chart.
DOC = "\n".join([
    "# Rollout readiness: BLOCKED", "", "## Findings by rule", "",
    "| rule | open |", "|---|---:|", "| `a` | 1 |", "",
    *(f"- finding {i} of rule a" for i in range(1, 9)), "",
    "## Racks", "", "| name | load |", "|---|---:|",
    *(f"| R{i:03d} | {i} kW |" for i in range(1, 301)), "",
    "```mermaid", "xychart-beta", "```", "",
])


def _bytes(text: str) -> int:
    return len(text.encode())


def test_a_summary_that_fits_is_left_as_it_is() -> None:
    assert fit(DOC, _bytes(DOC)) == DOC


@pytest.mark.parametrize(("budget", "racks", "items"), [(4_000, 197, 8), (600, 2, 2)])
def test_the_longest_tables_and_lists_are_cut_to_the_same_rows(budget: int, racks: int, items: int) -> None:
    """The 5,626-byte document; the closing note takes 117 bytes with its blank
    line, the note after a cut table 106 with a one-digit count (107 with three),
    after a cut list 109. In 4,000 bytes (3,883 before the closing note): 334
    bytes but the rack rows, rows R001-R009 of 16 bytes, R010-R099 of 17, the
    rest of 18: 334 + 144 + 1,530 + 98 x 18 + 107 = 3,879, 197 rows; the list
    of 8 stays whole. In 600 (483): 158 bytes but the list and the rack rows,
    2 items of 22 and their note, 2 rows of 16 and their note: 449."""
    out = fit(DOC, budget)
    assert _bytes(DOC) == 5_626 and _bytes(out) <= budget
    lines = out.splitlines()
    assert "| `a` | 1 |" in lines and "```mermaid" in lines and lines[0] == "# Rollout readiness: BLOCKED"
    assert sum(line.startswith("| R") for line in lines) == racks
    assert sum(line.startswith("- finding") for line in lines) == items
    assert f"*{racks} of 300 rows shown: {ADVICE}.*" in lines
    assert (f"- ... and {8 - items} more not shown: {ADVICE}" in lines) == (items < 8)
    assert lines[-1] == f"*This job summary is cut to fit: {ADVICE}.*"


@pytest.mark.parametrize("budget", [60, 200, 650, 700, 2_000, 5_625])
def test_a_cut_summary_never_passes_its_budget(budget: int) -> None:
    out = fit(DOC, budget)
    assert _bytes(out) <= budget
    assert out == "" or out.endswith(f"*This job summary is cut to fit: {ADVICE}.*\n")


def test_a_table_is_cut_by_rows_never_inside_one() -> None:
    out = fit(DOC, 2_000)
    rows = [line for line in out.splitlines() if line.startswith("|")]
    assert all(line.endswith("|") for line in rows)
    # A cut table keeps its heading and rule line, and its note is a paragraph after it.
    assert "| name | load |" in rows and "|---|---:|" in rows


def test_the_summary_counts_what_the_step_wrote_before(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,000 servers make a report of ~120 KB; a step summary that already holds
    all but 50 KB of the 1 MiB gets the report cut to those 50 KB."""
    fleet.write(2_000, tmp_path / "fleet")
    summary = tmp_path / "summary.md"
    summary.write_bytes(b"x" * (step_summary.LIMIT - 50_000) + b"\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    run = cli("audit", str(tmp_path / "fleet"), *AS_OF)
    assert run.code == 1
    text = summary.read_text()
    assert summary.stat().st_size <= step_summary.LIMIT
    assert "# Rollout readiness: BLOCKED" in text and "## Support coverage" in text
    assert f"rows shown: {ADVICE}" in text and text.endswith(f"*This job summary is cut to fit: {ADVICE}.*\n")


def test_a_full_step_summary_gets_nothing_and_says_so(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch, in_fixtures: Path
) -> None:
    summary = tmp_path / "summary.md"
    summary.write_bytes(b"x" * step_summary.LIMIT)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    run = cli("audit", "overload", *AS_OF)
    assert run.code == 1 and summary.stat().st_size == step_summary.LIMIT
    assert run.err == (f"checker: the step summary already holds 1,048,576 bytes, the readiness report is "
                       f"not appended: {ADVICE}\n")
