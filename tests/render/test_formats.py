"""The format table: each row's promises hold, and the docs show the table."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from checker.core.errors import UserError
from checker.core.findings import Finding
from checker.decide.result import AuditResult
from checker.evaluate.rulebook import load_rulebook
from checker.render import FORMATS, formats_table, get
from checker.render.context import RenderContext

ROOT = Path(__file__).resolve().parents[2]
# 30 findings of one rule on 30 racks; the display cap is 7.
FINDINGS = tuple(
    Finding("power.rack-capacity", "error", "power", f"rack/f/R{i:02d}", f"R{i:02d} over", "r", "f", i, 1)
    for i in range(1, 31)
)
SUMMARY = {"error": 30, "warning": 0, "info": 0, "waived": 0}
META = tuple(m for m in load_rulebook().metadata() if m.id == "power.rack-capacity")
RESULT = AuditResult(dt.date(2027, 1, 15), "fail", 1, SUMMARY, FINDINGS, None, META)


@pytest.mark.parametrize("name", list(FORMATS))
def test_a_format_shows_every_finding_unless_it_is_capped(name: str) -> None:
    out = FORMATS[name].render(RESULT, RenderContext(max_per_rule=7))
    shown = sum(f"R{i:02d} over" in out for i in range(1, 31))
    if FORMATS[name].capped:
        assert shown == 7 and "23 more" in out, out
    else:
        assert shown == 30, out


@pytest.mark.parametrize("doc", ["README.md", "docs/architecture.md"])
def test_the_docs_show_the_format_table(doc: str) -> None:
    expected = formats_table("docs/" if doc == "README.md" else "")
    message = f"{doc}: put this table in place of its format table:\n{expected}"
    assert expected in (ROOT / doc).read_text(), message


def test_an_unknown_format_names_the_known_ones() -> None:
    with pytest.raises(UserError, match="known: text, json, markdown, html, sarif, junit, gitlab, github"):
        get("xml")
