"""Hostile text: names from a pull request that try to act on the CI log or the terminal.

A line that starts with `::` is a GitHub Actions workflow command
(`::add-mask::`, `::stop-commands::`, `::error::` forging a finding); an
invisible character makes two names that look the same differ (issue 17).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.core.terminal import escape, escape_annotations, escape_lines
from tests.conftest import AS_OF, CliRunner

INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder whose files' names and keys start workflow commands or hide characters."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "::add-mask::tok.yaml").write_text("kind: [\n")
    (tmp_path / "x.yaml").write_text('kind: Facility\nname: sh1\n"na\u200bme\u00ad": 1\n', encoding="utf-8")
    return tmp_path


def _no_command_lines(text: str) -> None:
    for line in text.splitlines():
        assert not line.lstrip().startswith(("::", "##[")), line


@pytest.mark.parametrize("fmt", ["text", "markdown", "junit", "sarif", "gitlab", "json"])
def test_no_line_of_any_format_starts_a_workflow_command(planted: Path, cli: CliRunner, fmt: str) -> None:
    run = cli("audit", ".", *AS_OF, "--format", fmt)
    assert run.code == 2
    assert "add-mask" in run.out
    _no_command_lines(run.out + run.err)


def test_the_github_format_keeps_its_own_commands_and_no_other(
    planted: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    run = cli("audit", ".", *AS_OF)
    commands = [line for line in run.out.splitlines() if line.startswith("::")]
    assert [c.split(" ", 1)[0] for c in commands] == ["::error", "::error"]
    assert all(c.startswith("::error file=") for c in commands)


def test_an_error_message_never_starts_a_workflow_command(tmp_path: Path, cli: CliRunner) -> None:
    run = cli("audit", "::add-mask::secret", *AS_OF)
    assert run.code == 2 and "add-mask" in run.err
    _no_command_lines(run.err)
    assert run.err.startswith("\\x3a:add-mask::secret:")


def test_invisible_characters_are_shown_escaped(planted: Path, cli: CliRunner) -> None:
    run = cli("audit", ".", *AS_OF, "--format", "text")
    assert "unknown field 'na\\u200bme\\xad'" in run.out
    assert not any(c in run.out for c in INVISIBLE)


@pytest.mark.parametrize("char", INVISIBLE)
def test_each_invisible_character_is_escaped(char: str) -> None:
    assert char not in escape(f"a{char}b") and char not in escape_lines(f"a{char}b")
    assert char not in escape_annotations(f"a{char}b")


@pytest.mark.parametrize("line", ["::add-mask::x", "  ::error::forged", "\u3000::warning::x", "##[group]x"])
def test_escape_lines_defuses_commands_on_every_line(line: str) -> None:
    _no_command_lines(escape_lines(f"ok\n{line}\n"))
    assert escape_annotations(line) == line


def test_mentions_and_urls_from_an_inventory_do_not_notify_or_link(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from tests.conftest import MINIMAL

    monkeypatch.chdir(tmp_path)
    shutil.copytree(MINIMAL, tmp_path / "inv")
    # An unknown key is quoted back in its finding's message, in the report too.
    with (tmp_path / "inv" / "facility.yaml").open("a") as facility:
        facility.write('"ping @octocat, see https://spam.example and www.spam.example": 1\n')
    run = cli("report", "inv", *AS_OF, "-o", "r.md")
    report = (tmp_path / "r.md").read_text()
    assert run.code in (0, 1, 2), run.err
    assert "octocat" in report and "@octocat" not in report
    assert "https://spam" not in report and "www.spam" not in report
    assert "@&#8203;octocat" in report
