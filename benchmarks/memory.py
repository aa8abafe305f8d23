"""Memory of an audit: resident after each stage, and the peak of a whole audit.

    python benchmarks/fleet.py 100000 /tmp/fleet100k
    python benchmarks/memory.py /tmp/fleet10k /tmp/fleet100k

For each folder, in a fresh process (a peak is the whole process's), with the
cycle collector paused as the command line runs, for whichever checker is
first on `sys.path` (as benchmarks/pipeline.py, so two versions compare):
resident memory (VmRSS) and the peak so far (VmHWM) after imports, load,
capacity, facts and rules, with what facts add per server; then the peak of
one whole `checker audit --no-cache --jobs 1 --format json` through the
command line, as a user runs it (start-up and JSON included). Linux only
(/proc). Figures: docs/performance.md, "Memory".
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

from checker.core.perf import gc_paused

AS_OF = dt.date(2027, 1, 15)


def _status_mb(field: str) -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        line = next(line for line in status if line.startswith(f"{field}:"))
    return int(line.split()[1]) / 1024


def resident_mb() -> float:
    return _status_mb("VmRSS")


def peak_mb() -> float:
    return _status_mb("VmHWM")


def stages(folder: Path) -> None:
    """Resident memory after each stage of one audit, in this process."""
    from checker.derive.capacity import compute
    from checker.derive.facts import Context, build_all
    from checker.evaluate.engine import evaluate
    from checker.evaluate.rulebook import load_rulebook
    from checker.load.build import load

    book = load_rulebook()
    figures = [("imports", resident_mb(), peak_mb())]
    inv, problems = load([folder])
    assert not problems, problems[:3]
    figures.append(("load", resident_mb(), peak_mb()))
    cap = compute(inv)
    for table in (cap.facilities, cap.racks, cap.feeds, cap.servers):
        table.cells  # noqa: B018 (the facts read them; built here so facts are measured alone)
    figures.append(("capacity", resident_mb(), peak_mb()))
    facts = build_all(inv, cap, Context(AS_OF))
    figures.append(("facts", resident_mb(), peak_mb()))
    try:
        evaluate(book.rules, facts, 100)  # an engine that rendered the messages the cap showed
    except TypeError:
        evaluate(book.rules, facts)
    figures.append(("rules", resident_mb(), peak_mb()))
    per_server = (figures[3][1] - figures[2][1]) * 2**20 / max(len(inv.servers), 1)
    shown = " | ".join(f"{name} {now:.0f} MB (peak {peak:.0f})" for name, now, peak in figures)
    print(f"{len(inv.servers):,} servers, {len(facts):,} facts | {shown} | facts {per_server:,.0f} B/server")


def whole_audit_peak_mb(folder: Path) -> float:
    """Peak resident memory of one whole audit through the command line (its own)."""
    argv = [sys.executable, "-m", "checker.cli", "audit", str(folder.resolve()), "--as-of", AS_OF.isoformat()]
    options = ["--format", "json", "--no-cache", "--jobs", "1"]
    # `python -m` puts the working folder first on sys.path: run it here, where
    # no checker is, so the one on PYTHONPATH (or installed) is measured.
    here = Path(__file__).resolve().parent
    with subprocess.Popen([*argv, *options], stdout=subprocess.DEVNULL, cwd=here) as child:
        _, _, usage = os.wait4(child.pid, 0)
        child.returncode = 0  # reaped here; Popen must not wait for it again
    return usage.ru_maxrss / 1024


def main(folders: list[Path]) -> None:
    for folder in folders:
        # A fresh process each: ru_maxrss never goes down.
        subprocess.run([sys.executable, __file__, "--stages", str(folder)], check=True)
        print(f"  whole audit through the command line: peak RSS {whole_audit_peak_mb(folder):.0f} MB")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--stages"]:
        with gc_paused():
            stages(Path(sys.argv[2]))
    else:
        main([Path(a) for a in sys.argv[1:]])
