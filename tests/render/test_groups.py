"""Alike findings shown once (render/groups.py): in text, Markdown, HTML and
`checker diff`, with their count and names; JSON keeps one finding each."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

import pytest

from checker.core.findings import Finding
from checker.decide.result import AuditResult
from checker.evaluate.engine import Messages
from checker.render.context import RenderContext
from checker.render.groups import group, shown_groups
from checker.render.text import render
from tests.conftest import AS_OF, CliRunner, Writer, summary


def _f(entity: str, message: str, line: int = 1, *, rule: str = "support.level-24x7",
       severity: str = "warning", waived: bool = False, file: str = "s.yaml") -> Finding:
    return Finding(rule, severity, "support", entity, message, "", file, line, 1, waived)  # type: ignore[arg-type]


SHAPE = Messages().shape  # findings that carry their message are shaped from its text


@pytest.mark.parametrize(
    ("findings", "sizes"),
    [
        pytest.param([_f("server/a", "server a has nbd"), _f("server/b", "server b has nbd")], [2],
                     id="same-but-the-name"),
        pytest.param([_f("server/a", "server a has nbd"), _f("server/b", "server b has 8x5")], [1, 1],
                     id="another-message"),
        pytest.param([_f("server/a", "server a has nbd"), _f("server/b", "server b has nbd", waived=True)],
                     [1, 1], id="waived-apart"),
        pytest.param([_f("server/a", "server a has nbd"),
                      _f("server/b", "server b has nbd", rule="support.missing")], [1, 1], id="another-rule"),
        pytest.param([_f("server/a", "server a has nbd"),
                      _f("server/b", "server b has nbd", severity="error")], [1, 1], id="another-severity"),
        # `s1` is not the `s1` in `s12`: the name is replaced as a whole word only.
        pytest.param([_f("server/s1", "server s1 feeds s12"), _f("server/s2", "server s2 feeds s22")], [1, 1],
                     id="name-as-a-word"),
        # Input errors have no entity: their place is all they have.
        pytest.param([_f("", "unknown key 'x'", 3), _f("", "unknown key 'x'", 9)], [1, 1], id="no-entity"),
        pytest.param([_f("server/a", "server a has nbd", 5), _f("server/c", "server c has 8x5", 6),
                      _f("server/b", "server b has nbd", 7)], [2, 1], id="first-place-order"),
    ],
)
def test_what_is_alike(findings: list[Finding], sizes: list[int]) -> None:
    assert [len(g.findings) for g in group(findings, SHAPE)] == sizes


def _result(findings: list[Finding]) -> AuditResult:
    return AuditResult(dt.date(2027, 1, 15), "pass", 0, {"error": 0, "warning": len(findings), "info": 0,
                                                         "waived": 0}, tuple(findings), None)


def test_the_cap_counts_lines_and_the_left_out_count_counts_findings() -> None:
    # 3 groups of one rule (2 + 2 + 1 findings): 2 lines shown, the third group's 1 finding left out.
    fs = [_f("server/a", "server a has nbd", 1), _f("server/b", "server b has 8x5", 2),
          _f("server/c", "server c has nbd", 3), _f("server/d", "server d has 8x5", 4),
          _f("server/e", "server e has none", 5)]
    view = shown_groups(_result(fs), 2)
    assert [len(g.findings) for g in view.groups] == [2, 2]
    assert view.left_out == {"support.level-24x7": 1}
    assert len(shown_groups(_result(fs), 2, alike=False).groups) == 2


def test_a_text_line_names_the_others_with_their_own_line_and_counts_what_it_does_not_list() -> None:
    fs = [_f(f"server/s{i}", f"server s{i} has nbd", 1 if i < 3 else 2) for i in range(1, 15)]
    fs.append(_f("server/t1", "server t1 has nbd", 4, file="t.yaml"))
    text = render(_result(fs), RenderContext())
    first = text.splitlines()[0]
    assert first == (
        "s.yaml:1:1: warning support.level-24x7 server s1 has nbd (and 14 more alike: s2, s3 (line 2), "
        "s4 (line 2), s5 (line 2), s6 (line 2), s7 (line 2), s8 (line 2), s9 (line 2), s10 (line 2), "
        "s11 (line 2) and 4 more)"
    )
    # --max-per-rule 0 shows every name, the other file's with its file.
    every = render(_result(fs), RenderContext(max_per_rule=0)).splitlines()[0]
    assert every.endswith("s13 (line 2), s14 (line 2), t1 (t.yaml:4))")


SERVERS = """\
    kind: Servers
    facility: f1
    rollout_date: 2027-02-01
    defaults: &d {rack: R01, u_height: 1, power_w: {max: 300}, gpu: {model: l4, count: 1}}
    servers:
      - {<<: *d, name: s1, position: 1, support: {vendor: Acme, level: nbd, until: 2030-12-31}}
      - {<<: *d, name: s2, position: 2, support: {vendor: Acme, level: nbd, until: 2030-12-31}}
      - {<<: *d, name: s3, position: 3, support: {vendor: Acme, level: 8x5, until: 2030-12-31}}
      - {<<: *d, name: s4, position: 4, support: {vendor: Acme, level: nbd, until: 2030-12-31}}
    """
NBD = "servers.yaml:{}: warning support.level-24x7 server {} has nbd support; the rollout expects 24x7"
X85 = "servers.yaml:8:61: warning support.level-24x7 server s3 has 8x5 support; the rollout expects 24x7"


def test_cli_text_shows_alike_findings_once_and_json_keeps_each(cli: CliRunner, workdir: Writer) -> None:
    workdir("servers.yaml", SERVERS, minimal=("facility",))
    run = cli("audit", ".", *AS_OF, "--select", "support.*")
    assert (run.code, run.err) == (0, "")
    assert run.lines == [
        NBD.format("6:61", "s1") + " (and 2 more alike: s2 (line 7), s4 (line 9))",
        X85,
        summary(warning=4, verdict="pass"),
    ]
    one_each = [NBD.format("6:61", "s1"), NBD.format("7:61", "s2"), X85, NBD.format("9:61", "s4")]
    assert cli("audit", ".", *AS_OF, "--select", "support.*", "--no-group").lines[:4] == one_each
    doc = json.loads(cli("audit", ".", *AS_OF, "--select", "support.*", "--format", "json").out)
    assert [f["entity"] for f in doc["findings"]] == ["server/s1", "server/s2", "server/s3", "server/s4"]


def test_cli_group_findings_false_in_the_config_shows_a_line_each(cli: CliRunner, workdir: Writer) -> None:
    workdir("servers.yaml", SERVERS, minimal=("facility",))
    Path("checker.yaml").write_text("group_findings: false\n")
    one_each = [NBD.format("6:61", "s1"), NBD.format("7:61", "s2"), X85, NBD.format("9:61", "s4")]
    assert cli("audit", ".", *AS_OF, "--select", "support.*").lines[:4] == one_each
    Path("checker.yaml").write_text("group_findings: 0\n")
    run = cli("audit", ".", *AS_OF)
    assert (run.code, run.err.splitlines()[0]) == (2, "checker.yaml:1:17: group_findings: "
                                            "Input should be a valid boolean (got 0)")


def test_cli_markdown_links_each_alike_finding_to_its_own_line(cli: CliRunner, workdir: Writer) -> None:
    workdir("servers.yaml", SERVERS, minimal=("facility",))
    md = cli("audit", ".", *AS_OF, "--select", "support.*", "--format", "markdown").out
    assert (
        "- warning `support.level-24x7` [servers.yaml:6](servers.yaml#L6): server s1 has nbd support; the "
        "rollout expects 24x7 (and 2 more alike: [s2](servers.yaml#L7), [s4](servers.yaml#L9))\n"
    ) in md


def _git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, capture_output=True)


def test_cli_diff_shows_the_new_alike_findings_once(cli: CliRunner, workdir: Writer) -> None:
    workdir("servers.yaml", SERVERS.replace("level: nbd", "level: 24x7"), minimal=("facility",))
    _git("init", "-q", "-b", "main")
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "empty")
    _git("add", ".")
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
    workdir("servers.yaml", SERVERS)
    run = cli("diff", "--base", "HEAD", ".", *AS_OF, "--select", "support.*")
    assert run.lines[1:4] == [
        "new findings: 3",  # the count is of findings, not lines
        "  " + NBD.format("6:61", "s1") + " (and 2 more alike: s2 (line 7), s4 (line 9))",
        "worsened findings: 0",
    ]
