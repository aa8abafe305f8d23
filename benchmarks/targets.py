"""Issue 25's targets, each as the ratio it is stated in, measured in one run.

    python benchmarks/targets.py               # 5 rounds, 10,000 and 100,000 servers
    python benchmarks/targets.py --rounds 9 --no-large   # 10,000 only (no 100,000 figures)
    python benchmarks/targets.py --also 1000 50000       # and the warm share at other sizes

The machine is shared and noisy, so every figure is CPU seconds (user +
system) of a whole command line, the commands run in turn round after
round, and each ratio is the median of the rounds' pairs (with their range).
It writes benchmarks/fleet.py fleets of 10, 10,000 and 100,000 servers to a
temporary folder and times, in each round:

- the cold audit of each (`checker audit FLEET --no-cache --jobs 1`);
- a warm audit of each after one pod file changed (a cache filled by the
  previous audit; the round edits one server of one pod file, alternating
  between two contents, so the file is always new to the cache);
- the 10-server audit with no cache, in its own process and in the resident
  process (`checker resident start`; its CPU is the command's plus what the
  resident process spent on it, read from /proc);
- the warm 10,000-server audit after one pod file changed, in the resident
  process (the same command as above: what start-up no longer costs), and
  the 100,000-server one;
- the floor: benchmarks/floor.py, a skeleton audit of the 10,000 servers;

and the peak resident memory of the cold 100,000-server audit. Then it prints
each target, its measured figure and whether it is met. Nothing asserts: the
figures are for docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fleet import pod_file, write
from startup import AS_OF, ROOT, environment

HERE = Path(__file__).resolve().parent


def cpu_of(pid: int) -> float:
    """CPU seconds a running process has used (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(argv: list[str], env: dict[str, str], cwd: Path, resident: int | None = None) -> tuple[float, float]:
    """CPU seconds and peak resident MiB of one whole process (and of what the
    resident process `resident` spent meanwhile)."""
    before = cpu_of(resident) if resident else 0.0
    with subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as child:
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = 0  # reaped here: Popen must not wait again
        err = child.stderr.read() if child.stderr else b""
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1) or b"Traceback" in err:  # 1: findings; never a traceback
        raise SystemExit(f"{' '.join(argv)}: exit {code}\n{err.decode()}")
    kib = usage.ru_maxrss / (1024 if sys.platform == "darwin" else 1)
    if resident:
        # What it does after answering (a pass of the collector) counts too: it
        # serves one request at a time, so once it answers this one it is done.
        status = [sys.executable, "-m", "checker", "resident", "status"]
        subprocess.run(status, env=env, cwd=cwd, capture_output=True, check=True)
    served = cpu_of(resident) - before if resident else 0.0
    return usage.ru_utime + usage.ru_stime + served, kib / 1024


@dataclass(frozen=True)
class Target:
    what: str
    figure: str  # the label of the figure
    base: str | None  # a ratio of figure to base; None: the figure itself (MiB)
    limit: float
    unit: str


TARGETS = [
    Target("one file changed, warm, 100,000 servers, share of the cold audit",
           "warm 100,000", "cold 100,000", 0.15, "share"),
    Target("one file changed, warm, 10,000 servers, share of the cold audit",
           "warm 10,000", "cold 10,000", 0.20, "share"),
    Target("a 10-server audit in the resident process, share of the cold 10,000-server audit",
           "resident 10", "cold 10,000", 0.15, "share"),
    Target("a 10-server audit in its own process, share of the cold 10,000-server audit",
           "cold 10", "cold 10,000", 0.15, "share"),
    Target("one file changed, warm, 10,000 servers, in the resident process, share of the cold audit",
           "resident warm 10,000", "cold 10,000", 0.20, "share"),
    Target("one file changed, warm, 100,000 servers, in the resident process, share of the cold audit",
           "resident warm 100,000", "cold 100,000", 0.15, "share"),
    Target("cold 10,000-server audit over the floor (benchmarks/floor.py)", "cold 10,000", "floor 10,000",
           2.5, "times"),
    Target("cold 100,000 over cold 10,000 servers", "cold 100,000", "cold 10,000", 10.5, "times"),
    Target("peak memory of the cold 100,000-server audit", "peak 100,000", None, 1024, "MiB"),
]


def main(rounds: int, large: bool, also: list[int]) -> None:
    python = sys.executable
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        sizes = sorted({10, 10_000, *([100_000] if large else []), *also})
        for size in sizes:
            write(size, tmp / f"fleet{size}")
        env = environment(ROOT, tmp / "state") | {"XDG_RUNTIME_DIR": str(tmp / "run")}
        env.pop("CHECKER_NO_RESIDENT", None)
        (tmp / "run").mkdir(mode=0o700)
        command = [python, "-m", "checker.cli", "audit"]
        started = subprocess.run([python, "-m", "checker", "resident", "start"], env=env, cwd=tmp,
                                 capture_output=True, text=True, check=True).stdout
        resident = int(started.split()[2])
        residents = {"resident 10", "resident warm 10,000", "resident warm 100,000"}
        table: dict[str, list[str]] = {}
        pods: dict[str, tuple[Path, tuple[str, str]]] = {}
        for size in sizes:
            fleet = tmp / f"fleet{size}"
            label = f"{size:,}"
            table[f"cold {label}"] = [*command, str(fleet), "--no-cache", "--jobs", "1", *AS_OF]
            if size >= 1_000:
                cache = tmp / f"cache{size}"
                warm = ["--cache-dir", str(cache), "--jobs", "1", *AS_OF]
                table[f"warm {label}"] = [*command, str(fleet), *warm]
                pod = fleet / pod_file(0)
                text = pod.read_text()
                # One server's memory: the file changes, the findings do not.
                pods[f"warm {label}"] = (pod, (text, text.replace("memory_gb: 2048", "memory_gb: 2047", 1)))
        table["floor 10,000"] = [python, str(HERE / "floor.py"), str(tmp / "fleet10000")]
        # As typed (`checker`, checker/__main__.py): the command goes to the resident process.
        typed = [python, "-m", "checker", "audit"]
        table["resident 10"] = [*typed, str(tmp / "fleet10"), "--no-cache", "--jobs", "1", *AS_OF]
        table["resident warm 10,000"] = [*typed, str(tmp / "fleet10000"),
                                         "--cache-dir", str(tmp / "cache-resident"), "--jobs", "1", *AS_OF]
        pods["resident warm 10,000"] = pods["warm 10,000"]
        if large:
            table["resident warm 100,000"] = [*typed, str(tmp / "fleet100000"), "--cache-dir",
                                              str(tmp / "cache-resident100000"), "--jobs", "1", *AS_OF]
            pods["resident warm 100,000"] = pods["warm 100,000"]
        seconds: dict[str, list[float]] = {label: [] for label in table}
        peak = 0.0
        try:
            for round_ in range(rounds + 1):  # round 0 fills the caches (files, modules, entries)
                for label, argv in table.items():
                    if label in pods:
                        pod, texts = pods[label]
                        pod.write_text(texts[round_ % 2])
                    took, mib = run(argv, env, tmp, resident if label in residents else None)
                    if round_:
                        seconds[label].append(took)
                        if label == "cold 100,000":
                            peak = max(peak, mib)
        finally:
            stop = [python, "-m", "checker", "resident", "stop"]
            subprocess.run(stop, env=env, cwd=tmp, capture_output=True, check=False)
        print(f"CPU seconds of whole processes, {rounds} rounds in turn (medians)")
        for label, values in seconds.items():
            print(f"  {label:<22} {statistics.median(values):7.3f} s")
        print("\nservers | cold | warm, one file changed | share (pairs)")
        for size in sizes:
            label = f"{size:,}"
            if f"warm {label}" in seconds:
                cold, warm = seconds[f"cold {label}"], seconds[f"warm {label}"]
                pairs = [w / c for w, c in zip(warm, cold, strict=True)]
                middle, low, high = (100 * f(pairs) for f in (statistics.median, min, max))
                cold_s, warm_s = statistics.median(cold), statistics.median(warm)
                print(f"{label} | {cold_s:.3f} s | {warm_s:.3f} s | {middle:.1f} % ({low:.1f}-{high:.1f})")
        print("\ntarget | measured | limit | met")
        for t in TARGETS:
            if t.figure not in seconds and t.figure != "peak 100,000":
                print(f"{t.what} | not measured (--no-large) | {t.limit:g} | -")
                continue
            if t.base is None:
                if not large:
                    print(f"{t.what} | not measured (--no-large) | {t.limit:g} MiB | -")
                    continue
                value, shown = peak, f"{peak:.0f} MiB"
            else:
                pairs = [a / b for a, b in zip(seconds[t.figure], seconds[t.base], strict=True)]
                value = statistics.median(pairs)
                if t.unit == "share":
                    shown = f"{100 * value:.1f} % (pairs {100 * min(pairs):.1f}-{100 * max(pairs):.1f})"
                else:
                    shown = f"{value:.2f}x (pairs {min(pairs):.2f}-{max(pairs):.2f})"
            limit = f"<= {100 * t.limit:g} %" if t.unit == "share" else (
                f"<= {t.limit:g}x" if t.unit == "times" else f"<= {t.limit:g} MiB")
            print(f"{t.what} | {shown} | {limit} | {'yes' if value <= t.limit else 'no'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-large", action="store_true", help="skip the 100,000-server fleet")
    parser.add_argument("--also", type=int, nargs="*", default=[], help="more fleet sizes, cold and warm")
    options = parser.parse_args()
    main(options.rounds, not options.no_large, options.also)
