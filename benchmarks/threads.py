"""CPU of whole audits with numpy's BLAS thread pool at one thread (checker's
default) and at one per core, run in turn, with the ratio of each pair.

    python benchmarks/threads.py /tmp/fleet [RUNS]
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path


def cpu_of(folder: Path, threads: str | None) -> float:
    env = dict(os.environ)
    for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.pop(name, None)
        if threads is not None:
            env[name] = threads
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = [sys.executable, "-m", "checker", "audit", str(folder), "--no-cache", "--jobs", "1"]
    subprocess.run([*command, "--as-of", "2027-01-15"], env=env, stdout=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(folder: Path, runs: int) -> None:
    cores = str(os.cpu_count() or 1)
    ratios, ones, pools = [], [], []
    cpu_of(folder, None)  # warm the file cache
    for _ in range(runs):
        one, pool = cpu_of(folder, None), cpu_of(folder, cores)
        ones.append(one)
        pools.append(pool)
        ratios.append(one / pool)
    print(
        f"CPU s, median of {runs}: one BLAS thread {statistics.median(ones):.3f}"
        f" | {cores} threads {statistics.median(pools):.3f}"
        f" | ratio {statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 5)
