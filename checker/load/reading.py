"""Reading every inventory file: from the cache when it holds the file, else parsed,
in a process pool when there is enough to parse.

Files are independent until references are resolved, so each is parsed on its
own; the outcomes come back in the order of the files given, whatever the
number of processes or the order they finish in, so the audit's output is the
same bytes for any `--jobs`. A pool costs its start-up and sending every
parsed file back to this process (marshal bytes, decoded here), so it is used
only when at least POOL_MIN_BYTES of YAML in two files or more need
parsing; docs/architecture.md, "Reading in parallel", has the figures.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections import deque
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing.context import BaseContext
from pathlib import Path
from typing import Any

from checker.core import progress
from checker.core.carried import Carried
from checker.core.perf import gc_paused
from checker.load import validated
from checker.load.cache import Cache, Parsed, content_key, decode, encode, open_cache
from checker.source import fastpath
from checker.source.parse import YamlProblem
from checker.source.parse import decode as decode_text
from checker.source.reader import read


@dataclass(frozen=True)
class Kept:
    """A file whose validated servers an earlier run kept (checker.load.validated).
    Its documents are decoded or parsed only if that entry cannot be used."""

    payload: bytes  # the entry's
    path: Path
    key: str  # the file's content key
    data: bytes  # its bytes, hashed to `key`
    cache: Cache
    trees: fastpath.Trees  # the run's, for positions

    def text(self) -> str:
        return decode_text(self.data)

    def documents(self) -> Opened:
        """The file's documents, from its parsed entry or parsed again."""
        hit = self.cache.get(self.key, self.text, self.trees)
        return hit if hit is not None else parse_file(self.path, self.data, self.trees)


Opened = Parsed | OSError  # per file: documents, the YAML problem, or why it could not be read
Outcome = Opened | Kept  # or, to the loader, the servers an earlier run validated

# Our parser reads ~2 MB/s; decoding what a worker sends back costs about a
# third of parsing it. Below 1 MB a pool cannot win its start-up back on two
# cores; re-measure when the parser changes (benchmarks/cache_jobs.py).
POOL_MIN_BYTES = 1_000_000


def default_jobs() -> int:
    """The CPUs this process may run on (its affinity mask or, on 3.13+, also
    PYTHON_CPU_COUNT), not the machine's: a CI container often gets fewer."""
    counted = getattr(os, "process_cpu_count", None)
    if counted is not None:
        return int(counted() or 1)
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


@dataclass(frozen=True)
class ReadOptions:
    """How files are read: `jobs` processes at most, entries cached in `cache_dir` (None: no cache).
    Passed explicitly (checker.audit.run_audit -> checker.load.build.load -> read_all),
    never set for a whole process or context: two audits in one process may read differently.
    `carried`: what the resident process carries between commands (checker.core.carried):
    here, the models of kept files decoded for an earlier command, not rebuilt (the
    rulebook and the server fact rows are carried too, by the stages that make them)."""

    jobs: int = 1
    cache_dir: Path | None = None
    carried: Carried | None = None


def parse_file(path: Path, data: bytes | None = None, trees: fastpath.Trees | None = None) -> Opened:
    """The file's outcome; `data`, its bytes when already read (and hashed);
    `trees`, the run's holder of the trees positions are worked out from."""
    try:
        return read(path, data, trees)
    except YamlProblem as problem:
        return problem
    except OSError as exc:
        return exc


def workers(jobs: int, sizes: Sequence[int]) -> int:
    """Processes worth parsing files of these sizes in, this one included; 1 means no pool."""
    if jobs <= 1 or len(sizes) < 2 or sum(sizes) < POOL_MIN_BYTES:
        return 1
    return min(jobs, len(sizes))


def _parse_in_worker(path: Path) -> tuple[str, Any]:
    """Runs in a pool process. The payload format (checker.load.cache) is
    also the cheapest way back to the parent: plain marshal bytes."""
    with gc_paused():  # as in the parent: the collector would rescan every value built
        parsed = parse_file(path)
    if isinstance(parsed, OSError):
        return "oserror", parsed
    payload = _encoded(parsed)
    # Unencodable: the parent parses it itself.
    return ("unencodable", None) if payload is None else ("payload", payload)


def _encoded(parsed: Parsed) -> bytes | None:
    """The payload, or None when this file cannot be cached. A cache never fails
    an audit: whatever goes wrong here only costs a parse (tests/load/test_cache.py
    pins the format, so a broken encoder shows there, not in audits)."""
    try:
        return encode(parsed)
    except Exception:  # Unencodable, too deep, or a source map shape encode() does not know yet
        return None


def _pool_context() -> BaseContext:
    # Linux: fork, as flake8, Black and pylint do: a worker starts in milliseconds
    # with the parser already imported, where a spawned one would import the whole
    # command line again (~0.5 s). Elsewhere fork is unsafe (macOS) or absent.
    return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")


@dataclass(frozen=True)
class _Job:
    index: int
    path: Path
    size: int
    key: str | None  # the cache key of the bytes read, None without a cache
    events: bool = True  # the event parser will read it: worth a worker
    data: bytes | None = None  # the bytes read, hashed to `key`, parsed as they are here


class _Reader:
    def __init__(self, paths: Sequence[Path], options: ReadOptions, kept: bool = False) -> None:
        self.paths = paths
        self.jobs = options.jobs
        self.cache: Cache | None = open_cache(options.cache_dir) if options.cache_dir else None
        self.kept = kept  # offer the files' kept servers (Kept), where an entry has them
        self.keys: list[str | None] = [None] * len(paths)  # each file's content key (a cache only)
        self.outcomes: list[Outcome | None] = [None] * len(paths)
        self.done = 0
        # This run's trees for positions, shared by its files and by nothing else.
        self.trees = fastpath.Trees()

    def run(self) -> list[Outcome]:
        todo = [job for i, path in enumerate(self.paths) if (job := self._lookup(i, path))]
        # Only files for the event parser go to workers: the fast path parses a
        # file about as fast as this process could decode a worker's result.
        slow = [job for job in todo if job.events]
        count = workers(self.jobs, [job.size for job in slow])
        if count > 1:
            for job in todo:
                if not job.events:
                    self._finish(job, parse_file(job.path, job.data, self.trees))
            self._in_pool(slow, count)
        else:
            for job in todo:
                self._finish(job, parse_file(job.path, job.data, self.trees))
        assert all(o is not None for o in self.outcomes)
        return [o for o in self.outcomes if o is not None]

    def _lookup(self, index: int, path: Path) -> _Job | None:
        """A job to parse this file, or None when it is settled (cached, or unreadable)."""
        if self.cache is None and self.jobs <= 1:
            return _Job(index, path, 0, None)  # no pool, no cache: nothing to decide here
        try:
            data = path.read_bytes()
        except OSError as exc:
            self._settle(index, exc)
            return None
        key = content_key(data) if self.cache else None
        self.keys[index] = key
        if self.kept and self.cache and key:
            payload = self.cache.payload(validated.key(key))
            if payload is not None:
                self._settle(index, Kept(payload, path, key, data, self.cache, self.trees))
                return None
        hit = self.cache.get(key, lambda: decode_text(data), self.trees) if self.cache and key else None
        if hit is None:
            return _Job(index, path, len(data), key, self.jobs > 1 and not fastpath.may_take(data), data)
        self._settle(index, hit)
        return None

    def _in_pool(self, todo: list[_Job], count: int) -> None:
        """This process parses too, and decodes what `count - 1` workers send back.
        Workers take the biggest files first, this process the smallest: each keeps
        busy until the end, whatever their speeds."""
        queue = deque(sorted(todo, key=lambda job: (-job.size, job.index)))
        running: dict[Future[tuple[str, Any]], _Job] = {}
        with ProcessPoolExecutor(count - 1, mp_context=_pool_context()) as pool:

            def feed() -> None:
                while queue and len(running) < count:  # each worker one file ahead
                    job = queue.popleft()
                    running[pool.submit(_parse_in_worker, job.path)] = job

            try:
                # With fork, the first submit starts every worker: no other thread may run then.
                with progress.single_threaded():
                    feed()
                while running or queue:
                    for future in [f for f in running if f.done()]:
                        self._collect(running.pop(future), future)
                    feed()
                    if queue:
                        job = queue.pop()
                        self._finish(job, parse_file(job.path, job.data, self.trees))
                    elif running:
                        wait(running, return_when=FIRST_COMPLETED)
            except BaseException:  # Ctrl-C, or a bug: do not wait for the files still queued
                pool.shutdown(wait=False, cancel_futures=True)
                raise

    def _collect(self, job: _Job, future: Future[tuple[str, Any]]) -> None:
        try:
            kind, data = future.result()
        except BrokenProcessPool:  # a worker died (killed, out of memory): parse it here
            kind, data = "unencodable", None
        if kind == "payload":
            self._finish(job, decode(data, lambda: decode_text(job.path.read_bytes()), self.trees), data)
        elif kind == "oserror":
            self._finish(job, data)
        else:
            self._finish(job, parse_file(job.path, job.data, self.trees))

    def _finish(self, job: _Job, outcome: Opened, sent: bytes | None = None) -> None:
        """Settle a file parsed here from the bytes hashed to its key, or by a
        worker that `sent` its payload after reading the file again."""
        self._settle(job.index, outcome)
        if self.cache is None or job.key is None or isinstance(outcome, OSError):
            return
        payload = sent or _encoded(outcome)
        # A worker's file is stored only if it still holds the bytes hashed.
        if payload is not None and (sent is None or self._unchanged(job)):
            self.cache.put(job.key, payload)

    @staticmethod
    def _unchanged(job: _Job) -> bool:
        try:
            return content_key(job.path.read_bytes()) == job.key
        except OSError:
            return False

    def _settle(self, index: int, outcome: Outcome) -> None:
        self.outcomes[index] = outcome
        self.done += 1
        progress.files(self.done, len(self.paths), self.paths[index].name)


def read_all(paths: Sequence[Path], options: ReadOptions) -> list[Outcome]:
    """Each file's outcome, in the order of `paths` (never Kept)."""
    return _Reader(paths, options).run()


@dataclass(frozen=True)
class Read:
    """What the loader reads: each file's outcome (Kept where an earlier run kept
    its validated servers), each file's content key, and the cache (None: none)."""

    outcomes: list[Outcome]
    keys: list[str | None]
    cache: Cache | None


def read_files(paths: Sequence[Path], options: ReadOptions) -> Read:
    reader = _Reader(paths, options, kept=True)
    outcomes = reader.run()
    return Read(outcomes, reader.keys, reader.cache)
