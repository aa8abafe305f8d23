"""The machine formats and the job summary of a large fleet, against the limits
of the services that read them.

    python benchmarks/formats.py               # 100,000 servers (a temporary folder)
    python benchmarks/formats.py 10000 100000  # each size in turn

For each size, a fleet of benchmarks/fleet.py (every rack over its feeds:
three findings a rack, 75,001 findings at 100,000 servers) audited once
through the command line, as the Action runs it under GitHub Actions, with
`--format sarif:... --format junit:... --format gitlab:...` and the step
summary; it prints each file's size, what it holds and the limit it must keep:

- SARIF: at most 25,000 results a run, 10 MB gzip-compressed (GitHub code scanning:
  https://docs.github.com/code-security/code-scanning/troubleshooting-sarif-uploads/results-exceed-limit
  and .../file-too-large);
- JUnit: under 30 MB a file (GitLab: https://docs.gitlab.com/ci/testing/unit_test_reports/),
  and its test cases counted;
- the job summary: 1 MiB a step (GitHub: https://docs.github.com/actions/reference/workflows-and-actions/workflow-commands#adding-a-job-summary);
- GitLab Code Quality: no documented limit, its size shown;

then the peak memory of that audit. Exit 1 when a file is over its limit.
Figures: docs/performance.md, "Formats".
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import fleet

MB = 1_000_000
LIMITS = {"sarif results": 25_000, "sarif gzip": 10 * MB, "junit": 30 * MB, "summary": 1024 * 1024}


def audit(folder: Path, out: Path) -> float:
    """One audit writing every file; its peak resident memory in MB."""
    env = {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(out / "summary.md"),
           "CHECKER_NO_CACHE": "1"}
    (out / "summary.md").write_text("")
    argv = [sys.executable, "-m", "checker.cli", "audit", str(folder), "--as-of", "2027-01-15",
            *(f"--format={fmt}:{out / name}" for fmt, name in
              (("sarif", "checker.sarif"), ("junit", "checker.xml"), ("gitlab", "gl-code-quality.json")))]
    # `python -m` puts its folder first on sys.path: run where no checker is.
    with subprocess.Popen(argv, cwd=out, env=env, stdout=subprocess.DEVNULL) as child:
        _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"checker audit exited {os.waitstatus_to_exitcode(status)}")
    return usage.ru_maxrss / 1024


def measure(servers: int) -> dict[str, float]:
    """The figures of one audit of a fleet of `servers`."""
    with tempfile.TemporaryDirectory(prefix="checker-formats-") as tmp:
        folder, out = Path(tmp) / "fleet", Path(tmp) / "out"
        out.mkdir()
        fleet.write(servers, folder)
        peak = audit(folder, out)
        sarif = (out / "checker.sarif").read_bytes()
        run = json.loads(sarif)["runs"][0]
        junit = (out / "checker.xml").read_bytes()
        gitlab = (out / "gl-code-quality.json").read_bytes()
        return {
            "servers": servers,
            "peak MB": peak,
            "sarif": len(sarif),
            "sarif results": len(run["results"]),
            "sarif left out": sum(
                int(n["message"]["text"].split()[0].replace(",", ""))
                for n in run["invocations"][0]["toolExecutionNotifications"]
                if n["descriptor"]["id"] == "checker.results-limit"
            ),
            "sarif gzip": len(gzip.compress(sarif)),
            "junit": len(junit),
            "junit cases": sum(1 for _ in ET.fromstring(junit).iter("testcase")),
            "summary": (out / "summary.md").stat().st_size,
            "gitlab": len(gitlab),
            "gitlab issues": len(json.loads(gitlab)),
        }


def over(figures: dict[str, float]) -> list[str]:
    """The limits a fleet's files pass."""
    return [
        f"{name} {figures[name]:,.0f} > {limit:,}" for name, limit in LIMITS.items() if figures[name] > limit
    ]


def show(f: dict[str, float]) -> None:
    print(f"{f['servers']:,.0f} servers (peak memory {f['peak MB']:,.0f} MB):")
    print(f"  sarif   {f['sarif'] / MB:6.1f} MB, {f['sarif results']:,.0f} results "
          f"({f['sarif left out']:,.0f} left out, counted), {f['sarif gzip'] / MB:.1f} MB gzipped")
    print(f"  junit   {f['junit'] / MB:6.1f} MB, {f['junit cases']:,.0f} test cases")
    print(f"  summary {f['summary']:9,.0f} bytes")
    print(f"  gitlab  {f['gitlab'] / MB:6.1f} MB, {f['gitlab issues']:,.0f} issues")
    for line in over(f):
        print(f"  OVER: {line}")


def main(argv: list[str]) -> int:
    failed = False
    for n in [int(a) for a in argv] or [100_000]:
        figures = measure(n)
        show(figures)
        failed = failed or bool(over(figures))
    return int(failed)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
