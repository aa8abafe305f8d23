"""Hostile outputs: what a run writes, tried as a pull request or a careless user would.

Every case plants what an attacker could commit (a symbolic link, a FIFO, an
output path that names an input) and checks that nothing outside what the run
may write changes, that the run says so in one line and exits 2, and that no
temporary file is left, whatever stops the run (issue 17, "Outputs").
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from checker.render import output
from tests.conftest import AS_OF, MINIMAL, CliRunner

SECRET = "[http]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout: inventories in `inv/`, a `.git/config` holding a token."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(MINIMAL, tmp_path / "inv")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text(SECRET)
    return tmp_path


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.tmp"))


@pytest.mark.parametrize("fmt", ["markdown", "json", "sarif", "junit", "gitlab", "text", "github"])
def test_an_output_planted_as_a_link_to_the_git_config_is_refused(
    repo: Path, cli: CliRunner, fmt: str
) -> None:
    (repo / "checker-diff.md").symlink_to(".git/config")
    run = cli("audit", "inv", *AS_OF, f"--format={fmt}:checker-diff.md")
    assert run.code == 2, run.err
    assert run.err == "checker-diff.md: refusing to write " + fmt + " output through a symbolic link\n"
    assert (repo / ".git" / "config").read_text() == SECRET
    assert (repo / "checker-diff.md").is_symlink()


def test_a_dangling_link_is_refused_too(repo: Path, cli: CliRunner) -> None:
    (repo / "out.json").symlink_to(repo / "elsewhere.json")
    run = cli("audit", "inv", *AS_OF, "--format=json:out.json")
    assert run.code == 2 and "through a symbolic link" in run.err
    assert not (repo / "elsewhere.json").exists()


def test_report_and_rules_doc_refuse_links(repo: Path, cli: CliRunner) -> None:
    (repo / "readiness.md").symlink_to(".git/config")
    assert cli("report", "inv", *AS_OF, "-o", "readiness.md").code == 2
    assert cli("rules", "doc", "-o", "readiness.md").code == 2
    assert (repo / ".git" / "config").read_text() == SECRET


def test_a_link_planted_after_the_check_is_refused_at_the_write(
    repo: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = output.write_files

    def plant(files: list[tuple[Path, str]]) -> None:
        (repo / "out.json").symlink_to(".git/config")
        real(files)

    monkeypatch.setattr(output, "write_files", plant)
    run = cli("audit", "inv", *AS_OF, "--format=json:out.json")
    assert run.code == 2 and "through a symbolic link" in run.err
    assert (repo / ".git" / "config").read_text() == SECRET


@pytest.mark.parametrize(
    ("argv", "victim"),
    [
        (("--format=json:checker.yaml",), "checker.yaml"),
        (("--config", "conf/c.yaml", "--format=json:conf/c.yaml"), "conf/c.yaml"),
        (("--rules", "policies", "--format=sarif:policies/local.yaml"), "policies/local.yaml"),
        (("--rules", "policies", "--format=sarif:policies/new.yml"), None),
        (("--format=json:inv/servers.yaml",), "inv/servers.yaml"),
    ],
)
def test_an_output_never_replaces_an_input(
    repo: Path, cli: CliRunner, argv: tuple[str, ...], victim: str | None
) -> None:
    (repo / "checker.yaml").write_text("fail_on: error\n")
    (repo / "conf").mkdir()
    (repo / "conf" / "c.yaml").write_text("fail_on: error\n")
    (repo / "policies").mkdir()
    (repo / "policies" / "local.yaml").write_text("rules: []\n")
    before = {p: p.read_bytes() for p in repo.rglob("*.y*ml")}
    run = cli("audit", "inv", *AS_OF, *argv)
    assert run.code == 2 and run.out == "", run.err
    assert "refusing to write" in run.err and len(run.err.splitlines()) == 1
    assert {p: p.read_bytes() for p in repo.rglob("*.y*ml")} == before
    if victim is None:
        assert not (repo / "policies" / "new.yml").exists()


def test_a_hard_link_to_an_inventory_is_replaced_not_written_into(repo: Path, cli: CliRunner) -> None:
    before = (repo / "inv" / "servers.yaml").read_bytes()
    os.link(repo / "inv" / "servers.yaml", repo / "hardlink.json")
    assert cli("audit", "inv", *AS_OF, "--format=json:hardlink.json").code == 0
    assert (repo / "inv" / "servers.yaml").read_bytes() == before
    assert (repo / "hardlink.json").read_text().startswith("{")


def test_rules_doc_never_replaces_a_rule_file(repo: Path, cli: CliRunner) -> None:
    (repo / "policies").mkdir()
    (repo / "policies" / "local.yaml").write_text("rules: []\n")
    run = cli("rules", "doc", "--rules", "policies", "-o", "policies/local.yaml")
    assert run.code == 2 and "refusing to write the rule reference over an input" in run.err
    assert (repo / "policies" / "local.yaml").read_text() == "rules: []\n"


def test_the_step_summary_never_lands_in_an_inventory(
    repo: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = (repo / "inv" / "servers.yaml").read_bytes()
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(repo / "inv" / "servers.yaml"))
    run = cli("audit", "inv", *AS_OF)
    assert run.code == 2 and "refusing to write the step summary among the inventories" in run.err
    assert (repo / "inv" / "servers.yaml").read_bytes() == before


def test_the_step_summary_is_never_appended_through_a_link(
    repo: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "summary.md").symlink_to(".git/config")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(repo / "summary.md"))
    run = cli("audit", "inv", *AS_OF)
    assert run.code == 2 and "through a symbolic link" in run.err
    assert (repo / ".git" / "config").read_text() == SECRET


def test_two_formats_to_one_file_are_refused(repo: Path, cli: CliRunner) -> None:
    run = cli("audit", "inv", *AS_OF, "--format=json:out", "--format=sarif:./out")
    assert run.code == 2 and run.err == (
        "out: json and sarif output would overwrite each other; give each format its own file\n"
    )
    assert not (repo / "out").exists()


def test_a_replaced_file_keeps_its_mode(repo: Path, cli: CliRunner) -> None:
    (repo / "private.json").write_text("old")
    os.chmod(repo / "private.json", 0o600)
    assert cli("audit", "inv", *AS_OF, "--format=json:private.json").code == 0
    assert stat.S_IMODE((repo / "private.json").stat().st_mode) == 0o600
    assert (repo / "private.json").read_text().startswith("{")


def test_a_fifo_with_no_reader_is_an_error_not_a_hang(
    repo: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(output, "FIFO_WAIT_S", 0.2)
    os.mkfifo(repo / "pipe")
    started = time.monotonic()
    run = cli("audit", "inv", *AS_OF, "--format=json:pipe")
    assert run.code == 2 and run.err == "pipe: cannot write: no process reads this FIFO\n"
    assert time.monotonic() - started < 10


def test_json_to_dev_stdout_works_when_stdout_is_a_pipe(repo: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "checker.cli", "audit", "inv", *AS_OF, "--format=json:/dev/stdout"],
        capture_output=True, text=True, check=False, env={**os.environ, "CHECKER_NO_CACHE": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("{")


def test_ctrl_c_while_writing_leaves_every_file_as_it_was(
    repo: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a.json", "a.sarif", "a.md"):
        (repo / name).write_text("old")
    real = output._Staged._write_temporary
    calls: list[int] = []

    def interrupted(self: output._Staged, info: os.stat_result | None) -> None:
        calls.append(1)
        if len(calls) == 2:  # the SARIF: the JSON is written, not yet renamed
            raise KeyboardInterrupt
        real(self, info)

    monkeypatch.setattr(output._Staged, "_write_temporary", interrupted)
    specs = ("--format=json:a.json", "--format=sarif:a.sarif", "--format=markdown:a.md")
    run = cli("audit", "inv", *AS_OF, *specs)
    assert run.code == 130
    assert [(repo / n).read_text() for n in ("a.json", "a.sarif", "a.md")] == ["old"] * 3
    assert _leftovers(repo) == []


def test_an_interrupt_somebody_swallowed_still_stops_the_report(
    repo: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    import checker.cli

    real = checker.cli.run_audit

    def swallowing(*args: object, **kwargs: object) -> object:
        # Ctrl-C, caught by code that catches everything: the defect being simulated.
        with contextlib.suppress(BaseException):
            signal.raise_signal(signal.SIGINT)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(checker.cli, "run_audit", swallowing)
    run = cli("report", "inv", *AS_OF, "-o", "readiness.md")
    assert run.code == 130
    assert not (repo / "readiness.md").exists() and _leftovers(repo) == []


_SLOW_WRITE = textwrap.dedent(
    """
    import sys, time
    from checker.render import output
    real = output._Staged._write_temporary
    def slow(self, info):
        real(self, info)
        print("written", flush=True)
        time.sleep(60)
    output._Staged._write_temporary = slow
    from checker.cli import main
    sys.exit(main(sys.argv[1:]))
    """
)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)])
def test_a_signal_while_writing_leaves_nothing_behind(repo: Path, sig: int, code: int) -> None:
    (repo / "a.json").write_text("old")
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_WRITE, "audit", "inv", *AS_OF, "--format=json:a.json",
         "--format=sarif:a.sarif"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "CHECKER_NO_CACHE": "1"},
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "written\n"
        assert _leftovers(repo) != []  # the JSON's temporary file, not yet renamed
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert (repo / "a.json").read_text() == "old" and not (repo / "a.sarif").exists()
    assert _leftovers(repo) == []


def test_a_failed_init_leaves_no_partial_scaffold(tmp_path: Path, cli: CliRunner) -> None:
    target = tmp_path / "new"
    target.mkdir()
    (target / "inventories").write_text("a file where the folder goes\n")
    run = cli("init", str(target))
    assert run.code == 2 and "cannot write" in run.err
    assert sorted(p.name for p in target.iterdir()) == ["inventories"]
