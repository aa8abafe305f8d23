"""The resident process (checker/resident.py): a command sent to it writes the
same bytes and exits with the same code as in its own process; anything
unusual runs the command in its own process; a signal stops the command, not
the resident process."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.fleet import write
from checker import resident
from tests.conftest import AS_OF, FIXTURES

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="a Unix socket")
ROOT = Path(__file__).resolve().parents[1]
INVENTORIES = ROOT / "inventories"


def checker(
    env: dict[str, str], *argv: str, cwd: Path = ROOT, alone: bool = False
) -> tuple[int, bytes, bytes]:
    """`checker ARGV` as typed; alone: in its own process (CHECKER_NO_RESIDENT)."""
    env = env | {"CHECKER_NO_RESIDENT": "1"} if alone else env
    done = subprocess.run([sys.executable, "-m", "checker", *argv], env=env, cwd=cwd, capture_output=True,
                          check=False, timeout=120)
    return done.returncode, done.stdout, done.stderr


def served(env: dict[str, str]) -> int:
    _, out, _ = checker(env, "resident", "status")
    found = re.search(rb": (\d+) commands served", out)
    assert found, out
    return int(found.group(1))


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A resident process of its own (a short folder: socket names are short)."""
    runtime = tempfile.mkdtemp(prefix="rt")
    environ = {k: v for k, v in os.environ.items() if k != "CHECKER_NO_RESIDENT"}
    environ |= {"XDG_RUNTIME_DIR": runtime, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    code, out, err = checker(environ, "resident", "start")
    assert (code, err) == (0, b""), err
    pid = int(re.match(rb"resident process (\d+) started", out).group(1))  # type: ignore[union-attr]
    try:
        yield environ
    finally:
        checker(environ, "resident", "stop")
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(runtime, ignore_errors=True)


COMMANDS = [
    ("audit", str(INVENTORIES), *AS_OF),
    ("audit", str(INVENTORIES), *AS_OF, "--format", "json"),
    ("audit", str(INVENTORIES), *AS_OF, "--color", "always", "--fail-on", "never"),
    ("audit", str(FIXTURES / "minimal"), *AS_OF, "--format", "sarif"),
    ("audit", "no-such-folder"),
    ("audit", str(INVENTORIES), "--as-of", "yesterday"),
    ("rules", "list"),
    ("explain", "power.feed-overload"),
    ("--version",),
    ("nonsense",),
]


def test_a_command_there_writes_what_its_own_process_writes(env: dict[str, str]) -> None:
    before = served(env)
    for argv in COMMANDS:
        assert checker(env, *argv) == checker(env, *argv, alone=True), argv
    assert served(env) == before + len(COMMANDS)


def test_a_warm_audit_there_after_a_file_changed_is_a_cold_one(env: dict[str, str], tmp_path: Path) -> None:
    """What it carries from one command to the next (checker.core.carried: each kept
    file's models, the compiled rulebook) gives the bytes of a cold run in a process
    of its own, before and after a file changes, with other commands between."""
    inv = tmp_path / "inv"
    shutil.copytree(INVENTORIES, inv)
    warm = ("audit", str(inv), *AS_OF, "--format", "json", "--cache-dir", str(tmp_path / "entries"))
    cold = (*warm[:-2], "--no-cache")
    before = checker(env, *cold, alone=True)
    for _ in range(3):  # the cache filled, then read back, then carried
        assert checker(env, *warm) == before
    assert checker(env, "audit", str(FIXTURES / "minimal"), *AS_OF)[0] in (0, 1)  # another inventory between
    servers = inv / "sh1" / "servers-training.yaml"
    servers.write_text(servers.read_text().replace("position: 15}", "position: 16}", 1))
    after = checker(env, *cold, alone=True)
    assert after != before
    for _ in range(3):
        assert checker(env, *warm) == after


def test_the_collector_frees_a_commands_cycles_after_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass over the young generations after each command, a full one every
    FULL_EVERY commands: a cycle older than the command is freed by the next full pass."""
    import gc
    import weakref

    from checker import resident_process

    class Node:
        other: object = None

    def cycle() -> weakref.ref[Node]:
        a, b = Node(), Node()
        a.other, b.other = b, a
        return weakref.ref(a)

    was = gc.isenabled()
    gc.disable()  # as while a command runs
    try:
        gc.collect()
        made = cycle()
        resident_process._collect(1)
        assert made() is None  # the command's own
        old = Node()
        old.other = old
        kept = weakref.ref(old)
        resident_process._collect(1)  # alive: now older than any command's
        del old
        for served in range(2, resident_process.FULL_EVERY):
            resident_process._collect(served)
        assert kept() is not None  # young passes only
        resident_process._collect(resident_process.FULL_EVERY)
        assert kept() is None
    finally:
        if was:
            gc.enable()


def test_it_runs_in_the_callers_folder_with_its_environment_and_umask(
    env: dict[str, str], tmp_path: Path
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    shutil.copytree(INVENTORIES, here / "inventories")
    old = os.umask(0o027)  # the caller's (this test's) umask, for the file it makes
    argv = ("audit", *AS_OF, "--format", "json:out.json", "--format", "text")
    there = checker(env | {"NO_COLOR": "1"}, *argv, cwd=here)
    made = (here / "out.json").read_bytes(), (here / "out.json").stat().st_mode & 0o777
    (here / "out.json").unlink()
    alone = checker(env | {"NO_COLOR": "1"}, *argv, cwd=here, alone=True)
    assert there == alone
    assert made == ((here / "out.json").read_bytes(), (here / "out.json").stat().st_mode & 0o777)
    os.umask(old)
    assert made[1] == 0o640
    assert served(env) == 1


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="a process's CPU time in /proc")
def test_ctrl_c_stops_the_command_and_not_the_resident_process(env: dict[str, str], tmp_path: Path) -> None:
    write(10_000, tmp_path / "fleet")
    _, out, _ = checker(env, "resident", "status")
    pid = int(re.match(rb"resident process (\d+):", out).group(1))  # type: ignore[union-attr]
    start = _cpu(pid)
    command = subprocess.Popen([sys.executable, "-m", "checker", "audit", str(tmp_path / "fleet"), *AS_OF],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while _cpu(pid) < start + 0.2 and time.monotonic() < deadline:  # it is working on the command
        time.sleep(0.01)
    command.send_signal(signal.SIGINT)
    out_bytes, err_bytes = command.communicate(timeout=60)
    assert (command.returncode, out_bytes, err_bytes) == (130, b"", b"")
    assert served(env) == 1  # and it still serves
    assert checker(env, "rules", "list") == checker(env, "rules", "list", alone=True)


def test_a_reader_that_leaves_ends_the_command_with_141(env: dict[str, str]) -> None:
    line = [sys.executable, "-m", "checker", "schema"]  # more than a pipe holds
    shell = f"{' '.join(line)} | head -1; exit ${{PIPESTATUS[0]}}"
    there = subprocess.run(["bash", "-c", shell], env=env, capture_output=True, check=False)
    alone = subprocess.run(["bash", "-c", shell], env=env | {"CHECKER_NO_RESIDENT": "1"}, capture_output=True,
                           check=False)
    assert (there.returncode, there.stdout, there.stderr) == (alone.returncode, alone.stdout, alone.stderr)
    assert there.returncode == 141
    assert served(env) == 1


def test_start_stop_and_status_say_what_they_did(env: dict[str, str]) -> None:
    code, out, _ = checker(env, "resident", "start")
    assert code == 0 and re.fullmatch(
        rb"resident process \d+ already running: `checker` commands of this installation run in it\n"
        rb"it ends with `checker resident stop`, after 60 minutes unused,"
        rb" or when checker's code changes\n", out)
    code, out, _ = checker(env, "resident", "status")
    assert code == 0 and re.fullmatch(
        rb"resident process \d+: 0 commands served\nmemory: \d+ MiB \(it ends itself above 2 GiB\)\n"
        rb"current code: yes\n", out)
    code, out, _ = checker(env, "resident", "stop")
    assert code == 0 and re.fullmatch(rb"resident process \d+ stopped\n", out)
    assert checker(env, "resident", "status") == (
        0, b"no resident process is running: each command runs in its own process\n", b"")
    assert checker(env, "resident", "stop") == (0, b"no resident process is running\n", b"")


def _gone(deadline: float = 10.0) -> bool:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if resident.ask("status") is None:
            return True
        time.sleep(0.02)
    return False


def test_other_code_ends_it_and_the_command_runs_here(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", env["XDG_RUNTIME_DIR"])
    monkeypatch.delenv("CHECKER_NO_RESIDENT")
    assert resident.ask("status") is not None
    monkeypatch.setattr(resident, "stamp", lambda: "a file of the package changed")
    assert resident.forwarded(["rules", "list"]) is None
    assert _gone()


@pytest.fixture
def path(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> str:
    """The socket of `env`'s resident process, as this process finds it."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", env["XDG_RUNTIME_DIR"])
    found = resident.socket_path()
    assert found is not None
    return found


def test_a_message_that_is_no_command_is_ignored(env: dict[str, str], path: str) -> None:
    for junk in (b"", b"\x00\x00\x00\x08garbage!", b"\xff\xff\xff\xff", b"\x00\x00\x00\x04\x00\x00\x00\x09"):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(path)
            sock.sendall(junk)
    for fields in (["1", "run", "x"], ["2", "run"], ["1", "what"]):
        conn = resident.connect(path)
        conn.send(fields)
        conn.sock.close()
    assert served(env) == 0


def test_with_no_safe_folder_or_no_process_the_command_runs_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CHECKER_NO_RESIDENT")
    runtime = Path(tempfile.mkdtemp(prefix="rt"))
    try:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        assert resident.forwarded(["--version"]) is None  # no socket
        path = resident.socket_path()
        assert path is not None
        Path(path).write_text("")  # a file, not a listening socket
        assert resident.forwarded(["--version"]) is None
        (runtime / "checker").chmod(0o755)  # others may look in: not trusted
        assert resident.folder() is None and resident.forwarded(["--version"]) is None
        monkeypatch.setenv("CHECKER_NO_RESIDENT", "1")
        assert resident.forwarded(["--version"]) is None
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


def _at_a_terminal(env: dict[str, str], columns: int, *argv: str) -> tuple[int, bytes]:
    """`checker ARGV` with its standard output a terminal `columns` wide."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    with subprocess.Popen([sys.executable, "-m", "checker", *argv], env=env, stdout=follower,
                          stderr=subprocess.DEVNULL, cwd=ROOT) as command:
        os.close(follower)
        chunks = []
        with contextlib.suppress(OSError):  # EIO once the command's side is closed
            while chunk := os.read(leader, 65536):
                chunks.append(chunk)
        os.close(leader)
    return command.returncode, b"".join(chunks)


@pytest.mark.skipif(sys.platform == "win32", reason="a terminal (pty)")
def test_at_a_terminal_help_and_colour_are_the_terminals(env: dict[str, str]) -> None:
    environ = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR")}
    environ["TERM"] = "xterm"
    for argv in (("audit", "--help"), ("audit", str(INVENTORIES), *AS_OF)):
        there = _at_a_terminal(environ, 132, *argv)
        assert there == _at_a_terminal(environ | {"CHECKER_NO_RESIDENT": "1"}, 132, *argv)
    assert b"\x1b[" in there[1]  # coloured: the caller's standard output is a terminal
    assert served(env) == 2


def test_standard_error_is_written_in_its_own_encoding(env: dict[str, str], tmp_path: Path) -> None:
    """A name that ASCII cannot hold, on a standard error that is ASCII (PYTHONIOENCODING):
    escaped as the command's own process escapes it, not sent as UTF-8."""
    environ = env | {"PYTHONIOENCODING": "ascii"}
    argv = ("audit", str(tmp_path / "\u00e9t\u00e9.yaml"))
    there = checker(environ, *argv)
    assert there == checker(environ, *argv, alone=True)
    assert there[0] == 2 and b"\\xe9t\\xe9.yaml" in there[2]
    assert served(env) == 1


@pytest.mark.slow
def test_a_caller_that_sends_nothing_holds_no_one_up(env: dict[str, str], path: str) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as silent:
        silent.connect(path)
        start = time.monotonic()
        assert checker(env, "rules", "list") == checker(env, "rules", "list", alone=True)
        assert time.monotonic() - start < 30  # it gave up on the silent one (10 s), then served this
    assert served(env) == 1
