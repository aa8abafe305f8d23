from __future__ import annotations

import datetime as dt
import io
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from checker.cli import _color
from checker.core.errors import UserError
from checker.core.findings import Finding
from checker.decide.result import AuditResult
from checker.render import get_formatter
from checker.render.context import PLAIN, RenderContext
from checker.render.text import by_rule_lines
from tests.conftest import Run
from tests.helpers import assert_golden

ROOT = Path(__file__).resolve().parents[2]


def _result(findings: list[Finding]) -> AuditResult:
    summary = {"error": 1, "warning": 0, "info": 0, "waived": 1}
    return AuditResult(dt.date(2027, 1, 15), "fail", 1, summary, tuple(findings), None)


FINDINGS = [
    Finding("power.rack-capacity", "error", "power", "rack/f/A", "rack f/A draws 20 kW", "r", "f.yaml", 3, 5),
    Finding(
        "power.rack-capacity",
        "error",
        "power",
        "rack/f/B",
        "rack f/B draws 20 kW",
        "r",
        "f.yaml",
        9,
        5,
        waived=True,
    ),
]


def test_text_lines_and_summary() -> None:
    assert get_formatter("text")(_result(FINDINGS), PLAIN) == (
        "f.yaml:3:5: error power.rack-capacity rack f/A draws 20 kW\n"
        "f.yaml:9:5: error power.rack-capacity rack f/B draws 20 kW [waived]\n"
        "\n"
        "findings by rule:\n"
        "  2 error   power.rack-capacity (1 waived)\n"
        "checker: 1 error, 0 warnings, 0 info, 1 waived: fail\n"
    )


def test_summary_by_rule_puts_the_most_severe_first_and_counts_findings_not_shown() -> None:
    many = [Finding("support.level-24x7", "warning", "support", f"server/s{i}", "m", "r", "s.yaml", i, 1)
            for i in range(1, 31)]
    result = _result([*many, FINDINGS[1]])
    text = get_formatter("text")(result, RenderContext(max_per_rule=24, group=False))
    assert text.count("warning support.level-24x7 m") == 24
    assert "checker: 6 more support.level-24x7 findings not shown (--max-per-rule 0 shows all)" in text
    assert by_rule_lines(result) == [
        "   1 error   power.rack-capacity (1 waived)",
        "  30 warning support.level-24x7",
    ]


def test_colour_marks_severities_only_when_asked() -> None:
    coloured = get_formatter("text")(_result(FINDINGS), RenderContext(color=True))
    assert "\x1b[31merror\x1b[0m power.rack-capacity" in coloured
    assert coloured.endswith("\x1b[1;31mfail\x1b[0m\n")
    assert "\x1b" not in get_formatter("text")(_result(FINDINGS), PLAIN)


def test_colour_only_at_a_terminal_and_never_with_no_color(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert _color(Tty()) and not _color(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not _color(Tty())


def test_unknown_format_is_a_user_error_with_suggestion() -> None:
    with pytest.raises(UserError, match="did you mean 'json'"):
        get_formatter("jsn")


def test_text_golden(golden_run: Callable[[str], Run]) -> None:
    run = golden_run("text")
    assert (run.code, run.err) == (0, "")
    assert_golden("audit.txt", run.out)


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
def test_colours_reach_a_real_terminal_unescaped() -> None:
    # The formatter escapes every field itself; the stream's own escaping must
    # not spell its SGR sequences out as `\x1b[31m` on the terminal.
    import pty
    import subprocess

    primary, secondary = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    command = [sys.executable, "-m", "checker", "audit", str(ROOT / "inventories"), "--as-of", "2027-01-15"]
    with subprocess.Popen(command, stdout=secondary, stderr=subprocess.DEVNULL, env=env) as proc:
        os.close(secondary)
        chunks = []
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the child closed its side
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait()
    os.close(primary)
    out = b"".join(chunks)
    assert b"\x1b[33mwarning\x1b[0m power.rack-headroom" in out
    assert b"\\x1b" not in out
