from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import jinja2
import pytest

from checker.cli import main
from checker.render import templating
from checker.render.templating import md_escape
from tests.conftest import AS_OF, CliRunner

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("A01", "A01"),
        ("a|b", "a\\|b"),
        ("**bold** _x_", "\\*\\*bold\\*\\* \\_x\\_"),
        ("<script>", "\\<script\\>"),
        ("two\nlines", "two lines"),
        ("[link](http://x)", "\\[link\\](http&#8203;://x)"),  # no autolink either
        ("ping @octocat", "ping @&#8203;octocat"),
    ],
)
def test_user_strings_are_escaped_for_markdown(raw: str, escaped: str) -> None:
    assert md_escape(raw) == escaped


def test_committed_rule_reference_is_up_to_date(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "doc"]) == 0
    generated = capsys.readouterr().out
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == generated, (
        "docs/rules.md is stale: run `checker rules doc -o docs/rules.md`"
    )


def test_a_second_report_in_one_process_compiles_no_template(
    in_fixtures: Path, tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The resident process renders a report for many commands: each template is
    compiled once (about 0.1 s a report), and the second report is the same bytes."""
    compiled: list[str | None] = []
    original = jinja2.Environment.compile

    def counting(self: jinja2.Environment, source: Any, name: str | None = None, *a: Any, **kw: Any) -> Any:
        compiled.append(name)
        return original(self, source, name, *a, **kw)

    monkeypatch.setattr(jinja2.Environment, "compile", counting)
    templating.environment.cache_clear()  # another test's reports compiled them in this process
    templating.html_environment.cache_clear()
    reports = []
    for turn in ("first", "second"):
        out = tmp_path / turn
        args = ["--format", f"markdown:{out}.md", "--format", f"html:{out}.html", *AS_OF]
        assert cli("audit", "overload", "--no-cache", *args).code in (0, 1)
        reports.append((out.with_suffix(".md").read_bytes(), out.with_suffix(".html").read_bytes()))
        if turn == "first":
            first = sorted(n for n in compiled if n and n.startswith("report."))
            assert first == ["report.html.j2", "report.md.j2"]
            compiled.clear()
    assert [n for n in compiled if n and n.startswith("report.")] == []
    assert reports[0] == reports[1]


def test_an_edited_template_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the environment keeps is the templates' files: one edited is compiled again."""
    (tmp_path / "t.j2").write_text("one\n")
    monkeypatch.setattr(templating, "templates_dir", lambda: tmp_path)
    templating.environment.cache_clear()
    try:
        assert templating.environment().get_template("t.j2").render() == "one\n"
        (tmp_path / "t.j2").write_text("two, a longer text\n")
        os.utime(tmp_path / "t.j2", ns=(1, 1))  # another time stamp, however fast the edit
        assert templating.environment().get_template("t.j2").render() == "two, a longer text\n"
    finally:
        templating.environment.cache_clear()
