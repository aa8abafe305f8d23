from __future__ import annotations

from pathlib import Path

import pytest

from checker.cli import main
from checker.render.templating import md_escape

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
