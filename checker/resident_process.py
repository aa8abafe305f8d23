"""The resident process itself (`python -m checker.resident_process SOCKET`,
which `checker resident start` runs): it answers commands on SOCKET with
checker.cli.main, one at a time, as checker/resident.py describes.

Each command runs as its caller would have run it: in the caller's folder,
with its environment (and time zone), its umask, and a standard output that
is a terminal when the caller's is (colour is decided as in its own process).
Standard error is never a terminal here: a progress line rewritten in place
cannot be shown from a buffer; its messages are the same. Between commands
the cycle collector runs over what the command made (a command pauses it,
checker.core.perf; _collect), what a command made of the bytes it read is
carried to the next ones (checker.core.carried), and the process ends when
it is idle for an hour, asked to stop, met by a command of other code (the
caller's stamp differs: the command then runs in the caller's own process,
and the next `checker resident start` is fresh), or left holding more than
resident.MAX_RSS.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator

from checker import cli, resident
from checker.core.carried import Carried

REQUEST_SECONDS = 10.0  # to send a request
ANSWER_SECONDS = 60.0  # to take in an answer (a caller stopped with Ctrl-Z: it runs the command itself)


class _Output(io.BytesIO):
    """Standard output as the caller has it: a terminal or not."""

    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


class Request:
    """A command as `resident.request` sent it."""

    def __init__(self, fields: list[str]) -> None:
        _, _, self.stamp, self.cwd, umask, tty, self.out_encoding, self.err_encoding, argc = fields[:9]
        count = int(argc)
        self.umask, self.tty = int(umask), tty == "1"
        self.argv = fields[9:9 + count]
        env = fields[9 + count:]
        if count < 0 or len(self.argv) != count or len(env) % 2:
            raise ValueError("not a command")
        self.env = dict(zip(env[::2], env[1::2], strict=True))


@contextlib.contextmanager
def as_caller(req: Request) -> Iterator[Callable[[], tuple[bytes, bytes]]]:
    """The caller's folder, environment, umask and streams, for one command; what it
    yields gives the bytes written to them (the streams close with this block)."""
    saved_env, saved_cwd, saved_streams = dict(os.environ), os.getcwd(), (sys.stdout, sys.stderr)
    out_bytes, err_bytes = _Output(req.tty), _Output(False)
    out = io.TextIOWrapper(out_bytes, encoding=req.out_encoding, newline=None, write_through=True)
    err = io.TextIOWrapper(err_bytes, encoding=req.err_encoding, newline=None, write_through=True)
    old_umask = os.umask(req.umask)
    try:
        os.environ.clear()
        os.environ.update(req.env)
        time.tzset()  # today's date is the caller's
        os.chdir(req.cwd)
        sys.stdout, sys.stderr = out, err

        def written() -> tuple[bytes, bytes]:
            out.flush()
            err.flush()
            return out_bytes.getvalue(), err_bytes.getvalue()

        yield written
    finally:
        sys.stdout, sys.stderr = saved_streams
        out.flush()
        err.flush()
        os.environ.clear()
        os.environ.update(saved_env)
        time.tzset()
        os.chdir(saved_cwd)
        os.umask(old_umask)


def _caller_is_us(sock: socket.socket) -> bool:
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True  # the socket's folder is the user's alone (resident.folder)
    _, uid, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i")))
    return bool(uid == os.getuid())


class _Running:
    """Which command runs now: a signal from its caller is raised in it alone."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.serial = 0
        self.running = False


def _watch(sock: socket.socket, running: _Running, serial: int) -> None:
    with contextlib.suppress(OSError):
        while data := sock.recv(1):
            with running.lock:
                if running.running and running.serial == serial and data[0] in resident.SIGNALS:
                    signal.pthread_kill(threading.main_thread().ident or 0, data[0])


def rss() -> int:
    """Bytes this process holds now (its peak where /proc is not there)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(peak if sys.platform == "darwin" else peak * 1024)


def serve(path: str, run: Callable[[list[str]], int]) -> int:
    """Answer commands on `path` with `run` until stopped, idle, stale or too big."""
    stamp, served = resident.stamp(), 0
    running = _Running()

    def stop(signum: int, frame: object) -> None:
        # A caller's signal passed on just as its command ended (checker.core.signals
        # has put these handlers back): that command's, not a request to stop.
        if not running.running:
            raise SystemExit(0)

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is for its command
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    listener.bind(path)
    os.chmod(path, 0o600)
    ours = os.stat(path).st_ino
    listener.listen(16)
    listener.settimeout(resident.IDLE_SECONDS)
    try:
        while True:
            try:
                sock, _ = listener.accept()
            except TimeoutError:
                return 0
            with sock:
                # A caller that sends nothing, or stops reading, holds up no one for long.
                sock.settimeout(REQUEST_SECONDS)
                conn = resident.Connection(sock)
                try:
                    if not _caller_is_us(sock):
                        continue
                    fields = conn.receive()
                except (OSError, ValueError, struct.error):
                    continue
                what = fields[1] if len(fields) > 1 and fields[0] == resident.PROTOCOL else ""
                if what == "status":
                    conn.send([str(os.getpid()), stamp, str(served), str(rss())])
                    continue
                if what == "stop":
                    conn.send([str(os.getpid())])
                    return 0
                if what != "run":
                    continue
                try:
                    req = Request(fields)
                except (ValueError, IndexError):
                    continue
                if req.stamp != stamp:
                    with contextlib.suppress(OSError):
                        conn.send(["stale"])
                    return 0  # older code than the caller's: the next start is fresh
                conn.send(["running", str(os.getpid())])
                with running.lock:
                    running.serial += 1
                    running.running = True
                    serial = running.serial
                sock.settimeout(None)  # the command takes what it takes; the caller waits
                threading.Thread(target=_watch, args=(sock, running, serial), daemon=True).start()
                code, answer = _command(req, run, running)
                served += 1
                sock.settimeout(ANSWER_SECONDS)
                with contextlib.suppress(OSError):
                    conn.send([str(code)], *answer)
                del answer
                _collect(served)
                if rss() > resident.MAX_RSS:
                    return 0
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            # Only the socket this process made: a newer one's stays.
            if os.stat(path).st_ino == ours:
                os.unlink(path)


# Commands between full passes of the cycle collector.
FULL_EVERY = 16


def _collect(served: int) -> None:
    """A pass of the cycle collector after a command. The collector is paused while
    a command runs (checker.core.perf), so every object the command made is in the
    young generations, and a pass over them alone finds its reference cycles, at
    no measurable cost. A full pass scans everything carried and imported too
    (49 ms after a warm 10,000-server audit, for the cycles of objects older than
    the command): every FULL_EVERY commands, and whenever the process holds more
    than it may (resident.MAX_RSS), before it decides to end."""
    gc.collect(1)
    if served % FULL_EVERY == 0 or rss() > resident.MAX_RSS:
        gc.collect()


def _command(
    req: Request, run: Callable[[list[str]], int], running: _Running
) -> tuple[int, tuple[bytes, bytes]]:
    try:
        with as_caller(req) as written:
            try:
                code = run(req.argv)
            finally:
                with running.lock:
                    running.running = False
            return code, written()
    except KeyboardInterrupt as exc:  # a signal that came as the command ended
        return int(getattr(exc, "exit_code", 130)), (b"", b"")
    except OSError:  # the caller's folder went away since it asked (as checker.cli._check_where)
        return 2, (b"", b"the current folder no longer exists (deleted?); cd to an existing one\n")


def warm(carried: Carried) -> None:
    """What every audit loads, loaded before the first command: the stages, the
    built-in knowledge tables (kept for the process: tests/test_run_state.py's
    KEPT_CACHES) and the built-in rulebook (carried to the first command)."""
    import importlib

    from checker.derive import knowledge
    from checker.evaluate import rulebook

    for module in ("checker.audit", "checker.render.output", "checker.render.text"):
        importlib.import_module(module)
    knowledge.builtin()
    rulebook.load_rulebook(carried=carried)


def main(args: list[str]) -> int:
    # What one command made of the bytes it read (the compiled rulebook, kept
    # files' models) serves the next while those bytes are the same.
    carried = Carried()
    warm(carried)

    def run(argv: list[str]) -> int:
        carried.turn()
        return cli.main(argv, carried=carried)

    return serve(args[0], run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
