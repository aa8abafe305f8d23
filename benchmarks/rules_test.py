"""`checker rules test` on N generated rules: time and peak memory.

    python benchmarks/rules_test.py 1000 3000 10000

Each rule is on servers, reads one field, and has one fail and one pass
example, as a platform team's own rule folder would. Prints the wall time
and the peak RSS of the `checker rules test DIR` process (issue 17: matching
every example against every rule took 3.4 GB at 3,000 rules).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RULE = """\
  - id: gen.r{n}
    title: generated rule {n}
    category: power
    severity: warning
    on: server
    when: memory_gb > {n}
    message: "{{{{ name }}}} has {{{{ memory_gb }}}} GB"
    remediation: none
    examples:
      fail: [{{name: s{n}, memory_gb: {over}}}]
      pass: [{{name: s{n}, memory_gb: {under}}}]
"""


def write_rules(folder: Path, count: int) -> None:
    text = "rules:\n" + "".join(RULE.format(n=n, over=n + 1, under=max(n - 1, 0)) for n in range(count))
    (folder / "generated.yaml").write_text(text)


def run(count: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        write_rules(Path(tmp), count)
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "checker.cli", "rules", "test", tmp],
            capture_output=True, text=True, check=False,
        )
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(done.stdout[-2000:] + done.stderr[-2000:])
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return seconds, peak_mib


def main() -> None:
    print("| rules | seconds | peak RSS (MiB, highest so far) |")
    print("|---:|---:|---:|")
    for count in (int(a) for a in sys.argv[1:] or ["1000", "3000", "10000"]):
        seconds, peak = run(count)
        print(f"| {count:,} | {seconds:.1f} | {peak:.0f} |", flush=True)


if __name__ == "__main__":
    main()
