"""Time each pipeline stage on a synthetic fleet of each size and print the figures.

    python benchmarks/stages.py 1000 10000 50000

Each size is written to a temporary folder (benchmarks/fleet.py) and timed by
benchmarks/pipeline.py, which times one folder you keep. Figures, targets and
where the time goes: docs/performance.md.
"""

from __future__ import annotations

import resource
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fleet import write
from pipeline import main

from checker.core.perf import gc_paused

if __name__ == "__main__":
    # As in the CLI, which runs every command with the cycle collector paused.
    with gc_paused():
        for count in [int(a) for a in sys.argv[1:]] or [1000, 10000]:
            with tempfile.TemporaryDirectory() as tmp:
                write(count, Path(tmp))
                print(f"{count:>7} servers | ", end="", flush=True)
                main(Path(tmp))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak_mb:.0f} MB")
