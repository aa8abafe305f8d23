"""Start-up and small audits against the cold 10,000-server audit: CPU seconds
(user + system) of whole command lines, run in turn round after round, each
figure the median of its rounds and each ratio the median of the rounds' pairs.

    python benchmarks/startup.py                    # 7 rounds
    python benchmarks/startup.py --runs 15 --importtime
    python benchmarks/startup.py --against /tmp/old  # also: this checker / the one in /tmp/old

It writes a fleet of 10,000 servers and one of 10 (benchmarks/fleet.py) to a
temporary folder and times, in each round:

- the cold 10,000-server audit, `checker audit FLEET --no-cache --jobs 1`;
- a 10-server audit with no cache, and with a warm one (the compiled rulebook
  and the parsed files read back: what a second run on a laptop does);
- start-up alone: the interpreter, the imports and the rulebook (no file read);
- `python -c pass`, and the libraries an audit imports, alone (the floor).

With --against DIR (a worktree of an older commit) it also runs the cold
10,000-server audit of the checker in DIR in each round, in the same two forms
as this checker: `python -m checker.cli` (the command, as `checker` runs it)
and a library call, `main(argv)` in a process Python ends itself.

--importtime runs the 10-server audit under `python -X importtime` and prints
the self time of each package's modules (the fastest of the runs), the floor
of start-up made visible.
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fleet import write

ROOT = Path(__file__).resolve().parent.parent
AS_OF = ("--as-of", "2027-01-15")
# As the command runs them (checker.cli.run): the collector paused, no teardown.
START_UP = (
    "import gc, os; gc.disable(); import checker.cli, checker.audit, checker.evaluate.rulebook as r;"
    " r.load_rulebook(); os._exit(0)"
)
# checker first: it keeps numpy's BLAS to one thread, as in an audit.
LIBRARIES = (
    "import checker, numpy, pydantic, jinja2.sandbox, yaml, ryml; "
    "from checker._vendor import durable_rules_engine; from checker._vendor.durable import engine; "
    "from pydantic import BaseModel, TypeAdapter"
)
LIBRARY_CALL = "import sys; from checker.cli import main; sys.exit(main(sys.argv[1:]))"


def environment(checker: Path, state: Path) -> dict[str, str]:
    """As a user's shell has it (no cache settings, byte-compiled modules kept),
    the checker in `checker` first on the path, the cache's keys kept in `state`."""
    unset = ("CHECKER_NO_CACHE", "CHECKER_CACHE_DIR", "PYTHONDONTWRITEBYTECODE", "CI")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    return env | {"PYTHONPATH": str(checker), "XDG_STATE_HOME": str(state)}


def cpu(argv: Sequence[str], env: dict[str, str], cwd: Path) -> float:
    """CPU seconds of one whole process (its own accounting, which a busy machine
    inflates less than wall time)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    quiet, kept = subprocess.DEVNULL, subprocess.PIPE
    done = subprocess.run(argv, env=env, cwd=cwd, stdout=quiet, stderr=kept, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1) or b"Traceback" in done.stderr:  # 1: findings, never a traceback
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}\n{done.stderr.decode()}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def commands(tmp: Path, against: Path | None) -> dict[str, tuple[list[str], dict[str, str]]]:
    python = sys.executable
    big, small, cache = tmp / "fleet10k", tmp / "fleet10", tmp / "c"
    ours = environment(ROOT, tmp / "state")
    cold = ["audit", str(big), "--no-cache", "--jobs", "1", *AS_OF]
    command = [python, "-m", "checker.cli"]
    audit_small = [*command, "audit", str(small), *AS_OF]
    table = {
        "cold 10,000-server audit": ([*command, *cold], ours),
        "10-server audit, no cache": ([*audit_small, "--no-cache"], ours),
        "10-server audit, warm cache": ([*audit_small, "--cache-dir", str(cache)], ours),
        "start-up: imports and rulebook": ([python, "-c", START_UP], ours),
        "python -c pass": ([python, "-c", "pass"], ours),
        "the libraries alone": ([python, "-c", LIBRARIES], ours),
        "cold 10,000, main(argv)": ([python, "-c", LIBRARY_CALL, *cold], ours),
    }
    if against is not None:
        theirs = environment(against, tmp / "state")
        table["cold 10,000, against"] = ([python, "-m", "checker.cli", *cold], theirs)
        table["cold 10,000, main(argv), against"] = ([python, "-c", LIBRARY_CALL, *cold], theirs)
    return table


RATIOS = {  # figure: the one it is a share or a multiple of (in the same round)
    "10-server audit, no cache": "cold 10,000-server audit",
    "10-server audit, warm cache": "cold 10,000-server audit",
    "start-up: imports and rulebook": "cold 10,000-server audit",
    "the libraries alone": "cold 10,000-server audit",
    "cold 10,000-server audit": "cold 10,000, against",
    "cold 10,000, main(argv)": "cold 10,000, main(argv), against",
}


def importtime(argv: Sequence[str], env: dict[str, str], cwd: Path, runs: int) -> None:
    """Self time of the modules a 10-server audit imports, by package (checker by
    subpackage), the fastest of `runs` for each module."""
    best: dict[str, int] = {}
    for _ in range(runs):
        err = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], env=env, cwd=cwd,
                             capture_output=True, text=True, check=False).stderr
        for line in err.splitlines():
            if line.startswith("import time:") and "self [us]" not in line:
                own, _, name = line.removeprefix("import time:").split("|")
                name = name.strip()
                best[name] = min(best.get(name, 1 << 60), int(own))
    by_package: collections.Counter[str] = collections.Counter()
    for name, own in best.items():
        parts = name.split(".")
        by_package[".".join(parts[:2]) if parts[0] == "checker" else parts[0]] += own
    total = sum(by_package.values())
    print(f"\nimport self time (-X importtime, fastest of {runs}, wall ms): {total / 1000:.0f} ms in all")
    for package, own in by_package.most_common(20):
        print(f"  {own / 1000:7.1f}  {package}")


def main(runs: int, against: Path | None, show_imports: bool) -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        write(10_000, tmp / "fleet10k")
        write(10, tmp / "fleet10")
        table = commands(tmp, against)
        seconds: dict[str, list[float]] = {label: [] for label in table}
        for round_ in range(runs + 1):  # the first round warms the caches (files, modules, entries)
            for label, (argv, env) in table.items():
                took = cpu(argv, env, tmp)
                if round_:
                    seconds[label].append(took)
        print(f"CPU seconds of whole processes, {runs} rounds in turn (median; ratios: median of the pairs)")
        for label, values in seconds.items():
            line = f"  {label:<36} {statistics.median(values):7.3f} s"
            base = RATIOS.get(label)
            if base in seconds:
                pairs = [a / b for a, b in zip(values, seconds[base], strict=True)]
                line += (f"  {statistics.median(pairs):.3f} of {base}"
                         f" (pairs {min(pairs):.3f}-{max(pairs):.3f})")
            print(line)
        if show_imports:
            argv, env = table["10-server audit, no cache"]
            importtime(argv, env, tmp, runs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--against", type=Path, help="a checkout of another checker to compare with")
    parser.add_argument("--importtime", action="store_true", help="imports' self time, by package")
    options = parser.parse_args()
    main(options.runs, options.against, options.importtime)
