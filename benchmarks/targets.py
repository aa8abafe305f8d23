"""Issue 25's targets, each as the ratio it is stated in, measured in one run.

    python benchmarks/targets.py               # 5 rounds, 10,000 and 100,000 servers
    python benchmarks/targets.py --rounds 9 --no-large   # 10,000 only (no 100,000 figures)
    python benchmarks/targets.py --also 1000 50000       # and the warm shares at other sizes

The machine is shared and noisy, so every figure is CPU seconds (user +
system) of a whole command line, the commands run in turn round after
round, and each ratio is the median of the rounds' pairs (with their range).
It writes benchmarks/fleet.py fleets of 10, 10,000 and 100,000 servers to a
temporary folder and times, in each round:

- the cold audit of each (`checker audit FLEET --no-cache --jobs 1`);
- a warm audit of each after one pod file changed (a cache filled by the
  previous audits, two rounds before the measured ones; each round edits
  one server of one pod file to a value no round wrote before, so the file
  is new to the cache and the others are not);
- the 10-server audit with no cache, in its own process and in the resident
  process (`checker resident start`; its CPU is the command's plus what the
  resident process spent on it, read from /proc);
- the warm 10,000-server audit after one pod file changed, in the resident
  process (the same command as above: what start-up no longer costs), and
  the 100,000-server one;
- the floor: benchmarks/floor.py, a skeleton audit of the 10,000 servers;

and the peak resident memory of the cold 100,000-server audit. Each size
given with `--also` is measured afterwards in a phase of its own (its cold
audit, its warm one in its own process and in a resident process started for
the phase), so that one resident process never carries several large fleets
at once. Then it prints, for every size, the warm share in its own process
and in the resident one, and each target, its measured figure and whether it
is met. Nothing asserts: the figures are for docs/performance.md.
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
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:  # it ends itself when checker's code changes: a run must not straddle an edit
        ended = f"the resident process {pid} ended (was checker's code changed during the run?)"
        raise SystemExit(ended) from None
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


FILLING = 2  # rounds before the measured ones (Phase.measure)


def edited(text: str, round_: int) -> str:
    """The pod file as round `round_` writes it: one server's memory, another in
    every round (the file is new to the cache each time; its findings are the same)."""
    return text.replace("memory_gb: 2048", f"memory_gb: {2047 - round_}", 1)


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


def start_resident(python: str, env: dict[str, str], cwd: Path) -> int:
    """Start a resident process (`checker resident start`): its pid."""
    started = subprocess.run([python, "-m", "checker", "resident", "start"], env=env, cwd=cwd,
                             capture_output=True, text=True, check=True).stdout
    return int(started.split()[2])


def stop_resident(python: str, env: dict[str, str], cwd: Path) -> None:
    subprocess.run([python, "-m", "checker", "resident", "stop"], env=env, cwd=cwd,
                   capture_output=True, check=False)


@dataclass
class Phase:
    """Commands timed in turn, round after round, beside one resident process."""

    table: dict[str, list[str]]  # label -> command line
    pods: dict[str, tuple[Path, str]]  # label -> the pod file it edits, its text
    residents: set[str]  # the labels whose command goes to the resident process

    def add_size(self, size: int, tmp: Path, python: str) -> None:
        """The cold and warm audits of a fleet, in their own processes and warm in the resident one."""
        fleet, label = tmp / f"fleet{size}", f"{size:,}"
        self.table[f"cold {label}"] = [python, "-m", "checker.cli", "audit", str(fleet), "--no-cache",
                                       "--jobs", "1", *AS_OF]
        if size < 1_000:
            return
        warm = ["--jobs", "1", *AS_OF]
        self.table[f"warm {label}"] = [python, "-m", "checker.cli", "audit", str(fleet),
                                       "--cache-dir", str(tmp / f"cache{size}"), *warm]
        # As typed (`checker`, checker/__main__.py): the command goes to the resident process.
        self.table[f"resident warm {label}"] = [python, "-m", "checker", "audit", str(fleet),
                                                "--cache-dir", str(tmp / f"cache-resident{size}"), *warm]
        self.residents.add(f"resident warm {label}")
        pod = fleet / pod_file(0)
        text = pod.read_text()
        self.pods[f"warm {label}"] = self.pods[f"resident warm {label}"] = (pod, text)

    def measure(
        self, rounds: int, python: str, env: dict[str, str], tmp: Path
    ) -> tuple[dict[str, list[float]], float]:
        """CPU seconds of each command in each round, and the peak MiB of the cold 100,000-server audit."""
        seconds: dict[str, list[float]] = {label: [] for label in self.table}
        peak = 0.0
        resident = start_resident(python, env, tmp)
        try:
            # The first rounds fill the caches (files, modules, entries): round 0 reads
            # every file afresh, round 1 keeps the others and writes what is kept of
            # them (their server rows). From then on each round reads the pod file
            # afresh (a text no round wrote before) and the others from their entries,
            # as a run after a user's edit does.
            for round_ in range(rounds + FILLING):
                for label, argv in self.table.items():
                    if label in self.pods:
                        pod, text = self.pods[label]
                        pod.write_text(edited(text, round_))
                    took, mib = run(argv, env, tmp, resident if label in self.residents else None)
                    if round_ >= FILLING:
                        seconds[label].append(took)
                        if label == "cold 100,000":
                            peak = max(peak, mib)
        finally:
            stop_resident(python, env, tmp)
        return seconds, peak


def main(rounds: int, large: bool, also: list[int]) -> None:
    python = sys.executable
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        sizes = sorted({10, 10_000, *([100_000] if large else [])})
        others = sorted(set(also) - set(sizes))
        for size in (*sizes, *others):
            write(size, tmp / f"fleet{size}")
        env = environment(ROOT, tmp / "state") | {"XDG_RUNTIME_DIR": str(tmp / "run")}
        env.pop("CHECKER_NO_RESIDENT", None)
        (tmp / "run").mkdir(mode=0o700)
        # The targets' commands in one phase, so that every ratio between them is
        # of interleaved pairs; each other size in a phase of its own, with its own
        # resident process (which carries what the last few commands used and ends
        # itself above checker.resident.MAX_RSS: several large fleets in turn are
        # not how it is used, one inventory after its edits is).
        main_phase = Phase({}, {}, set())
        for size in sizes:
            main_phase.add_size(size, tmp, python)
        main_phase.table["floor 10,000"] = [python, str(HERE / "floor.py"), str(tmp / "fleet10000")]
        main_phase.table["resident 10"] = [python, "-m", "checker", "audit", str(tmp / "fleet10"),
                                           "--no-cache", "--jobs", "1", *AS_OF]
        main_phase.residents.add("resident 10")
        seconds, peak = main_phase.measure(rounds, python, env, tmp)
        for size in others:
            phase = Phase({}, {}, set())
            phase.add_size(size, tmp, python)
            seconds |= phase.measure(rounds, python, env, tmp)[0]
        report(rounds, large, [*sizes, *others], seconds, peak)


def share(figures: list[float], base: list[float]) -> str:
    """The median of the pairs' shares, with their range."""
    pairs = [w / c for w, c in zip(figures, base, strict=True)]
    middle, low, high = (100 * f(pairs) for f in (statistics.median, min, max))
    return f"{middle:.1f} % ({low:.1f}-{high:.1f})"


def report(rounds: int, large: bool, sizes: list[int], seconds: dict[str, list[float]], peak: float) -> None:
    print(f"CPU seconds of whole processes, {rounds} rounds in turn (medians)")
    for label, values in seconds.items():
        print(f"  {label:<24} {statistics.median(values):7.3f} s")
    print("\nservers | cold | warm, one file changed | share (pairs) | the same in the resident process"
          " | share (pairs)")
    for size in sizes:
        label = f"{size:,}"
        if f"warm {label}" in seconds:
            cold, warm, kept = (seconds[f"{what} {label}"] for what in ("cold", "warm", "resident warm"))
            print(f"{label} | {statistics.median(cold):.3f} s | {statistics.median(warm):.3f} s | "
                  f"{share(warm, cold)} | {statistics.median(kept):.3f} s | {share(kept, cold)}")
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
