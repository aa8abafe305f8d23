"""The resident process: `checker resident start` keeps one checker running, and
every `checker` command after it runs there, with its imports, its compiled
rulebook and its knowledge tables already loaded.

A command in a new process pays for start-up before it reads a file: Python,
pydantic, numpy, durable-rules, the models and the rulebook, about a quarter of
a cold 10,000-server audit (docs/performance.md, "The resident process"). A
resident process pays it once, as mypy's daemon (dmypy) does for type checks:
for a person who runs checker again and again on a laptop, or a pre-commit
hook. A CI runner starts afresh each time and has no use for it.

The command a user types stays the same: `checker` (checker/__main__.py) first
looks for a resident process of this installation, sends it the command line,
the current folder, the environment and the umask, and writes what it answers
(standard output, standard error, the exit code) as its own. Same input, same
bytes as a run in a new process: the resident process runs `checker.cli.main`,
which keeps nothing of one run for the next (tests/test_run_state.py).

Where anything is unusual, the command runs in its own process as before,
silently: no resident process, one of another installation or of other code
(a file of the package, its rules or templates, or a library folder changed
since it started: it then ends itself), a closed standard output, or
CHECKER_NO_RESIDENT set. This module is the way there, so it imports only
the cheapest of the standard library (`_socket` and `_signal`, the C modules
under `socket` and `signal`: those two cost 15 ms of enum classes at import,
more than the rest of the way).

Safety: the socket is in a folder only its user can open ($XDG_RUNTIME_DIR,
else a 0700 folder of the user's in the temporary folder, checked), and on
Linux the resident process also checks its caller's user id (SO_PEERCRED). It
serves one command at a time, ends after an hour with nothing to do, and ends
after a command that left it holding more than MAX_RSS of memory (the next
command then runs in its own process). Ctrl-C, SIGTERM and SIGHUP of the
waiting command stop the command it runs (exit 130, 143, 129), not the
resident process (checker/resident_process.py).
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]
import _socket
import os
import struct
import sys
import zlib

TYPE_CHECKING = False  # typing itself costs more than the rest of the way
if TYPE_CHECKING:
    from collections.abc import Sequence

PROTOCOL = "1"
IDLE_SECONDS = 3600
MAX_RSS = 2 * 1024**3  # bytes held after a command (and a collection): then it ends
MAX_MESSAGE = 64 * 1024 * 1024  # a command line and an environment, never more
START_SECONDS = 30.0
STOP_SECONDS = 600.0  # `stop` waits for the command running there to end
SIGNALS = tuple(getattr(_signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(_signal, n))
# Unix sockets and user ids: elsewhere (Windows) every command runs in its own process.
SUPPORTED = hasattr(_socket, "AF_UNIX") and hasattr(os, "getuid")
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


class Unavailable(Exception):
    """No resident process can run this command: it runs in its own process."""


# ---------------------------------------------------------------- where and which
def folder() -> str | None:
    """The user's private folder for the socket, or None if there is none that is safe."""
    if not SUPPORTED:
        return None
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        base = os.path.join(runtime, "checker")
    else:
        import tempfile

        base = os.path.join(tempfile.gettempdir(), f"checker-{os.getuid()}")
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)
        info = os.lstat(base)
    except OSError:
        return None
    # Another user's folder, a link, or one that others may open: not ours to trust.
    if info.st_uid != os.getuid() or info.st_mode & 0o077 or not os.path.isdir(base) or os.path.islink(base):
        return None
    return base


def installation() -> str:
    """This Python and this checker: a resident process serves only its own installation."""
    return f"{sys.executable}\0{_PACKAGE}\0{sys.version}\0{os.environ.get('PYTHONPATH', '')}"


def socket_path() -> str | None:
    base = folder()
    if base is None:
        return None
    # AF_UNIX names are short (108 bytes on Linux): the name is a checksum of the
    # installation (a clash only meets a stamp that differs: the command runs here).
    raw = installation().encode("utf-8", "surrogateescape")
    return os.path.join(base, f"r-{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}.sock")


def _data_dirs() -> list[str]:
    inside = os.path.join(_PACKAGE, "_data")
    if os.path.isdir(inside):
        return [inside]
    top = os.path.dirname(_PACKAGE)
    return [os.path.join(top, "rules"), os.path.join(top, "templates")]


def stamp() -> str:
    """The installation, every file of the package, its rules and templates (name,
    size, change time), and this installation's library folders and $PYTHONPATH
    (installing or removing a library changes its folder's time): the code a
    resident process runs must be the code this command would run. (Not
    sys.path as a whole: `python -m` puts the current folder first.)"""
    import sysconfig

    lines = [installation()]
    for top in (_PACKAGE, *_data_dirs()):
        for root, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                try:
                    info = os.stat(os.path.join(root, name))
                except OSError:
                    continue
                lines.append(f"{root}/{name}\0{info.st_size}\0{info.st_mtime_ns}")
    paths = sysconfig.get_paths()
    for entry in (paths["purelib"], paths["platlib"], *os.environ.get("PYTHONPATH", "").split(os.pathsep)):
        try:
            lines.append(f"{entry}\0{os.stat(entry).st_mtime_ns}")
        except OSError:
            lines.append(f"{entry}\0-")
    return "\n".join(lines)


# ---------------------------------------------------------------- messages
# A message is a list of strings (UTF-8, undecodable bytes of a name or an
# environment kept as they are), each after its length; then, for a command's
# result, its standard output and error as bytes. No pickle, no JSON: nothing
# received is more than strings.
class Connection:
    """One end of a resident process's socket (a `_socket.socket`, or a `socket.socket`)."""

    def __init__(self, sock: _socket.socket) -> None:
        self.sock = sock

    def send(self, strings: Sequence[str], *payloads: bytes) -> None:
        parts = [s.encode("utf-8", "surrogateescape") for s in strings]
        body = struct.pack("!I", len(parts)) + b"".join(struct.pack("!I", len(p)) + p for p in parts)
        self.sock.sendall(struct.pack("!I", len(body)) + body)
        for payload in payloads:
            self.sock.sendall(struct.pack("!Q", len(payload)))
            self.sock.sendall(payload)

    def _exactly(self, size: int) -> bytes:
        chunks, left = [], size
        while left:
            chunk = self.sock.recv(min(left, 1 << 20))
            if not chunk:
                raise ConnectionError("the other side closed the connection")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def receive(self) -> list[str]:
        (size,) = struct.unpack("!I", self._exactly(4))
        if size > MAX_MESSAGE:
            raise ConnectionError("a message too long")
        body = self._exactly(size)
        (count,) = struct.unpack_from("!I", body)
        strings, at = [], 4
        for _ in range(count):
            (length,) = struct.unpack_from("!I", body, at)
            at += 4
            if at + length > len(body):
                raise ConnectionError("a message cut short")
            strings.append(body[at:at + length].decode("utf-8", "surrogateescape"))
            at += length
        return strings

    def payload(self) -> bytes:
        (size,) = struct.unpack("!Q", self._exactly(8))
        return self._exactly(size)


def connect(path: str, timeout: float | None = None) -> Connection:
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        raise
    return Connection(sock)


def request(argv: Sequence[str], current_stamp: str) -> list[str]:
    """What a command sends: its command line, folder, environment, umask and output."""
    umask = os.umask(0o022)
    os.umask(umask)
    environ = dict(os.environ)
    tty = "1" if _isatty(sys.stdout) else "0"
    if tty == "1" and "COLUMNS" not in environ:
        # What shutil.get_terminal_size (argparse's help) would read of this terminal:
        # the resident process has none. It reads COLUMNS and LINES first.
        try:
            size = os.get_terminal_size(sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        else:
            environ |= {"COLUMNS": str(size.columns), "LINES": str(environ.get("LINES", size.lines))}
    env = [part for item in environ.items() for part in item]
    # Each stream as this process would write it (PYTHONIOENCODING, the locale).
    out_enc = getattr(sys.stdout, "encoding", None) or "utf-8"
    err_enc = getattr(sys.stderr, "encoding", None) or "utf-8"
    where, count = os.getcwd(), str(len(argv))
    return [PROTOCOL, "run", current_stamp, where, str(umask), tty, out_enc, err_enc, count, *argv, *env]


# ---------------------------------------------------------------- the client
def forwarded(argv: Sequence[str]) -> int | None:
    """Run `argv` in the resident process: its exit code, or None to run it here."""
    if not SUPPORTED or os.environ.get("CHECKER_NO_RESIDENT") or (argv and argv[0] == "resident"):
        return None
    if sys.stdout is None or sys.stderr is None:
        return None
    path = socket_path()
    if path is None or not os.path.exists(path):
        return None
    try:
        conn = connect(path)
    except OSError:
        return None
    try:
        return _ask(conn, argv)
    except Unavailable:
        return None
    finally:
        conn.sock.close()


def _isatty(stream: object) -> bool:
    try:
        return bool(getattr(stream, "isatty", lambda: False)())
    except (OSError, ValueError):
        return False


def _ask(conn: Connection, argv: Sequence[str]) -> int:
    try:
        conn.send(request(argv, stamp()))
        accepted = conn.receive()
    except (OSError, ValueError, struct.error) as exc:
        raise Unavailable from exc
    if accepted[:1] != ["running"]:
        raise Unavailable  # stale: it ends itself, and the command runs here
    # From here the command is the resident process's: a signal to this one is
    # passed on (its number, one byte), and the resident process raises it in
    # the command only while that command is still running.
    caught: list[int] = []

    def pass_on(signum: int, frame: object) -> None:
        caught.append(signum)
        try:  # noqa: SIM105 - contextlib costs 4 ms of imports on this path
            conn.sock.sendall(bytes([signum]))
        except OSError:
            pass

    before = [(s, _signal.signal(s, pass_on)) for s in SIGNALS]
    try:
        result = conn.receive()
        out, err = conn.payload(), conn.payload()
        code = int(result[0])
    except (OSError, ValueError, IndexError, struct.error):
        # It ended mid-command (killed, out of memory): nothing it wrote is half-done
        # (outputs are replaced whole), so the command runs again here.
        if caught:
            return 128 + caught[0]
        raise Unavailable from None
    finally:
        for s, old in before:
            _signal.signal(s, old)
    return write(out, err, code)


def write(out: bytes, err: bytes, code: int) -> int:
    """The command's output as it would have written it; 141 when the reader left."""
    for stream, data in ((sys.stdout, out), (sys.stderr, err)):
        if not data:
            continue
        try:
            stream.flush()
            binary, view = stream.buffer, memoryview(data)
            while view:  # unbuffered (python -u), the layer below writes what a pipe takes
                written = binary.write(view)
                if not written:
                    raise OSError("standard output takes nothing")
                view = view[written:]
            binary.flush()
        except BrokenPipeError:
            try:  # noqa: SIM105 - as checker.cli._broken_pipe: Python's last flush says nothing
                os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
            except (OSError, ValueError):
                pass
            return 141
        except (OSError, ValueError, AttributeError):
            return code or 120
    return code


# ---------------------------------------------------------------- start, stop, status
BUSY = ["busy"]  # what ask gives when one listens but is running a command all along


def ask(question: str, timeout: float = 5.0) -> list[str] | None:
    """A resident process's answer to `status` ([pid, stamp, served, rss]) or
    `stop` ([pid]); BUSY when it did not answer within `timeout` (it serves one
    command at a time); None when none listens."""
    path = socket_path()
    if path is None or not os.path.exists(path):
        return None
    try:
        conn = connect(path, timeout)
    except OSError:
        return None
    try:
        conn.send([PROTOCOL, question])
        return conn.receive()
    except TimeoutError:
        return BUSY
    except (OSError, ValueError, struct.error):
        return None
    finally:
        conn.sock.close()


def start() -> tuple[list[str], bool]:
    """The resident process's status, and whether this call started it."""
    import subprocess
    import time

    path = socket_path()
    if path is None:
        raise Unavailable("no private folder for its socket ($XDG_RUNTIME_DIR, or the temporary folder's)")
    fresh = stamp()
    known = ask("status")
    if known == BUSY or (known is not None and known[1:2] == [fresh]):
        return known, False  # busy: it answers once its command ends (a second one would take its socket)
    if known is not None:
        ask("stop")
    environ = {k: v for k, v in os.environ.items() if k != "CHECKER_NO_RESIDENT"}
    subprocess.Popen(  # this Python, this installation's module
        [sys.executable, "-m", "checker.resident_process", path],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True, cwd="/", env=environ,
    )
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        known = ask("status")
        if known is not None and known[1:2] == [fresh]:
            return known, True
        time.sleep(0.02)
    raise Unavailable(f"it did not answer within {START_SECONDS:g} s")
