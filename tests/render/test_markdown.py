"""The readiness report: golden, CommonMark-safe under hostile names, current example."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from checker.cli import main
from tests.conftest import AS_OF, CliRunner, Run, Writer
from tests.helpers import assert_golden

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "A|<b>1`x`*y*[z](e)&lt;~"


def _html(text: str) -> list[str]:
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    inline = [c for t in tokens if t.children for c in t.children]
    return [t.content for t in [*tokens, *inline] if t.type in ("html_inline", "html_block")]


def _table_widths(text: str) -> list[set[int]]:
    """For each table, the set of cell counts of its rows: one width means nothing broke it."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    widths: list[set[int]] = []
    cells = 0
    for tok in tokens:
        if tok.type == "table_open":
            widths.append(set())
        elif tok.type == "tr_open":
            cells = 0
        elif tok.type in ("th_open", "td_open"):
            cells += 1
        elif tok.type == "tr_close":
            widths[-1].add(cells)
    return widths


def test_markdown_golden(golden_run: Callable[[str], Run]) -> None:
    run = golden_run("markdown")
    assert (run.code, run.err) == (0, "")
    assert_golden("report.md", run.out)


def write_hostile(workdir: Writer) -> None:
    """An inventory whose every name is HOSTILE: Markdown, HTML and entity syntax at once."""
    workdir("facility.yaml", f"""\
        kind: Facility
        name: '{HOSTILE}'
        power: {{it_capacity_kw: 100}}
        racks:
          - name: '{HOSTILE}'
            feeds: [{{name: '{HOSTILE}', voltage: 230, amps: 32, phase: 1}}]
        """)
    workdir("servers.yaml", f"""\
        kind: Servers
        facility: '{HOSTILE}'
        servers:
          - name: '{HOSTILE}'
            rack: '{HOSTILE}'
            position: 1
            u_height: 2
            power_w: {{max: 9000}}
            gpu: {{model: l4, count: 1}}
            support: {{vendor: '{HOSTILE}', level: nbd, until: 2030-01-01}}
        """)
    workdir("waivers.yaml", f"""\
        kind: Waivers
        waivers:
          - {{rule: 'support.*', entity: 'server/{HOSTILE}', reason: '{HOSTILE}', owner: '{HOSTILE}',
             expires: 2030-01-01}}
        """)


def test_hostile_names_neither_break_tables_nor_inject_markup(workdir: Writer, cli: CliRunner) -> None:
    write_hostile(workdir)
    run = cli("report", ".", *AS_OF)
    assert run.err == "" and run.code == 1, run.out
    assert "BLOCKED" in run.out
    widths = _table_widths(run.out)
    assert widths and all(len(w) == 1 for w in widths), widths
    # The only HTML is the template's own collapsible list of findings.
    leftover = [re.sub(r"</?(details|summary)>", "", h) for h in _html(run.out)]
    assert not [h for h in leftover if "<" in h], leftover


def test_empty_sections_say_so_in_one_line(workdir: Writer, cli: CliRunner) -> None:
    workdir("workloads.yaml", "kind: Workloads\nworkloads: []\n")
    run = cli("report", ".", *AS_OF)
    assert run.code == 0, run.err
    for line in ("No findings.", "No facilities in the inventory.", "No racks in the inventory.",
                 "No workloads in the inventory.", "No servers in the inventory.", "No waivers apply."):
        assert f"\n{line}\n" in run.out


def test_report_is_written_even_when_blocked(in_fixtures: Path, tmp_path: Path, cli: CliRunner) -> None:
    out = tmp_path / "readiness.md"
    run = cli("report", "overload", *AS_OF, "-o", str(out))
    assert (run.code, run.out, run.err) == (1, "", "")
    assert out.read_text(encoding="utf-8").startswith("# Rollout readiness: BLOCKED\n")


def test_committed_example_report_is_current(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "docs" / "example-readiness.md"
    out.parent.mkdir()
    main(["report", "inventories", "--as-of", "2027-01-15", "-o", str(out)])
    committed = (ROOT / "docs" / "example-readiness.md").read_text(encoding="utf-8")
    generated = out.read_text(encoding="utf-8").replace(_rel(tmp_path / "docs"), "../")
    stale = (
        "docs/example-readiness.md is stale: run "
        "`checker report inventories --as-of 2027-01-15 -o docs/example-readiness.md`"
    )
    assert committed == generated, stale
    pictures = ROOT / "docs" / "example-readiness-pictures"
    made = {p.name: p.read_text(encoding="utf-8") for p in (out.parent / pictures.name).iterdir()}
    assert made == {p.name: p.read_text(encoding="utf-8") for p in pictures.iterdir()}, stale
    assert len([n for n in made if n.startswith("rack-")]) == 13  # an elevation per rack


def _rel(folder: Path) -> str:
    return Path(os.path.relpath(ROOT, folder)).as_posix() + "/"


def test_the_report_does_not_read_server_files_again_for_lines_it_does_not_show(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cli: CliRunner
) -> None:
    # The server tables link no server to its line; reading every server's line
    # parsed every fast-parsed server file a second time (10,000 servers: 2.5 s).
    from benchmarks.fleet import pod_file, write
    from checker.source import fastpath
    from checker.source.parse import parse

    write(40, tmp_path)
    servers = (tmp_path / pod_file(0)).read_text()
    parsed: list[str] = []
    monkeypatch.setattr(fastpath, "parse", lambda text: parsed.append(text) or parse(text))
    out = tmp_path / "report.md"
    run = cli("report", str(tmp_path), *AS_OF, "--no-cache", "-o", str(out))
    assert run.code == 1 and "| 2027-02-01 | 40 | ok |" in out.read_text()  # 40 servers, grouped
    assert servers not in parsed


def test_key_figures_come_first_and_name_the_open_risks(golden_run: Callable[[str], Run]) -> None:
    out = golden_run("markdown").out
    head = out[: out.index("## Findings by category")]
    assert "## Key figures" in head and "1. warning: server s2 has nbd support" in head
    # A fully waived error is not a risk, and sorts below the open findings.
    assert "error:" not in head
    rules = re.findall(r"^\| `([a-z0-9.-]+)` \|", out, re.M)
    assert rules[-1] == "power.rack-capacity", rules
    assert "7 % of 100 kW" in head and "2 servers in 1 rack;" in head


def test_waivers_are_listed_with_owner_reason_and_expiry(golden_run: Callable[[str], Run]) -> None:
    out = golden_run("markdown").out
    waivers = out[out.index("## Waivers"):]
    assert "| owner | reason | expires | state |" in waivers
    assert re.search(r"\| rack/f1/R01 \| [^|]+ \| [^|]+ \| 2027-02-01 \| expiring \| 1 \|", waivers), waivers


def test_rack_feeds_are_counted_by_side_and_rating(golden_run: Callable[[str], Run]) -> None:
    out = golden_run("markdown").out
    assert "| 2N | A 1 x 5.89 kW, B 1 x 5.89 kW |" in out


def test_report_pictures_are_svg_files_beside_it(workdir: Writer, cli: CliRunner, tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    write_hostile(workdir)
    out = tmp_path / "out" / "readiness.md"
    out.parent.mkdir()
    (out.parent / "readiness-pictures").mkdir()
    (out.parent / "readiness-pictures" / "rack-099.svg").write_text("old")  # a rack no longer drawn
    (out.parent / "readiness-pictures" / "notes.svg").write_text("mine")  # not the report's
    run = cli("report", ".", *AS_OF, "-o", str(out))
    assert run.code == 1 and run.err == "", run.err
    folder = out.parent / "readiness-pictures"
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["load.svg", "notes.svg", "rack-001.svg", "timeline.svg"]
    for name in ("load.svg", "rack-001.svg", "timeline.svg"):
        root = ET.fromstring((folder / name).read_text(encoding="utf-8"))  # well-formed, names escaped
        assert HOSTILE in "".join(root.itertext())
    text = out.read_text(encoding="utf-8")
    assert "](readiness-pictures/rack-001.svg)" in text and "](readiness-pictures/load.svg)" in text
    leftover = [re.sub(r"</?(details|summary)>", "", h) for h in _html(text)]
    assert not [h for h in leftover if "<" in h], leftover
    # Printed to the terminal, the report has no pictures to link.
    assert "-pictures/" not in cli("report", ".", *AS_OF).out
