"""The HTML readiness report: golden, self-contained, harmless under hostile names, current example."""

from __future__ import annotations

import os
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest

from checker.cli import main
from tests.conftest import AS_OF, CliRunner, Run, Writer
from tests.helpers import assert_golden
from tests.render.test_markdown import HOSTILE, write_hostile

ROOT = Path(__file__).resolve().parents[2]
VOID = {"meta", "br", "hr", "img", "link", "input", "rect", "line", "text", "path", "circle", "polyline"}
# The elements the template writes: anything else came from the data.
ALLOWED = {
    "html", "head", "meta", "title", "style", "body", "section", "h1", "h2", "h3", "p", "b", "span",
    "table", "thead", "tbody", "tr", "th", "td", "a", "code", "ul", "ol", "li", "details", "summary",
    "figure", "figcaption", "svg", "g", "rect", "line", "text", "desc", "tspan",
}


class Page(HTMLParser):
    """Tags, attributes and text of a page; `unclosed` lists elements left open or closed out of order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str]] = []
        self.stack: list[str] = []
        self.unclosed: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [(tag, k, v or "") for k, v in attrs]
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [(tag, k, v or "") for k, v in attrs]

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID and (not self.stack or self.stack[-1] != tag):
            return
        if not self.stack or self.stack.pop() != tag:
            self.unclosed.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def test_html_golden(golden_run: Callable[[str], Run]) -> None:
    run = golden_run("html")
    assert (run.code, run.err) == (0, "")
    assert_golden("report.html", run.out)
    page = parse(run.out)
    assert page.unclosed == [] and page.stack == [], (page.unclosed, page.stack)
    # The golden inventory's one rack: one elevation, its devices coloured, the load bars with their lines.
    assert run.out.count('class="elevation"') == 1
    assert 'class="bars"' in run.out
    assert '<line class="warning"' in run.out and '<line class="limit"' in run.out


def test_example_html_draws_one_elevation_per_rack() -> None:
    html = (ROOT / "docs" / "example-readiness.html").read_text(encoding="utf-8")
    racks = (ROOT / "docs" / "example-readiness.md").read_text(encoding="utf-8").split("## Racks")[1]
    rows = [ln for ln in racks.split("\n\n")[1].splitlines()[2:] if ln.startswith("| [")]
    assert len(rows) == 13 and html.count('class="elevation"') == len(rows)


def test_html_loads_nothing_and_runs_nothing(golden_run: Callable[[str], Run]) -> None:
    page = parse(golden_run("html").out)
    assert "script" not in page.tags and "link" not in page.tags and "img" not in page.tags
    assert not [a for a in page.attrs if a[1].startswith("on") or a[1] in ("src", "srcset", "style")]
    assert ("meta", "http-equiv", "Content-Security-Policy") in page.attrs
    csp = next(v for t, k, v in page.attrs if k == "content" and "default-src" in v)
    assert csp.startswith("default-src 'none';")
    hrefs = [v for _, k, v in page.attrs if k == "href"]
    assert hrefs and not [h for h in hrefs if "//" in h or h.startswith(("javascript:", "data:"))]


def test_html_sections_break_pages_when_printed(golden_run: Callable[[str], Run]) -> None:
    out = golden_run("html").out
    assert "section { break-before: page; }" in out
    assert out.count("<section") >= 5


def test_hostile_names_stay_text_in_html(workdir: Writer, cli: CliRunner) -> None:
    write_hostile(workdir)
    run = cli("report", ".", *AS_OF, "--format", "html")
    assert run.err == "" and run.code == 1, run.out
    page = parse(run.out)
    assert set(page.tags) <= ALLOWED, set(page.tags) - ALLOWED
    assert page.unclosed == [] and page.stack == []
    assert not [a for a in page.attrs if a[1].startswith("on")]
    hrefs = [v for _, k, v in page.attrs if k == "href"]
    assert not [h for h in hrefs if h.lower().startswith(("javascript:", "http:", "https:", "data:", "//"))]
    text = "".join(page.text)
    assert text.count(HOSTILE) >= 5, text  # the names are shown, as text


def test_committed_example_html_is_current(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "docs" / "example-readiness.html"
    out.parent.mkdir()
    main(["report", "inventories", "--as-of", "2027-01-15", "--format", "html", "-o", str(out)])
    committed = (ROOT / "docs" / "example-readiness.html").read_text(encoding="utf-8")
    rel = Path(os.path.relpath(ROOT, tmp_path / "docs")).as_posix() + "/"
    generated = out.read_text(encoding="utf-8").replace(rel, "../")
    assert committed == generated, (
        "docs/example-readiness.html is stale: run "
        "`checker report inventories --as-of 2027-01-15 --format html -o docs/example-readiness.html`"
    )


def test_a_large_fleet_shows_its_most_used_racks(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cli: CliRunner
) -> None:
    # 10,000 servers (2,500 racks) give a 366 kB file with the limits of 200 rows and
    # 48 elevations (docs/performance.md); here 10 racks with limits of 4 and 2.
    from benchmarks.fleet import write
    from checker.render import pictures

    monkeypatch.setattr(pictures, "RACK_ROWS", 4)
    monkeypatch.setattr(pictures, "ELEVATIONS", 2)
    write(40, tmp_path / "fleet")
    out = tmp_path / "report.html"
    run = cli("report", str(tmp_path / "fleet"), *AS_OF, "--no-cache", "--format", "html", "-o", str(out))
    assert run.code in (0, 1), run.err
    text = out.read_text(encoding="utf-8")
    assert "The 4 most used of 10 racks; the other 6 are in the Markdown report" in text
    assert text.count('class="elevation"') == 2 and "the other 8 are not." in text
    assert text.count('<g class="bar ') == 4
