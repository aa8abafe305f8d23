"""How the facility checks scale with a facility's own size: the load of one
facility of N racks (rows of 20, each row's A and B sides on a panel of
their own fed from a UPS block, a CDU a row) and of one of twice as many,
timed in one run; the ratio is the target's (a facility twice as large
takes no more than 2.2x: the checks look names up in tables made once per
facility, not once per rack or CDU).

    python benchmarks/facility_checks.py            # 5,000 and 10,000 racks
    python benchmarks/facility_checks.py 10000      # 10,000 and 20,000

Each size is loaded in turn, `--rounds` times (default 5), and the ratio is
the median of the rounds' pairs (the machine is shared and noisy).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from checker.core.perf import gc_paused
from checker.load.build import load

ROW = 20  # racks a row


def facility(racks: int) -> str:
    """A facility of `racks` 2N racks: a panel a row and side, a CDU a row."""
    rows = -(-racks // ROW)
    lines = [
        "kind: Facility",
        "name: bench",
        "power:",
        "  ups:",
        "    redundancy: 2N",
        "    blocks:",
        f"      - {{name: UPS-A, capacity_kw: {racks * 30}}}",
        f"      - {{name: UPS-B, capacity_kw: {racks * 30}}}",
        "  panels:",
    ]
    for r in range(rows):
        for side in "AB":
            lines.append(f"    - {{name: P{r:04d}{side}, voltage: 415, amps: 800, ups: UPS-{side}}}")
    lines.append("racks:")
    for i in range(racks):
        row = i // ROW
        lines += [
            f"  - name: R{i:05d}",
            f"    row: L{row:04d}",
            "    redundancy: 2N",
            "    cooling: liquid",
            "    feeds:",
            f"      - {{name: A, side: A, voltage: 415, amps: 63, phase: 3, panel: P{row:04d}A}}",
            f"      - {{name: B, side: B, voltage: 415, amps: 63, phase: 3, panel: P{row:04d}B}}",
        ]
    lines.append("cdus:")
    for r in range(rows):
        lines.append(f"  - {{name: CDU{r:04d}, capacity_kw: 1000, rows: [L{r:04d}]}}")
    return "\n".join(lines) + "\n"


def seconds(folder: Path) -> float:
    start = time.process_time()
    with gc_paused():
        _, problems = load([folder])
    took = time.process_time() - start
    assert not problems, problems[:3]
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("racks", nargs="?", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sizes = (args.racks, 2 * args.racks)
    with tempfile.TemporaryDirectory() as tmp:
        folders = []
        for size in sizes:
            folder = Path(tmp) / str(size)
            folder.mkdir()
            (folder / "facility.yaml").write_text(facility(size))
            folders.append(folder)
        seconds(folders[0])  # imports and the built-in catalog read once
        pairs = []
        for _ in range(args.rounds):
            small, large = seconds(folders[0]), seconds(folders[1])
            pairs.append((small, large))
    ratios = [large / small for small, large in pairs]
    print(f"facility of {sizes[0]:,} racks: load {statistics.median(s for s, _ in pairs):.3f} s (CPU)")
    print(f"facility of {sizes[1]:,} racks: load {statistics.median(b for _, b in pairs):.3f} s (CPU)")
    print(f"{sizes[1]:,} / {sizes[0]:,} racks: {statistics.median(ratios):.2f}x"
          f" (pairs {min(ratios):.2f}-{max(ratios):.2f}; target <= 2.2x: "
          f"{'met' if statistics.median(ratios) <= 2.2 else 'NOT met'})")


if __name__ == "__main__":
    main()
