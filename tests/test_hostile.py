"""Hostile and careless input, tried from the command line as a user would.

One table per class of defect (issue "Hostile and careless input"). Every case
asserts the exit code, that no traceback appears, and where the message points;
every case also asserts that no control character reaches stdout or stderr.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.cli import EXIT_BROKEN_PIPE, main
from checker.derive.knowledge import TABLE_KINDS
from checker.load.build import KINDS
from tests.conftest import AS_OF, MINIMAL
from tests.helpers import deadline, evaluated, write_file

ROOT = Path(__file__).resolve().parent.parent
# Any byte below 0x20 but the newline, DEL, and the C1 controls, as they reach a terminal.
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")

Setup = Callable[[Path, pytest.MonkeyPatch], None]


@dataclass(frozen=True)
class Case:
    """Files written over a copy of the minimal inventory in `inv/`, a command line
    run from the folder above it, and what must come out."""

    id: str
    code: int
    expect: str  # a substring of stdout + stderr, location first where there is one
    files: dict[str, str | bytes] = field(default_factory=dict)
    argv: tuple[str, ...] = ("audit", "inv", *AS_OF)
    setup: Setup | None = None
    absent: str = "\x00"  # a substring that must not appear

    def param(self) -> Any:
        return pytest.param(self, id=self.id)


@dataclass(frozen=True)
class Out:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def _call(argv: tuple[str, ...]) -> Out:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return Out(code, out.getvalue(), err.getvalue())


def _assert_clean(run: Out) -> None:
    assert "Traceback" not in run.text and "internal error" not in run.text, run.text
    assert not CONTROL.search(run.out), repr(run.out)
    assert not CONTROL.search(run.err), repr(run.err)


def run_case(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Out:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CHECKER_DEBUG", raising=False)
    shutil.copytree(MINIMAL, tmp_path / "inv")
    for name, content in case.files.items():
        write_file(tmp_path / name, content)
    if case.setup:
        case.setup(tmp_path, monkeypatch)
    with deadline(20):
        run = _call(case.argv)
    _assert_clean(run)
    assert run.code == case.code, run.text
    assert case.expect in run.text, run.text
    assert case.absent not in run.text, run.text
    return run


def servers(**replace: str) -> str:
    """The minimal servers.yaml with some `key: value` lines replaced."""
    text = (MINIMAL / "servers.yaml").read_text(encoding="utf-8")
    for old, new in replace.items():
        text = text.replace(old, new)
    return text


def facility(old: str, new: str) -> str:
    return (MINIMAL / "facility.yaml").read_text(encoding="utf-8").replace(old, new)


RULE = """\
rules:
  - id: {id}
    title: {title}
    category: {category}
    severity: error
    on: server
    when: name == "s1"
    message: {message}
    remediation: Fix it.
    examples:
      fail: [{fail}]
      pass: [{{name: s2}}]
"""


def rule(
    message: str = '"server {{ name }}"',
    *,
    id: str = "acme.r1",
    title: str = "A rule",
    category: str = "power",
    fail: str = "{name: s1}",
) -> str:
    return RULE.format(id=id, title=title, category=category, message=message, fail=fail)


WITH_RULES = ("audit", "inv", "--rules", "rules", *AS_OF)


# ---------------------------------------------------------------- 1. terminal escape injection
def _undecodable_name(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (Path(os.fsdecode(os.fsencode(tmp / "inv") + b"/\xff.yaml"))).write_text("kind: Nope\n")


TERMINAL = [
    Case(
        "undecodable-file-name",
        2,
        "inv/\\udcff.yaml:1:7: error schema.document unknown kind 'Nope'",
        setup=_undecodable_name,
    ),
    Case(
        "undecodable-file-name-json-to-a-file",
        2,
        "",
        argv=("audit", "inv", "--format", "json:out.json", *AS_OF),
        setup=_undecodable_name,
    ),
    Case(
        "esc-in-server-name",
        2,
        "inv/servers.yaml:5:11: error schema.invalid name: a name may not hold control or invisible "
        "characters (got 's1\\x1b[2J')",
        {"inv/servers.yaml": servers(**{"- name: s1": '- name: "s1\\e[2J"'})},
    ),
    Case(
        "bel-in-reference",
        2,
        "inv/servers.yaml:12:15: error schema.invalid workload",
        {"inv/servers.yaml": servers(**{"workload: w1": 'workload: "w1\\a"'})},
    ),
    Case(
        "bidi-override-in-name",
        2,
        "(got 'w\\u202e1')",
        {
            "inv/workloads.yaml": 'kind: Workloads\nworkloads: [{name: "w\\u202E1", task: inference, '
            "params_b: 7, precision: bf16}]\n"
        },
    ),
    Case(
        "newline-and-esc-in-file-name",
        2,
        "inv/a\\x1b[2J\\x0ab.yaml:1:7: error schema.document unknown kind",
        {"inv/a\x1b[2J\nb.yaml": "kind: Nope\n"},
    ),
    Case(
        "esc-in-message-text",
        1,
        "error acme.r1 server s1 \\x1b[2J done",
        {"rules/r.yaml": rule('"server {{ name }} \\e[2J done"')},
        WITH_RULES,
    ),
    Case(
        "c1-csi-in-message-json",
        1,
        '"message": "server s1 \\u009b2J"',
        {"rules/r.yaml": rule('"server {{ name }} \\x9b2J"')},
        (*WITH_RULES, "--format", "json"),
    ),
    Case(
        "newline-in-message-is-one-line",
        1,
        "error acme.r1 server s1 inv/x.yaml:1:1: error forged\n",
        {"rules/r.yaml": rule('"server {{ name }}\\ninv/x.yaml:1:1: error forged"')},
        WITH_RULES,
        absent="\ninv/x.yaml",
    ),
    Case(
        "esc-in-rule-title-list",
        0,
        "  error    power          Evil\\x1b]0;owned\\x07 title",
        {"rules/r.yaml": rule(title='"Evil\\e]0;owned\\a title"')},
        ("rules", "list", "--rules", "rules"),
    ),
    Case(
        "newline-in-rule-title-show",
        0,
        "acme.r1: two\\x0alines",
        {"rules/r.yaml": rule(title='"two\\nlines"')},
        ("rules", "show", "acme.r1", "--rules", "rules"),
    ),
    Case(
        "esc-in-example-explain",
        0,
        'fails on: {"name": "s\\u001b1"}',
        {"rules/r.yaml": rule(fail='{name: "s\\e1"}')},
        ("explain", "acme.r1", "--rules", "rules"),
    ),
    Case(
        "esc-in-rule-file-name-rules-test",
        0,
        "rules/r\\x1b[31m.yaml:2",
        {"rules/r\x1b[31m.yaml": rule()},
        ("rules", "test", "rules"),
    ),
    Case(
        "esc-in-waiver-entity",
        2,
        "error schema.reference waiver names unknown entity 'server/s1\\x1b[2J'",
        {
            "inv/waivers.yaml": "kind: Waivers\nwaivers: [{rule: power.rack-capacity, "
            'entity: "server/s1\\e[2J", reason: ticket 1, owner: me, expires: 2030-01-01}]\n'
        },
    ),
    Case(
        "esc-in-command-line-path",
        2,
        "inv\\x1b[2J: no such file or directory",
        {},
        ("audit", "inv\x1b[2J", *AS_OF),
    ),
    Case(
        "esc-in-unknown-option", 2, "unrecognized arguments: --x\\x1b[2J", {}, ("audit", "inv", "--x\x1b[2J")
    ),
    Case(
        "newline-in-unknown-option",
        2,
        "checker: error: unrecognized arguments: --x\\x0aforged",
        {},
        ("audit", "inv", "--x\nforged"),
        absent="\nforged",
    ),
    Case(
        "newline-in-unknown-rule",
        2,
        "unknown rule 'a\\x0ainv/x.yaml:1:1: forged'",
        {},
        ("explain", "a\ninv/x.yaml:1:1: forged"),
        absent="\ninv/x.yaml",
    ),
    Case(
        "esc-in-select",
        2,
        "checker: --select 'a\\x1b[2J' matches no rule",
        {},
        ("audit", "inv", "--select", "a\x1b[2J", *AS_OF),
    ),
    Case(
        "esc-in-config-entry",
        2,
        "checker.yaml:1:10: select 'x\\x1b' matches no rule",
        {"checker.yaml": 'select: ["x\\e"]\n'},
    ),
    Case(
        "raw-control-byte-in-yaml",
        2,
        "inv/raw.yaml:1:8: error schema.yaml invalid YAML: character U+001B is not allowed",
        {"inv/raw.yaml": b"name: a\x1b[2J\n"},
    ),
    Case("tab-in-text-output", 2, "unknown kind 'a\\x09b'", {"inv/tab.yaml": 'kind: "a\\tb"\n'}),
]


@pytest.mark.parametrize("case", [c.param() for c in TERMINAL])
def test_no_control_character_reaches_the_terminal(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_case(case, tmp_path, monkeypatch)


def test_control_characters_in_a_json_report_stay_valid_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = Case(
        "json",
        1,
        '"message"',
        {"rules/r.yaml": rule('"s\\t{{ name }}\\e\\x85\\u2028"')},
        (*WITH_RULES, "--format", "json"),
    )
    run = run_case(case, tmp_path, monkeypatch)
    message = next(f["message"] for f in json.loads(run.out)["findings"] if f["rule"] == "acme.r1")
    assert message == "s s1\x1b"  # one line: whitespace (tab, NEL, U+2028) collapsed, ESC escaped in JSON


# ---------------------------------------------------------------- 2. no silent skips in discovery
def _unreadable(relative: str) -> Setup:
    """The folder raises PermissionError when listed (tests run as root, where chmod 000 does not)."""

    def setup(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        target = os.path.realpath(tmp / relative)
        real_scandir = os.scandir

        def scandir(path: Any = ".") -> Any:
            if os.path.realpath(path) == target:
                raise PermissionError(13, "Permission denied", str(path))
            return real_scandir(path)

        monkeypatch.setattr(os, "scandir", scandir)

    return setup


def _link(target: str, name: str) -> Setup:
    def setup(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).symlink_to(target)

    return setup


def _both(first: Setup, second: Setup) -> Setup:
    def setup(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        first(tmp, monkeypatch)
        second(tmp, monkeypatch)

    return setup


def _fifo(name: str) -> Setup:
    def setup(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        os.mkfifo(tmp / name)

    return setup


BAD_KIND = "kind: Nope\n"


def _deep_tree(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file 600 folders deep (a recursive walk would overflow Python's stack)."""
    folder = os.open(tmp / "inv", os.O_RDONLY)
    for _ in range(600):
        os.mkdir("d", dir_fd=folder)
        inner = os.open("d", os.O_RDONLY, dir_fd=folder)
        os.close(folder)
        folder = inner
    file = os.open("x.yaml", os.O_WRONLY | os.O_CREAT, dir_fd=folder)
    os.write(file, BAD_KIND.encode())
    os.close(file)
    os.close(folder)


DISCOVERY = [
    Case("deep-tree", 2, "/d/x.yaml:1:7: error schema.document unknown kind 'Nope'", setup=_deep_tree),
    Case(
        "empty-folder",
        2,
        "empty:1:1: error schema.file no .yaml or .yml file here: nothing to check",
        {"empty/README.md": "# nothing\n"},
        ("audit", "empty", *AS_OF),
    ),
    Case(
        "folder-with-only-the-config",
        2,
        "only:1:1: error schema.file no .yaml or .yml file here",
        {"only/checker.yaml": "fail_on: error\n"},
        ("audit", "only", *AS_OF),
    ),
    Case(
        "empty-rule-folder",
        2,
        "rules: no .yaml or .yml file here: nothing to check",
        {"rules/README.md": "# none yet\n"},
        WITH_RULES,
    ),
    Case("same-folder-twice", 0, "checker: 0 errors", {}, ("audit", "inv", "inv", "./inv/", *AS_OF)),
    Case(
        "unreadable-subfolder",
        2,
        "inv/sub:1:1: error schema.file cannot read folder: Permission denied",
        {"inv/sub/x.yaml": BAD_KIND},
        setup=_unreadable("inv/sub"),
    ),
    Case(
        "unreadable-rule-subfolder",
        2,
        "rules/sub: cannot read folder: Permission denied",
        {"rules/sub/r.yaml": rule()},
        WITH_RULES,
        setup=_unreadable("rules/sub"),
    ),
    Case(
        "upper-case-suffix-is-read",
        2,
        "inv/X.YAML:1:7: error schema.document unknown kind 'Nope'",
        {"inv/X.YAML": BAD_KIND},
    ),
    Case("yml-any-case-is-read", 2, "inv/x.Yml:1:7: error schema.document", {"inv/x.Yml": BAD_KIND}),
    Case("rule-file-upper-case", 1, "error acme.r1 server s1", {"rules/R.YML": rule()}, WITH_RULES),
    Case(
        "symlink-loop-to-ancestor",
        2,
        "inv/sub/up:1:1: error schema.file symbolic link loop: leads back to a folder it is in",
        setup=_link("..", "inv/sub/up"),
    ),
    Case(
        "symlink-to-itself",
        2,
        "inv/self.yaml:1:1: error schema.file symbolic link loop: not followed",
        setup=_link("self.yaml", "inv/self.yaml"),
    ),
    Case(
        "broken-symlink",
        2,
        "inv/gone.yaml:1:1: error schema.file broken symbolic link: not followed",
        setup=_link("nowhere.yaml", "inv/gone.yaml"),
    ),
    Case(
        "broken-symlink-folder",
        2,
        "inv/gone:1:1: error schema.file broken symbolic link",
        setup=_link("nowhere", "inv/gone"),
    ),
    Case(
        "symlinked-folder-is-followed",
        2,
        "inv/more/x.yaml:1:7: error schema.document",
        {"elsewhere/x.yaml": BAD_KIND},
        setup=_link("../elsewhere", "inv/more"),
    ),
    Case(
        "folder-linked-twice-is-read-once",
        2,
        "checker: 1 error,",
        {"elsewhere/x.yaml": BAD_KIND},
        setup=_both(_link("../elsewhere", "inv/a"), _link("../elsewhere", "inv/b")),
    ),
    Case(
        "fifo-in-folder",
        2,
        "inv/pipe.yaml:1:1: error schema.file is a FIFO, not a file: not read",
        setup=_fifo("inv/pipe.yaml"),
    ),
    Case(
        "fifo-on-command-line",
        2,
        "pipe:1:1: error schema.file is a FIFO",
        argv=("audit", "pipe", *AS_OF),
        setup=_fifo("pipe"),
    ),
    Case(
        "dev-null-on-command-line",
        2,
        "/dev/null:1:1: error schema.file is a character device",
        argv=("audit", "/dev/null", *AS_OF),
    ),
    Case(
        "dev-null-linked-in-folder",
        2,
        "inv/null.yaml:1:1: error schema.file is a character device",
        setup=_link("/dev/null", "inv/null.yaml"),
    ),
    Case(
        "fifo-in-rule-folder",
        2,
        "rules/p.yaml: is a FIFO, not a file",
        argv=WITH_RULES,
        setup=_both(lambda t, m: os.makedirs(t / "rules"), _fifo("rules/p.yaml")),
    ),
    Case(
        "loop-in-rule-folder",
        2,
        "rules/up/rules: symbolic link loop",
        {"rules/r.yaml": rule()},
        WITH_RULES,
        setup=_link("..", "rules/up"),
    ),
    Case(
        "hidden-folders-skipped",
        0,
        "checker: 0 errors",
        {"inv/.git/x.yaml": BAD_KIND, "inv/.github/workflows/ci.yml": "on: push\n"},
    ),
    Case("hidden-files-skipped", 0, "checker: 0 errors", {"inv/.pre-commit-config.yaml": "repos: []\n"}),
    Case(
        "config-among-inventories-skipped", 0, "checker: 0 errors", {"inv/checker.yaml": "fail_on: error\n"}
    ),
    Case(
        "other-files-skipped", 0, "checker: 0 errors", {"inv/README.md": "# notes\n", "inv/x.yaml~": BAD_KIND}
    ),
    Case(
        "hidden-file-named-on-command-line-is-read",
        2,
        "inv/.x.yaml:1:7: error schema.document",
        {"inv/.x.yaml": BAD_KIND},
        ("audit", "inv", "inv/.x.yaml", *AS_OF),
    ),
]


@pytest.mark.parametrize("case", [c.param() for c in DISCOVERY])
def test_every_folder_is_read_or_reported(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_case(case, tmp_path, monkeypatch)


# ---------------------------------------------------------------- 3. bounded message templates
# The message is line 8 of the rule file, its value at column 14.
AT_MESSAGE = "rules/r.yaml:8:14: rule acme.r1: message fails for server/s1: "
TEMPLATES = [
    Case(
        "nested-huge-range",
        2,
        AT_MESSAGE + "range of 99999 items",
        {
            "rules/r.yaml": rule(
                '"{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}"'
            )
        },
    ),
    Case(
        "nested-loops-within-range",
        2,
        AT_MESSAGE + "loops take over 10000 steps",
        {
            "rules/r.yaml": rule(
                '"{% for i in range(999) %}{% for j in range(999) %}{% endfor %}{% endfor %}"'
            )
        },
    ),
    Case(
        "loop-over-long-string",
        2,
        AT_MESSAGE + "'*' makes 5000 characters",
        {"rules/r.yaml": rule("\"{% for c in 'x' * 5000 %}{% endfor %}\"")},
    ),
    Case(
        "printf-width",
        2,
        AT_MESSAGE + "% format: width 999999999 is over the limit of 200",
        {"rules/r.yaml": rule("\"{{ '%999999999d' % 1 }}\"")},
    ),
    Case(
        "printf-precision",
        2,
        AT_MESSAGE + "% format: width 999999999",
        {"rules/r.yaml": rule("\"{{ '%.999999999f' % 1.5 }}\"")},
    ),
    Case(
        "printf-star-width",
        2,
        AT_MESSAGE + "'%*d' widths from arguments are not allowed",
        {"rules/r.yaml": rule("\"{{ '%*d' % (999999999, 1) }}\"")},
    ),
    Case(
        "format-method-width",
        2,
        AT_MESSAGE + "format spec: width 999999999",
        {"rules/r.yaml": rule("\"{{ '{:999999999}'.format(1) }}\"")},
    ),
    Case(
        "format-method-nested-width",
        2,
        AT_MESSAGE + "nested fields in a format spec",
        {"rules/r.yaml": rule("\"{{ '{:{w}}'.format(1, w=999999999) }}\"")},
    ),
    Case(
        "format-filter-width",
        2,
        AT_MESSAGE + "% format: width 999999999",
        {"rules/r.yaml": rule("\"{{ '%999999999s'|format(name) }}\"")},
    ),
    Case(
        "string-repetition",
        2,
        AT_MESSAGE + "'*' makes 999999999 characters",
        {"rules/r.yaml": rule("\"{{ 'x' * 999999999 }}\"")},
    ),
    Case(
        "list-repetition",
        2,
        AT_MESSAGE + "'*' makes 999999999 characters",
        {"rules/r.yaml": rule('"{{ [0] * 999999999 }}"')},
    ),
    Case(
        "nested-repetition",
        2,
        AT_MESSAGE + "'*' makes a nested value of over 20000 characters and items",
        {"rules/r.yaml": rule("\"{{ [['x' * 1000] * 1000] * 1000 }}\"")},
    ),
    Case(
        "nested-literals",
        2,
        AT_MESSAGE + "a literal makes a nested value of over 20000",
        {
            "rules/r.yaml": rule(
                "\"{% set a = 'x' * 999 %}{% set b = [a, a, a, a, a, a, a, a, a, a] %}"
                "{% set c = [b, b, b, b, b, b, b, b, b, b] %}{% set d = [c, c, c, c, c, c, c, c, c, c] %}"
                '{{ [d, d, d, d, d, d, d, d, d, d] }}"'
            )
        },
    ),
    Case(
        "center-filter",
        2,
        AT_MESSAGE + "filter center: width 999999999",
        {"rules/r.yaml": rule('"{{ name|center(999999999) }}"')},
    ),
    Case(
        "indent-filter",
        2,
        AT_MESSAGE + "filter indent: width 999999999",
        {"rules/r.yaml": rule('"{{ name|indent(999999999, true) }}"')},
    ),
    Case(
        "indent-filter-string-width",
        2,
        AT_MESSAGE + "'~' makes 1804 characters",
        {
            "rules/r.yaml": rule(
                "\"{{ name|indent('x' * 900, true, true) ~ name|indent('x' * 900, true, true) }}\""
            )
        },
    ),
    Case(
        "wordwrap-filter",
        2,
        AT_MESSAGE + "filter wordwrap: width 999999999",
        {"rules/r.yaml": rule('"{{ name|wordwrap(999999999) }}"')},
    ),
    Case(
        "batch-filter",
        2,
        AT_MESSAGE + "filter batch: width 999999999",
        {"rules/r.yaml": rule('"{{ [1]|batch(999999999, 0)|list }}"')},
    ),
    Case(
        "center-method",
        2,
        AT_MESSAGE + "str.center: width 999999999",
        {"rules/r.yaml": rule('"{{ name.center(999999999) }}"')},
    ),
    Case(
        "zfill-method",
        2,
        AT_MESSAGE + "str.zfill: width 999999999",
        {"rules/r.yaml": rule('"{{ name.zfill(999999999) }}"')},
    ),
    Case(
        "replace-growth",
        2,
        AT_MESSAGE + "replace() makes",
        {"rules/r.yaml": rule("\"{{ ('ab' * 400).replace('', 'x' * 900) }}\"")},
    ),
    Case(
        "power-tower",  # a constant exponent: refused at load (issue 17), not when it renders
        2,
        "rules/r.yaml:8:14: rule acme.r1: bad message template: exponent 99999999 is over the limit",
        {"rules/r.yaml": rule('"{{ 10 ** 99999999 }}"')},
    ),
    Case(
        "repeated-squaring",
        2,
        AT_MESSAGE + "'**' makes a number of over 4096 bits",
        {"rules/r.yaml": rule('"{{ ((10 ** 64) ** 64) ** 64 }}"')},
    ),
    Case(
        "concat-doubling",
        2,
        AT_MESSAGE + "'~' makes",
        {"rules/r.yaml": rule("\"{% set a = 'x' * 999 %}{% set b = a ~ a %}{% set c = b ~ b %}{{ c }}\"")},
    ),
    Case(
        "long-message-is-cut",
        1,
        "xxx [cut at 1000 characters]\n",
        {"rules/r.yaml": rule("\"{% for i in range(9) %}{{ 'x' * 999 }}{% endfor %}\"")},
    ),
    Case(
        "long-input-in-message-is-cut",
        1,
        "error acme.r1 os " + "o" * 972 + " [cut at 1000 characters]\n",
        {
            "rules/r.yaml": rule('"os {{ software.os }}"'),
            "inv/servers.yaml": servers(
                **{"workload: w1": "workload: w1\n    software: {os: " + "o" * 5000 + "}"}
            ),
        },
    ),
    Case("division-by-zero", 2, AT_MESSAGE + "ZeroDivisionError", {"rules/r.yaml": rule('"{{ 1 / 0 }}"')}),
    Case(
        "macro-recursion",
        2,
        "rules/r.yaml:8:14: rule acme.r1: bad message template: macro tags are not allowed",
        {"rules/r.yaml": rule('"{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}"')},
    ),
    Case(
        "recursive-loop",
        2,
        "recursive loops are not allowed",
        {"rules/r.yaml": rule('"{% for i in [1] recursive %}{{ loop([i]) }}{% endfor %}"')},
    ),
    Case("include", 2, "include tags are not allowed", {"rules/r.yaml": rule("\"{% include 'x' %}\"")}),
    Case(
        "sandbox-escape",  # refused at load (issue 17), not by the sandbox when it renders
        2,
        "rules/r.yaml:8:14: rule acme.r1: bad message template: attribute '__subclasses__' is not allowed",
        {"rules/r.yaml": rule('"{{ name.__class__.__mro__[1].__subclasses__() }}"')},
    ),
    Case(
        "namespace-accumulation",
        2,
        "rule acme.r1 message: 'namespace' is not a field",
        {
            "rules/r.yaml": rule(
                "\"{% set ns = namespace(s='a') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}"
                '{% endfor %}{{ ns.s }}"'
            )
        },
    ),
    Case(
        "rules-test-renders-messages",
        1,
        "FAIL acme.r1 (message fails on fail example 1: ZeroDivisionError",
        {"rules/r.yaml": rule('"{{ 1 / 0 }}"')},
        ("rules", "test", "rules"),
    ),
    Case(
        "within-limits-renders",
        1,
        "error acme.r1 s1 s1 0-1-2 ~~~~~~~~~~s1~~~~~~~~~~",
        {
            "rules/r.yaml": rule(
                "\"{{ name }} {{ name ~ '' }} {{ range(3)|join('-') }} {{ name.center(22, '~') }}\""
            )
        },
    ),
]


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            Case(
                c.id, c.code, c.expect, c.files, c.argv if c.argv != ("audit", "inv", *AS_OF) else WITH_RULES
            ),
            id=c.id,
        )
        for c in TEMPLATES
    ],
)
def test_message_templates_are_bounded(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_case(case, tmp_path, monkeypatch)


# ---------------------------------------------------------------- 4. user mistakes are exit 2, not 3
def _unreadable_file(relative: str) -> Setup:
    def setup(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        target = os.path.realpath(tmp / relative)
        real_read = Path.read_bytes

        def read_bytes(self: Path) -> bytes:
            if os.path.realpath(self) == target:
                raise PermissionError(13, "Permission denied", str(self))
            return real_read(self)

        monkeypatch.setattr(Path, "read_bytes", read_bytes)

    return setup


USER_MISTAKES = [
    Case(
        "kind-is-a-list",
        2,
        "inv/x.yaml:1:7: error schema.document `kind` must be one of Facility",
        {"inv/x.yaml": "kind: [Facility]\n"},
    ),
    Case(
        "kind-is-a-mapping",
        2,
        "inv/x.yaml:1:7: error schema.document `kind` must be one of",
        {"inv/x.yaml": "kind: {Facility: 1}\n"},
    ),
    Case(
        "kind-is-a-number",
        2,
        f"inv/x.yaml:1:7: error schema.document `kind` must be one of {', '.join([*KINDS, *TABLE_KINDS])}, "
        "not a number",
        {"inv/x.yaml": "kind: 3\n"},
    ),
    Case(
        "message-reads-missing-field-two-deep",
        1,
        "error acme.r1 server s1 unknown unknown",
        {"rules/r.yaml": rule('"server {{ name }} {{ support.vendor.x.y }} {{ cpu.model.z | round(1) }}"')},
        WITH_RULES,
    ),
    Case(
        "unquoted-date-in-example",
        0,
        "ok   acme.r1 (1 fail, 1 pass)",
        {"rules/r.yaml": rule(fail="{name: s1, support: {until: 2027-01-01}}")},
        ("rules", "test", "rules"),
    ),
    Case(
        "list-in-example",
        2,
        "rules/r.yaml:11:38: rule acme.r1 example: gpu.count is a list",
        {"rules/r.yaml": rule(fail="{name: s1, gpu: {count: [8]}}")},
        ("rules", "test", "rules"),
    ),
    Case(
        "unreadable-rule-file",
        2,
        "rules/r.yaml: cannot read: Permission denied",
        {"rules/r.yaml": rule()},
        WITH_RULES,
        setup=_unreadable_file("rules/r.yaml"),
    ),
    Case(
        "unreadable-inventory-file",
        2,
        "inv/servers.yaml:1:1: error schema.file cannot read: Permission denied",
        setup=_unreadable_file("inv/servers.yaml"),
    ),
    Case(
        "unreadable-config",
        2,
        "checker.yaml: cannot read: Permission denied",
        {"checker.yaml": "fail_on: error\n"},
        setup=_unreadable_file("checker.yaml"),
    ),
    Case(
        "config-is-a-folder",
        2,
        "conf: is a folder, not a config file",
        {"conf/x": ""},
        ("audit", "inv", "--config", "conf", *AS_OF),
    ),
    Case(
        "config-is-a-fifo",
        2,
        "fifo.yaml: is a FIFO, not a config file",
        {},
        ("audit", "inv", "--config", "fifo.yaml", *AS_OF),
        setup=_fifo("fifo.yaml"),
    ),
    Case(
        "rule-folder-is-a-file",
        2,
        "inv/servers.yaml: is not a folder",
        {},
        ("audit", "inv", "--rules", "inv/servers.yaml", *AS_OF),
    ),
    Case(
        "config-is-not-a-mapping",
        2,
        "checker.yaml:1:1: document: Input should be a valid dictionary",
        {"checker.yaml": "- select\n"},
    ),
    Case(
        "negative-max-per-rule",
        2,
        "not a whole number >= 0: '-1'",
        {},
        ("audit", "inv", "--max-per-rule", "-1"),
    ),
]


@pytest.mark.parametrize("case", [c.param() for c in USER_MISTAKES])
def test_user_mistakes_exit_2_not_3(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_case(case, tmp_path, monkeypatch)


class _ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


@pytest.mark.parametrize("argv", [("schema",), ("rules", "list"), ("audit", str(MINIMAL), *AS_OF)])
def test_broken_pipe_exits_quietly(argv: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    monkeypatch.setattr(sys, "stderr", err)
    assert main(list(argv)) == EXIT_BROKEN_PIPE
    assert err.getvalue() == ""


def test_broken_pipe_of_a_real_process() -> None:
    # `checker schema | head -0`: the reader is gone before the first write (closed here
    # before the process starts, so the outcome does not depend on timing).
    checker = Path(sys.executable).parent / "checker"
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([str(checker), "schema"], stdout=write_end, stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (EXIT_BROKEN_PIPE, b"")


# ---------------------------------------------------------------- 5. numbers that cannot be evaluated
NUMBERS = [
    Case(
        "tiny-feeds-under-a-huge-server",
        1,
        "inv/facility.yaml:12:5: error power.rack-capacity rack f1/R01 draws 900000000 kW",
        {
            "inv/facility.yaml": facility("voltage: 230, amps: 32", "voltage: 0.001, amps: 0.001"),
            "inv/servers.yaml": servers(**{"max: 3000, typical: 2000": "max: 900000000000, typical: 2000"}),
        },
    ),
    Case(
        "tiny-feeds-json",
        1,
        '"entity": "rack/f1/R01"',
        {
            "inv/facility.yaml": facility("voltage: 230, amps: 32", "voltage: 0.001, amps: 0.001"),
            "inv/servers.yaml": servers(**{"max: 3000, typical: 2000": "max: 900000000000, typical: 2000"}),
        },
        ("audit", "inv", "--format", "json", *AS_OF),
    ),
    Case(
        "underflowing-feeds",  # issue 17: an absurd rating is refused, not audited
        2,
        "racks.0.feeds.0.voltage: 1e-300 is no plausible quantity (below 1e-06 of its unit); a typo?",
        {"inv/facility.yaml": facility("voltage: 230, amps: 32", "voltage: 1.0e-300, amps: 1.0e-300")},
    ),
    Case(
        "nan-input",
        2,
        "inv/facility.yaml:13:41: error schema.invalid racks.0.feeds.0.voltage",
        {"inv/facility.yaml": facility("voltage: 230, amps: 32", "voltage: .nan, amps: 32")},
    ),
    Case(
        "infinite-input",
        2,
        "inv/facility.yaml:13:41: error schema.invalid racks.0.feeds.0.voltage",
        {"inv/facility.yaml": facility("voltage: 230, amps: 32", "voltage: .inf, amps: 32")},
    ),
    Case(
        "huge-example",
        0,
        "ok   acme.r1",
        {"rules/r.yaml": rule(fail="{name: s1, memory_gb: 1.0e+300}")},
        ("rules", "test", "rules"),
    ),
]


@pytest.mark.parametrize("case", [c.param() for c in NUMBERS])
def test_numbers_never_abort_the_audit(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_case(case, tmp_path, monkeypatch)


def test_a_nan_fact_field_is_reported_at_its_entity() -> None:
    from checker.derive.facts import Fact
    from checker.source.parse import Src

    fact = Fact("rack", "rack/f1/R01", {"name": "R01", "utilization_pct": float("nan")}, "f.yaml", Src(7, 5))
    [finding] = evaluated([], [fact])
    assert (finding.rule, finding.entity, finding.file, finding.line, finding.column) == (
        "schema.invalid",
        "rack/f1/R01",
        "f.yaml",
        7,
        5,
    )
    assert finding.message == (
        "rack/f1/R01: utilization_pct cannot be evaluated (it is not a number); "
        "check the values it is derived from"
    )


# ---------------------------------------------------------------- 6. hints that do not mislead
VOLTAGE = (
    "inv/facility.yaml:13:41: error schema.invalid racks.0.feeds.0.voltage: Input should be a valid number"
)
HINTS = [
    Case(
        "quoted-fraction-for-a-whole-number",
        2,
        "inv/servers.yaml:8:15: error schema.invalid u_height: Input should be a valid integer "
        "(got '2.5'): a whole number is needed",
        {"inv/servers.yaml": servers(**{"u_height: 2": 'u_height: "2.5"'})},
        absent="without quotes",
    ),
    Case(
        "exponent-without-dot",
        2,
        f"{VOLTAGE} (got '2.3e2'): YAML 1.1 reads this exponent form as text; "
        "write 2.3e+2 or the plain number",
        {"inv/facility.yaml": facility("voltage: 230, amps: 32", "voltage: 2.3e2, amps: 32")},
        absent="without quotes",
    ),
    Case(
        "exponent-without-sign",
        2,
        "(got '1.5e3'): YAML 1.1 reads this exponent form as text; write 1.5e+3",
        {"inv/facility.yaml": facility("voltage: 230, amps: 32", "voltage: 1.5e3, amps: 32")},
        absent="without quotes",
    ),
    Case(
        "integer-exponent",
        2,
        "(got '1e3'): YAML 1.1 reads this exponent form as text; write 1.0e+3",
        {"inv/facility.yaml": facility("voltage: 230, amps: 32", "voltage: 1e3, amps: 32")},
    ),
    Case(
        "infinity-word",
        2,
        "(got 'inf'): YAML reads it as text, and a quantity must be a finite number",
        {"inv/facility.yaml": facility("voltage: 230, amps: 32", "voltage: inf, amps: 32")},
    ),
    Case(
        "quoted-number",
        2,
        f"{VOLTAGE} (got '230'): write the number without quotes",
        {"inv/facility.yaml": facility("voltage: 230, amps: 32", 'voltage: "230", amps: 32')},
    ),
    Case(
        "quoted-integer",
        2,
        "inv/servers.yaml:8:15: error schema.invalid u_height: Input should be a valid "
        "integer (got '2'): write the number without quotes",
        {"inv/servers.yaml": servers(**{"u_height: 2": 'u_height: "2"'})},
    ),
]


@pytest.mark.parametrize("case", [c.param() for c in HINTS])
def test_hints_say_what_was_written(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_case(case, tmp_path, monkeypatch)


# ---------------------------------------------------------------- 7. mistakes that used to pass quietly
WAIVER = (
    "kind: Waivers\nwaivers: [{rule: power.rack-capacity, entity: rack/f1/R01, reason: ticket 1, "
    "owner: me, expires: 2030-01-01}]\n"
)
QUIET = [
    Case(
        "select-typo",
        2,
        "checker: --select 'power.rack-capacty' matches no rule (did you mean 'power.rack-capacity'?)",
        {},
        ("audit", "inv", "--select", "power.rack-capacty", *AS_OF),
    ),
    Case(
        "ignore-typo",
        2,
        "checker: --ignore 'suport.*' matches no rule",
        {},
        ("audit", "inv", "--ignore", "suport.*", *AS_OF),
    ),
    Case(
        "config-select-typo",
        2,
        "checker.yaml:1:21: select 'power.rack-capacty' matches no rule "
        "(did you mean 'power.rack-capacity'?)",
        {"checker.yaml": 'select: ["power.*", power.rack-capacty]\n'},
    ),
    Case(
        "config-ignore-typo",
        2,
        "checker.yaml:2:5: ignore 'nope' matches no rule",
        {"checker.yaml": "ignore:\n  - nope\n"},
    ),
    Case(
        "config-severity-typo",
        2,
        "checker.yaml:2:3: severity 'powr.*' matches no rule",
        {"checker.yaml": "severity:\n  powr.*: warning\n"},
    ),
    Case(
        "custom-rule-reuses-builtin-check",
        2,
        "rules/r.yaml:2:5: rule id schema.yaml is a built-in check",
        {"rules/r.yaml": rule(id="schema.yaml")},
        WITH_RULES,
    ),
    Case(
        "custom-rule-in-builtin-namespace",
        2,
        "rules/r.yaml:2:5: rule id waiver.mine is reserved for built-in checks",
        {"rules/r.yaml": rule(id="waiver.mine")},
        WITH_RULES,
    ),
    Case(
        "custom-rule-of-category-schema",
        2,
        "rules/r.yaml:4:15: rule acme.r1: category schema is for the built-in input checks",
        {"rules/r.yaml": rule(category="schema")},
        WITH_RULES,
    ),
    Case(
        "config-selects-nothing",
        2,
        "checker.yaml:1:9: select: List should have at least 1 item",
        {"checker.yaml": "select: []\n"},
    ),
    Case(
        "second-config-document",
        2,
        "checker.yaml:3:1: a config file holds one YAML document",
        {"checker.yaml": "fail_on: error\n---\nfail_on: info\n"},
    ),
    Case(
        "rollout-date-zero",
        2,
        "inv/servers.yaml:3:15: error schema.invalid rollout_date: expected a date (YYYY-MM-DD)",
        {"inv/servers.yaml": servers(**{"rollout_date: 2027-02-01": "rollout_date: 0"})},
    ),
    Case(
        "support-until-number",
        2,
        "inv/servers.yaml:11:49: error schema.invalid support.until: expected a date",
        {"inv/servers.yaml": servers(**{"until: 2030-12-31": "until: 20301231"})},
    ),
    Case(
        "waiver-expires-true",
        2,
        "inv/waivers.yaml:2:98: error schema.invalid waivers.0.expires: expected a date",
        {"inv/waivers.yaml": WAIVER.replace("expires: 2030-01-01", "expires: true")},
    ),
    Case(
        "no-unused-waiver-when-rules-did-not-run",
        2,
        "error schema.document",
        {"inv/waivers.yaml": WAIVER, "inv/x.yaml": BAD_KIND},
        absent="waiver.unused",
    ),
]


@pytest.mark.parametrize("case", [c.param() for c in QUIET])
def test_mistakes_do_not_pass_quietly(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_case(case, tmp_path, monkeypatch)


def test_unused_waiver_still_reported_when_rules_ran(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_case(
        Case("unused", 0, "inv/waivers.yaml:2:11: warning waiver.unused", {"inv/waivers.yaml": WAIVER}),
        tmp_path,
        monkeypatch,
    )


# ---------------------------------------------------------------- 8. output size
def _workloads(n: int) -> str:
    rows = "".join(f"  - {{name: w{i}, task: train, params_b: 7, precision: bf16}}\n" for i in range(n))
    return "kind: Workloads\nworkloads:\n" + rows


MANY = {"inv/workloads.yaml": _workloads(250)}
SIZE = [
    Case(
        "text-capped",
        2,
        "checker: 150 more schema.invalid findings not shown (--max-per-rule 0 shows all)\n"
        "\nfindings by rule:\n"
        "  250 error   schema.invalid\n"
        "checker: 250 errors, 0 warnings, 0 info, 0 waived: fail",
        MANY,
    ),
    Case(
        "text-own-cap",
        2,
        "checker: 245 more schema.invalid findings",
        MANY,
        ("audit", "inv", "--max-per-rule", "5", *AS_OF),
    ),
    Case(
        "text-uncapped",
        2,
        "inv/workloads.yaml:252:24: error schema.invalid workloads.249.task",
        MANY,
        ("audit", "inv", "--max-per-rule", "0", *AS_OF),
        absent="not shown",
    ),
    Case(
        "config-cap",
        2,
        "checker: 248 more schema.invalid findings",
        {**MANY, "checker.yaml": "max_per_rule: 2\n"},
    ),
    Case(
        "command-line-cap-beats-config",
        2,
        "checker: 247 more schema.invalid findings",
        {**MANY, "checker.yaml": "max_per_rule: 2\n"},
        ("audit", "inv", "--max-per-rule", "3", *AS_OF),
    ),
    # The cap is for people: the machine formats carry every finding.
    Case(
        "json-whole",
        2,
        '"error": 250',
        MANY,
        ("audit", "inv", "--format", "json", *AS_OF),
        absent="truncated",
    ),
    Case(
        "github-capped",
        2,
        "checker: 150 more schema.invalid findings not shown (--max-per-rule 0 shows all)\n"
        "checker: 250 errors, 0 warnings, 0 info, 0 waived: fail",
        MANY,
        ("audit", "inv", "--format", "github", *AS_OF),
    ),
    Case(
        "markdown-capped",
        2,
        "- 150 more `schema.invalid` findings not shown (`--max-per-rule 0` shows all)\n",
        MANY,
        ("audit", "inv", "--format", "markdown", *AS_OF),
    ),
]


@pytest.mark.parametrize("case", [c.param() for c in SIZE])
def test_output_is_capped_per_rule(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = run_case(case, tmp_path, monkeypatch)
    if case.id == "text-capped":
        assert len(run.out.splitlines()) == 100 + 1 + 3 + 1  # shown, cut, by rule, verdict
    if case.id == "json-whole":
        report = json.loads(run.out)
        assert (len(report["findings"]), report["summary"]["error"]) == (250, 250)
    if case.id == "github-capped":
        assert run.out.count("::error ") == 100
    if case.id == "markdown-capped":
        assert run.out.count("- error `schema.invalid`") == 100


@pytest.mark.parametrize("fmt", ["sarif", "junit", "gitlab"])
def test_machine_formats_are_never_capped(fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = Case(fmt, 2, "schema.invalid", MANY, ("audit", "inv", "--format", fmt, *AS_OF))
    run = run_case(case, tmp_path, monkeypatch)
    # SARIF: a result each; GitLab: an issue each; JUnit: the rule's case, a
    # failure line each.
    markers = {"sarif": '"ruleId": "schema.invalid"', "gitlab": '"check_name": "schema.invalid"',
               "junit": ": error workloads."}
    marker = markers[fmt]
    assert run.out.count(marker) == 250


def test_json_has_no_truncated_key_when_nothing_is_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = run_case(
        Case("json", 0, '"verdict": "pass"', {}, ("audit", "inv", "--format", "json", *AS_OF)),
        tmp_path,
        monkeypatch,
    )
    assert "truncated" not in json.loads(run.out)


# ---------------------------------------------------------------- property: mutated example inventories
EXAMPLE = ROOT / "inventories"
BASE = {
    p.relative_to(EXAMPLE).as_posix(): list(yaml.safe_load_all(p.read_text(encoding="utf-8")))
    for p in sorted(EXAMPLE.rglob("*.yaml"))
}
NASTY = "\x00\x07\x08\t\n\r\x1b\x7f\x85\x9b\u2028\u202e"
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.text(alphabet=NASTY + "ab", max_size=6),
    st.dates(),
    st.sampled_from(["2.3e2", "1e5", "Facility", "none", "2N", "24x7", "", "~", "0"]),
)


def _slots(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Paths to every value in a document tree."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield (*path, key)
        yield from _slots(child, (*path, key))


def _mutate(doc: Any, path: tuple[Any, ...], op: str, new: Any) -> None:
    *parents, last = path
    holder = doc
    for step in parents:
        holder = holder[step]
    old = holder[last]
    if op == "delete":
        del holder[last]
    elif op == "scalar":
        holder[last] = new
    elif op == "control" and isinstance(old, str):
        holder[last] = old[: len(old) // 2] + str(new) + old[len(old) // 2 :]
    elif op == "control" and isinstance(holder, dict):
        holder[f"{last}{new}"] = holder.pop(last)  # a control character in a key
    elif op == "swap":
        holder[last] = [old] if not isinstance(old, list) else {"x": old}


@st.composite
def mutated_inventory(draw: st.DrawFn) -> tuple[str, list[Any]]:
    name = draw(st.sampled_from(sorted(BASE)))
    docs = copy.deepcopy(BASE[name])
    for _ in range(draw(st.integers(1, 3))):
        paths = [(i, *p) for i, d in enumerate(docs) for p in _slots(d)]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(["scalar", "delete", "control", "swap"]))
        new = draw(st.text(alphabet=NASTY, min_size=1, max_size=2)) if op == "control" else draw(scalars)
        _mutate(docs[path[0]], path[1:], op, new)
    return name, docs


def _audit_mutation(name: str, docs: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        inv = Path(tmp) / "inventories"
        shutil.copytree(EXAMPLE, inv)
        (inv / name).write_text(yaml.safe_dump_all(docs, allow_unicode=False), encoding="utf-8")
        first = _call(("audit", str(inv), *AS_OF))
        again = _call(("audit", str(inv), *AS_OF))
    assert first.code in (0, 1, 2), first.text
    _assert_clean(first)
    assert first == again  # same input, same bytes


PROPERTY = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(mutated_inventory())
def test_mutated_example_inventories_never_crash(case: tuple[str, list[Any]]) -> None:
    with deadline(60):
        _audit_mutation(*case)


@pytest.mark.slow
@settings(PROPERTY, max_examples=200)
@given(mutated_inventory())
def test_mutated_example_inventories_never_crash_at_length(case: tuple[str, list[Any]]) -> None:
    with deadline(60):
        _audit_mutation(*case)


def test_a_terminal_that_cannot_show_a_name_gets_an_escape_not_a_crash(tmp_path: Path) -> None:
    shutil.copytree(MINIMAL, tmp_path / "inv")
    servers_file = tmp_path / "inv" / "servers.yaml"
    servers_file.write_text(servers(**{"workload: w1": "workload: wé"}), encoding="utf-8")
    checker = Path(sys.executable).parent / "checker"
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    proc = subprocess.run(
        [str(checker), "audit", "inv", *AS_OF], cwd=tmp_path, env=env, capture_output=True, timeout=60
    )
    assert proc.returncode == 2, proc.stderr
    assert b"inv/servers.yaml:12:15: error schema.reference unknown workload 'w\\xe9'" in proc.stdout


# ---------------------------------------------------------------- property: mutated rule folders
def _plain(value: Any) -> Any:
    """Our parser's values as PyYAML can dump them (floats remember their text)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return float(value) if isinstance(value, float) else value


def _rule_docs() -> dict[str, list[Any]]:
    from checker.source.parse import parse

    # Renamed, so a folder of them can stand beside the built-in rulebook.
    texts = {p.name: p.read_text(encoding="utf-8") for p in sorted((ROOT / "rules").glob("*.yaml"))}
    return {
        name: [_plain(d.value) for d in parse(t.replace("- id: ", "- id: acme-"))]
        for name, t in texts.items()
    }


RULE_DOCS = _rule_docs()
TEMPLATE_BITS = st.sampled_from(
    ["{{ x.y.z }}", "{{ 1 / 0 }}", "{% for i in range(9999) %}{% endfor %}", "load_kw > 1e400", "exists(x)"]
)


@st.composite
def mutated_rule_file(draw: st.DrawFn) -> tuple[str, list[Any]]:
    name = draw(st.sampled_from(sorted(RULE_DOCS)))
    docs = copy.deepcopy(RULE_DOCS[name])
    for _ in range(draw(st.integers(1, 3))):
        paths = [(i, *p) for i, d in enumerate(docs) for p in _slots(d)]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(["scalar", "delete", "control", "swap"]))
        nasty = st.text(alphabet=NASTY, min_size=1, max_size=2)
        _mutate(docs[path[0]], path[1:], op, draw(nasty if op == "control" else scalars | TEMPLATE_BITS))
    return name, docs


@pytest.mark.slow
@settings(PROPERTY, max_examples=100)
@given(mutated_rule_file())
def test_mutated_rule_folders_never_crash(case: tuple[str, list[Any]]) -> None:
    name, docs = case
    with tempfile.TemporaryDirectory() as tmp, deadline(60):
        folder = Path(tmp) / "rules"
        folder.mkdir()
        (folder / name).write_text(yaml.safe_dump_all(docs), encoding="utf-8")
        for argv in (
            ("rules", "test", str(folder)),
            ("audit", str(EXAMPLE), "--rules", str(folder), *AS_OF),
            ("explain", "power.rack-capacity", "--rules", str(folder)),
        ):
            first, again = _call(argv), _call(argv)
            assert first.code in (0, 1, 2), first.text
            _assert_clean(first)
            assert first == again
