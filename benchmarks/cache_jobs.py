"""The cache and --jobs on a synthetic fleet: whole audits through the command line,
and the load stage alone, and whether every output is the same bytes.

    python benchmarks/cache_jobs.py 10000             # one or more fleet sizes
    python benchmarks/cache_jobs.py --runs 1 50000    # best of 1 run (default 3)
    python benchmarks/cache_jobs.py --varied 10000    # no two servers alike (fleet.py --varied)

For each size it writes the fleet (benchmarks/fleet.py: facility, workloads and
one file per pod of 400 servers), then times a plain `yaml.load` of the same
files (the baseline of the targets in docs/performance.md), the peak memory of
one audit, and, the best of three runs each:
  --no-cache --jobs 1 and --jobs 2       the parse in one process, then in two;
  cold                                   an empty cache (a new one each run): parse, write every entry;
  warm, nothing changed                  every file from the cache;
  warm, one file changed                 one pod file edited: that file parsed again.
The machine's load average is printed with the figures: on a shared machine,
a second process only helps when a second core is free.
"""

from __future__ import annotations

import datetime as dt
import gc
import itertools
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fleet import pod_file, write

from checker.core.perf import gc_paused
from checker.load.build import load
from checker.load.reading import ReadOptions

AS_OF = dt.date(2027, 1, 15).isoformat()
T = TypeVar("T")


# As a user's shell has it: no cache settings, and byte-compiled modules kept
# (a pip install writes them; without them every start compiles checker anew).
_UNSET = ("CHECKER_NO_CACHE", "CHECKER_CACHE_DIR", "PYTHONDONTWRITEBYTECODE")
_ENV = {k: v for k, v in os.environ.items() if k not in _UNSET}
START_UP = "import checker.cli, checker.audit, checker.evaluate.rulebook as r; r.load_rulebook()"


def start_up() -> tuple[float, bytes]:
    """Seconds every audit spends before it reads a file, cached or not: the
    interpreter, the imports (pydantic, numpy, jinja2, durable-rules) and the
    rulebook. No cache can make a warm audit cheaper than this."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", START_UP], env=_ENV, check=True)
    return time.perf_counter() - start, b""


def audit(folder: Path, *options: str) -> tuple[float, bytes]:
    """Seconds for a whole `checker audit --format json`, as a user runs it, and its output."""
    argv = [sys.executable, "-m", "checker.cli", "audit", str(folder), "--as-of", AS_OF, "--format", "json"]
    start = time.perf_counter()
    done = subprocess.run([*argv, *options], capture_output=True, env=_ENV, check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr.decode())
    return seconds, done.stdout


def peak_rss_mb(folder: Path, *options: str) -> float:
    """Peak resident memory of one whole audit (its own, not this script's)."""
    argv = [sys.executable, "-m", "checker.cli", "audit", str(folder), "--as-of", AS_OF, "--format", "json"]
    quiet = subprocess.DEVNULL
    with subprocess.Popen([*argv, *options], stdout=quiet, stderr=quiet, env=_ENV) as child:
        _, _, usage = os.wait4(child.pid, 0)
        child.returncode = 0  # reaped here; Popen must not wait for it again
    return usage.ru_maxrss / 1024


def yaml_load(files: list[Path]) -> float:
    """A plain PyYAML load of the same files (C loader, collector on, as users run it)."""
    gc.enable()
    start = time.perf_counter()
    for path in files:
        list(yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader))
    return time.perf_counter() - start


def load_only(folder: Path, options: ReadOptions) -> tuple[float, bytes]:
    """Seconds for the load stage in this process; as output, the CPU seconds spent
    here and in workers, which a busy machine does not inflate as it does wall time."""
    start, cpu = time.perf_counter(), time.process_time()
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    with gc_paused():
        _, problems = load([folder], options=options)
    assert not problems, problems[:3]
    seconds = time.perf_counter() - start
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - workers
    return seconds, f"{time.process_time() - cpu:.2f}s here + {workers:.2f}s in workers".encode()


def change_one_file(folder: Path) -> None:
    """What a pull request does: one server in one pod gets more memory."""
    pod = folder / pod_file(1)
    text = pod.read_text()
    pod.write_text(text.replace("memory_gb: 2048", "memory_gb: 1024", 1))


def best(runs: int, measure: Callable[[], tuple[float, bytes]]) -> tuple[float, bytes]:
    """The fastest of `runs` (the least disturbed on a shared machine) and its output."""
    results = [measure() for _ in range(runs)]
    return min(r[0] for r in results), results[-1][1]


def changed_then(measure: Callable[[], T], folder: Path) -> Callable[[], T]:
    """Each run edits the pod file anew (another server), so each finds one file changed."""

    def run() -> T:
        change_one_file(folder)
        return measure()

    return run


def bench(count: int, runs: int, varied: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder, cache = Path(tmp) / "fleet", Path(tmp) / "cache"
        files = write(count, folder, varied)
        size = sum(p.stat().st_size for p in files)
        load_avg = os.getloadavg()[0]
        kind = " (varied)" if varied else ""
        print(f"{count:,} servers{kind}, {len(files)} files, {size / 1e6:.1f} MB;"
              f" load average {load_avg:.1f}; best of {runs}")
        plain = min(yaml_load(files) for _ in range(runs))
        floor, _ = best(runs, start_up)
        j1, out_j1 = best(runs, lambda: audit(folder, "--no-cache", "--jobs", "1"))
        rss = peak_rss_mb(folder, "--no-cache", "--jobs", "1")
        j2, out_j2 = best(runs, lambda: audit(folder, "--no-cache", "--jobs", "2"))
        fresh = (cache.parent / f"cold-{n}" for n in itertools.count())
        cold, out_cold = best(runs, lambda: audit(folder, "--cache-dir", str(next(fresh)), "--jobs", "1"))
        audit(folder, "--cache-dir", str(cache), "--jobs", "1")  # fills the cache the warm runs read
        warm, out_warm = best(runs, lambda: audit(folder, "--cache-dir", str(cache), "--jobs", "1"))
        load_j1, cpu_j1 = best(runs, lambda: load_only(folder, ReadOptions(jobs=1)))
        load_j2, cpu_j2 = best(runs, lambda: load_only(folder, ReadOptions(jobs=2)))
        load_warm, _ = best(runs, lambda: load_only(folder, ReadOptions(jobs=1, cache_dir=cache)))
        one = changed_then(lambda: audit(folder, "--cache-dir", str(cache), "--jobs", "1"), folder)
        warm1, out_warm1 = best(runs, one)
        _, out_fresh = audit(folder, "--no-cache", "--jobs", "1")
        load_one = changed_then(lambda: load_only(folder, ReadOptions(jobs=1, cache_dir=cache)), folder)
        load_warm1, _ = best(runs, load_one)
    same = out_j1 == out_j2 == out_cold == out_warm and out_warm1 == out_fresh
    print(f"  yaml.load of the same files {plain:.2f}s | --no-cache --jobs 1 = {j1 / plain:.2f} x yaml.load"
          f" | its peak RSS {rss:.0f} MiB")
    print(f"  whole audit: --no-cache --jobs 1 {j1:.2f}s | --jobs 2 {j2:.2f}s | cold cache {cold:.2f}s"
          f" | warm, nothing changed {warm:.2f}s ({warm / cold:.0%} of cold)"
          f" | warm, one file changed {warm1:.2f}s ({warm1 / cold:.0%} of cold)")
    print(f"  start-up (interpreter, imports, rulebook; no file read) {floor:.2f}s"
          f" = {floor / cold:.0%} of the cold audit, {floor / plain:.2f} x yaml.load")
    print(f"  load stage:  --jobs 1 {load_j1:.2f}s (CPU {cpu_j1.decode()})"
          f" | --jobs 2 {load_j2:.2f}s (CPU {cpu_j2.decode()})"
          f" | warm, nothing changed {load_warm:.2f}s | warm, one file changed {load_warm1:.2f}s")
    print(f"  outputs byte-identical (jobs 1 = jobs 2 = cold = warm; changed = its cold run): {same}")


if __name__ == "__main__":
    args = sys.argv[1:]
    runs = 3
    if args[:1] == ["--runs"]:
        runs, args = int(args[1]), args[2:]
    varied = args[:1] == ["--varied"]
    for n in [int(a) for a in args[varied:]] or [10000]:
        bench(n, runs, varied)
