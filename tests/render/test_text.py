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


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("choice", "tty", "env", "coloured"),
    [
        ("auto", True, {}, True),
        ("auto", False, {}, False),
        ("auto", True, {"NO_COLOR": "1"}, False),
        ("auto", True, {"NO_COLOR": ""}, True),  # empty: as if unset (no-color.org)
        ("auto", False, {"FORCE_COLOR": "1"}, True),
        ("auto", False, {"FORCE_COLOR": ""}, False),
        ("auto", True, {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),  # NO_COLOR first
        ("auto", True, {"TERM": "dumb"}, False),
        ("always", False, {"NO_COLOR": "1"}, True),  # the command line over the environment
        ("never", True, {"FORCE_COLOR": "1"}, False),
    ],
)
def test_colour_is_chosen_by_the_option_then_no_color_force_color_and_the_terminal(
    monkeypatch: pytest.MonkeyPatch, choice: str, tty: bool, env: dict[str, str], coloured: bool
) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert _color(_Tty() if tty else io.StringIO(), choice) is coloured


def test_unknown_format_is_a_user_error_with_suggestion() -> None:
    with pytest.raises(UserError, match="did you mean 'json'"):
        get_formatter("jsn")


def test_text_golden(golden_run: Callable[[str], Run]) -> None:
    run = golden_run("text")
    assert (run.code, run.err) == (0, "")
    assert_golden("audit.txt", run.out)


AUDIT = [sys.executable, "-m", "checker", "audit", str(ROOT / "inventories"), "--as-of", "2027-01-15"]


def _at_terminal(*args: str, **env: str) -> bytes:
    """What `checker audit ARGS` writes to a real pseudo-terminal, with NO_COLOR,
    FORCE_COLOR and TERM as given (unset otherwise)."""
    import pty
    import subprocess

    primary, secondary = pty.openpty()
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM")}
    with subprocess.Popen(
        [*AUDIT, *args], stdout=secondary, stderr=subprocess.DEVNULL, env=base | env
    ) as proc:
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
    return b"".join(chunks)


WARNING = b"\x1b[33mwarning\x1b[0m power.rack-headroom"


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
def test_colours_reach_a_real_terminal_unescaped() -> None:
    # The formatter escapes every field itself; the stream's own escaping must
    # not spell its SGR sequences out as `\x1b[31m` on the terminal.
    out = _at_terminal()
    assert WARNING in out
    assert b"\\x1b" not in out


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
@pytest.mark.parametrize(
    ("args", "env", "coloured"),
    [
        ((), {"NO_COLOR": ""}, True),  # an empty NO_COLOR is as if unset (no-color.org)
        ((), {"NO_COLOR": "1"}, False),
        ((), {"TERM": "dumb"}, False),
        (("--color", "never"), {}, False),
        (("--color", "always"), {"NO_COLOR": "1"}, True),
    ],
)
def test_colour_at_a_real_terminal_follows_the_option_and_the_environment(
    args: tuple[str, ...], env: dict[str, str], coloured: bool
) -> None:
    out = _at_terminal(*args, **env)
    assert b"warning power.rack-headroom" in out.replace(b"\x1b[33m", b"").replace(b"\x1b[0m", b"")
    assert (WARNING in out) is coloured
    assert (b"\x1b" in out) is coloured


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
def test_quiet_at_a_real_terminal_prints_the_coloured_summary_line_only() -> None:
    out = _at_terminal("--quiet")
    assert out == b"checker: 0 errors, 51 warnings, 0 info, 3 waived: \x1b[1;32mpass\x1b[0m\r\n"


def test_force_color_colours_a_pipe() -> None:
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | {"FORCE_COLOR": "1"}
    done = subprocess.run([*AUDIT], capture_output=True, env=env, check=False)
    assert WARNING in done.stdout
    plain = subprocess.run([*AUDIT], capture_output=True, env=env | {"FORCE_COLOR": ""}, check=False)
    assert b"\x1b" not in plain.stdout
