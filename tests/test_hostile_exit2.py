"""Bad input that once ended in exit 3 (an internal error): each is a one-line
message and exit 2 now (issue 17, "Exit 3 (internal error) on bad input")."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import AS_OF, MINIMAL, CliRunner

RULE = """\
rules:
  - id: acme.r1
    title: t
    category: power
    severity: error
    on: server
    when: {when}
    message: "{message}"
    remediation: r
"""


DEEP = "rules/r.yaml:7:11: rule acme.r1: expression is nested too deeply"


def _clean(text: str) -> None:
    assert "Traceback" not in text and "internal error" not in text, text


@pytest.mark.parametrize(
    ("when", "message", "expect"),
    [
        ("not " * 10_000 + "true", "m", DEEP),
        ("2" + " ** 2" * 3000 + " > 0", "m", DEEP),
        ("-" * 5000 + "1 > 0", "m", DEEP),
        ('name == "x"', "{{ " + "(" * 80 + "1" + ")" * 80 + " }}",
         "rules/r.yaml:8:14: rule acme.r1: bad message template: nested too deeply"),
        ('name == "x"', "{{ name" + "|lower" * 3000 + " }}",
         "rules/r.yaml:8:14: rule acme.r1: bad message template: nested too deeply"),
    ],
    ids=["10000-not", "power-chain", "unary-chain", "80-parentheses", "filter-chain"],
)
def test_deep_nesting_is_a_located_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRunner, when: str, message: str, expect: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "r.yaml").write_text(RULE.format(when=when, message=message))
    run = cli("rules", "test", "rules")
    _clean(run.out + run.err)
    assert run.code == 2 and run.err.startswith(expect), run.err[:300]


def _block(depth: int) -> str:
    return "".join(" " * i + "a:\n" for i in range(depth)) + " " * depth + "b: 1\n"


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        (_block(3000), "f.yaml:103:101: error schema.limit nested more than 100 levels deep: refused"),
        ("x: " + "[" * 5000 + "]" * 5000,  # libyaml's own bound
         "f.yaml:3:1003: error schema.yaml invalid YAML: while increasing flow level exceeded"),
    ],
    ids=["block-3000", "flow-5000"],
)
def test_deep_yaml_is_a_located_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRunner, text: str, expect: str
) -> None:
    # Block nesting ran out of Python's stack: one problem at 1:1, not where it was.
    monkeypatch.chdir(tmp_path)
    Path("f.yaml").write_text("kind: Facility\nname: f1\n" + text)
    run = cli("audit", "f.yaml", *AS_OF)
    _clean(run.out + run.err)
    assert run.code == 2 and run.lines[0].startswith(expect), run.out[:300]


@pytest.fixture
def odd_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An inventory with a file whose name is not UTF-8 (a byte 0xff)."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(MINIMAL, tmp_path / "inv")
    odd = os.fsdecode(b"inv/odd\xff.yaml")
    Path(odd).write_text("kind: Waivers\nwaivers:\n  - {rule: x}\n")
    return tmp_path


@pytest.mark.parametrize("fmt", ["sarif", "markdown", "junit", "gitlab", "json", "text"])
def test_a_non_utf8_file_name_in_every_format(odd_name: Path, cli: CliRunner, fmt: str) -> None:
    run = cli("audit", "inv", *AS_OF, "--format", f"{fmt}:out")
    _clean(run.out + run.err)
    assert run.code == 2
    if fmt == "sarif":
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                for r in json.loads((odd_name / "out").read_text())["runs"][0]["results"]}
        assert "inv/odd%FF.yaml" in uris


def test_a_non_utf8_file_name_in_the_report(odd_name: Path, cli: CliRunner) -> None:
    run = cli("report", "inv", *AS_OF, "-o", "r.md")
    _clean(run.out + run.err)
    assert run.code == 2 and "inv/odd%FF.yaml#L" in (odd_name / "r.md").read_text()


ENV = {**os.environ, "CHECKER_NO_CACHE": "1"}


def _python(cwd: Path, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", script, *args], cwd=cwd, capture_output=True, text=True,
                          check=False, env=ENV)


@pytest.fixture
def inv(tmp_path: Path) -> Path:
    shutil.copytree(MINIMAL, tmp_path / "inv")
    return tmp_path


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_on_stdout(inv: Path) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "checker.cli", "audit", "inv", *AS_OF], cwd=inv,
                              stdout=full, stderr=subprocess.PIPE, text=True, check=False, env=ENV)
    assert done.returncode == 2
    assert done.stderr == "checker: standard output: cannot write: No space left on device\n"


def test_a_closed_stdout(inv: Path) -> None:
    script = "import sys; from checker.cli import main; sys.stdout = None; sys.exit(main(sys.argv[1:]))"
    done = _python(inv, script, "audit", "inv", *AS_OF)
    assert done.returncode == 2
    assert done.stderr == "checker: standard output is closed; nothing can be written\n"


def test_a_closed_stderr_keeps_exit_2_for_input_errors(inv: Path) -> None:
    script = "import sys; from checker.cli import main; sys.stderr = None; sys.exit(main(sys.argv[1:]))"
    done = _python(inv, script, "audit", "inv/nope.yaml", *AS_OF)
    assert done.returncode == 2


def test_a_deleted_working_directory(inv: Path) -> None:
    gone = inv / "gone"
    gone.mkdir()
    script = (
        "import os, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); from checker.cli import main;"
        " sys.exit(main(['audit']))"
    )
    done = _python(inv, script, str(gone))
    assert done.returncode == 2, done.stderr
    assert done.stderr == "the current folder no longer exists (deleted?); cd to an existing one\n"


@pytest.mark.parametrize("length", [300, 100_000])
def test_a_path_too_long_for_the_file_system(inv: Path, cli: CliRunner, length: int,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(inv)
    run = cli("audit", "a" * length, *AS_OF)
    _clean(run.out + run.err)
    assert run.code == 2 and run.err.endswith(f"({length:,} characters): File name too long\n")


def test_a_path_too_long_deep_in_an_inventory_folder(inv: Path, cli: CliRunner,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # Each folder's name is legal (250 characters); 17 of them make a path longer
    # than PATH_MAX (4,096), which the walk can no longer look up: once exit 3.
    monkeypatch.chdir(inv)
    name = "d" * 250
    folder = os.open("inv", os.O_RDONLY)
    try:
        for _ in range(17):  # relative to the folder above: the whole path is too long to name
            os.mkdir(name, dir_fd=folder)
            below = os.open(name, os.O_RDONLY, dir_fd=folder)
            os.close(folder)
            folder = below
    finally:
        os.close(folder)
    run = cli("audit", "inv", *AS_OF)
    _clean(run.out + run.err)
    assert run.code == 2
    assert f"inv/{name}/" in run.out and ":1:1: error schema.file cannot read: File name too long" in run.out


def test_a_report_whose_pictures_folder_name_is_too_long(inv: Path, cli: CliRunner,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(inv)
    run = cli("report", "inv", *AS_OF, "-o", "r" * 250 + ".md")  # its folder: 259 characters
    _clean(run.out + run.err)
    assert run.code == 2
    assert run.err == (f"{'r' * 120}... (259 characters): cannot write the report's pictures:"
                       " File name too long\n")


def test_a_config_rule_folder_name_too_long(inv: Path, cli: CliRunner,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(inv)
    (inv / "checker.yaml").write_text(f"rules: ['{'f' * 300}']\n")
    run = cli("audit", "inv", *AS_OF)
    _clean(run.out + run.err)
    assert run.code == 2
    assert run.err == f"checker.yaml:1:9: rule folder '{'f' * 120}... (300 characters)': File name too long\n"


def test_any_name_too_long_is_the_users_not_a_bug(cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    # Wherever else checker meets one (a name it makes from the user's), one line and exit 2.
    from checker.load import schema

    def too_long(*args: object) -> None:
        raise OSError(errno.ENAMETOOLONG, "File name too long", "n" * 300)

    monkeypatch.setattr(schema, "inventory_schema", too_long)  # the command imports it when it runs
    run = cli("schema")
    assert (run.code, run.err) == (2, f"{'n' * 120}... (300 characters): File name too long\n")


@pytest.mark.slow  # about 6 s: the walk to its bound (test_a_folder_walk_has_a_bound is the quick one)
def test_a_rule_folder_that_leads_to_the_whole_file_system_stops(cli: CliRunner) -> None:
    # /proc/self holds links to / (root, cwd): once a walk of minutes, then exit 3.
    if not Path("/proc/self/root").exists():
        pytest.skip("needs /proc")
    run = cli("rules", "list", "--rules", "/proc/self")
    _clean(run.out + run.err)
    assert run.code == 2 and len(run.err.splitlines()) <= 21


def test_a_folder_walk_has_a_bound(tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    from checker.load import build

    monkeypatch.setattr(build, "MAX_FOLDERS", 50)
    deep = tmp_path / "inv"
    shutil.copytree(MINIMAL, deep)
    for i in range(60):
        (deep / f"d{i}").mkdir()
    monkeypatch.chdir(tmp_path)
    run = cli("audit", "inv", *AS_OF)
    assert run.code == 2 and run.err.startswith("inv: more than 50 folders below it")


DEEP_FOLDERS = 500


def test_a_deep_folder_is_read(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(MINIMAL, tmp_path / "inv")
    os.chdir(tmp_path / "inv")
    # 500 deep: deeper, shutil.rmtree (pytest's clean-up of old temporary
    # folders, shared by every run on the machine) fails on its recursion limit.
    for _ in range(DEEP_FOLDERS):
        os.mkdir("d")
        os.chdir("d")
    Path("w.yaml").write_text("kind: Waivers\nwaivers: []\n")
    os.chdir(tmp_path)
    try:
        run = cli("audit", "inv", *AS_OF)
        assert run.code == 0, run.err[:500]
    finally:  # shutil.rmtree recurses once per level: pytest could not clean this up
        os.chdir(tmp_path / "inv" / ("d/" * (DEEP_FOLDERS - 1) + "d"))
        os.remove("w.yaml")
        for _ in range(DEEP_FOLDERS):
            os.chdir("..")
            os.rmdir("d")
        os.chdir(tmp_path)


MESSAGES = [
    ("{{ self }}", "'self' is not allowed in messages"),
    ("{{ name.__class__ }}", "attribute '__class__' is not allowed in messages"),
    ("{{ name['__globals__'] }}", "key '__globals__' is not allowed in messages"),
    ("{{ 2 ** (10 ** 7) }}", "an exponent that is itself a power is not allowed"),
    ("{{ 2 ** 100 }}", "exponent 100 is over the limit of 64"),
    ("{{ ['a', 'b'] | random }}", "No filter named 'random'"),
]


@pytest.mark.parametrize(("message", "expect"), MESSAGES)
def test_message_templates_that_reach_too_far_are_refused_at_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRunner, message: str, expect: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rules").mkdir()
    text = RULE.format(when='name == "x"', message=message.replace('"', "'"))
    (tmp_path / "rules" / "r.yaml").write_text(text)
    run = cli("rules", "test", "rules")
    assert run.code == 2, run.out + run.err
    assert run.err.startswith("rules/r.yaml:8:14: rule acme.r1: bad message template: ") and expect in run.err


@pytest.mark.parametrize("call", ["lipsum(1)", "cycler(1, 2).next()"])
def test_no_message_can_say_something_else_each_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRunner, call: str
) -> None:
    # Jinja's own globals: `lipsum` writes random words, `cycler` keeps state
    # between findings. Neither is there; the name reads as a fact field, unknown.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "r.yaml").write_text(RULE.format(when='name == "x"', message="{{ " + call + " }}"))
    run = cli("rules", "test", "rules")
    name = call.split("(")[0]
    assert (run.code, run.err) == (2, f"rules/r.yaml:8:14: rule acme.r1 message: '{name}' is not a field"
                                      " of server facts\n")


@pytest.mark.parametrize("folder", ["/etc", "../outside", "link-out"])
def test_config_rule_folders_stay_beside_the_config(
    inv: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch, folder: str
) -> None:
    monkeypatch.chdir(inv)
    (inv.parent / "outside").mkdir(exist_ok=True)
    (inv / "link-out").symlink_to(inv.parent / "outside")
    (inv / "checker.yaml").write_text(f"rules: ['{folder}']\n")
    run = cli("audit", "inv", *AS_OF)
    assert run.code == 2
    assert run.err == (
        f"checker.yaml:1:9: rule folder '{folder}' is outside the config's folder;"
        " name a folder beside checker.yaml, or pass --rules on the command line\n"
    )


def test_a_boolean_support_horizon_is_refused(
    inv: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(inv)
    (inv / "checker.yaml").write_text("support_horizon_days: true\n")
    run = cli("audit", "inv", *AS_OF)
    assert run.code == 2 and "support_horizon_days" in run.out + run.err



CHECKER = Path(sys.executable).parent / "checker"


def _small_pipe() -> tuple[int, int]:
    """A pipe that holds one page, where Linux's default holds 64 KiB: any output
    bigger than a few KiB blocks checker until the reader reads or goes away."""
    read_end, write_end = os.pipe()
    with contextlib.suppress(AttributeError, OSError):  # F_SETPIPE_SZ: Linux only
        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    return read_end, write_end


@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "PYTHONUNBUFFERED"])
@pytest.mark.parametrize("argv", [("rules", "doc"), ("schema",)])
def test_a_reader_that_leaves_early_ends_the_run_with_141(argv: tuple[str, ...], unbuffered: bool) -> None:
    # `checker schema | head -c 100`: the reader takes 100 bytes of ~80 KB and goes away
    # while checker still writes. Under PYTHONUNBUFFERED=1 (many CI images set it) Python
    # dropped what a partial write left, and the run ended 0 as if all was written.
    env = {k: v for k, v in ENV.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    read_end, write_end = _small_pipe()
    try:
        proc = subprocess.Popen([str(CHECKER), *argv], stdout=write_end, stderr=subprocess.PIPE, env=env)
    finally:
        os.close(write_end)
    with proc:
        try:
            assert len(os.read(read_end, 100)) == 100
        finally:
            os.close(read_end)
        assert proc.stderr is not None
        err = proc.stderr.read()
    assert (proc.returncode, err) == (141, b"")
