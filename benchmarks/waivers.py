"""Waivers x findings: apply_waivers and waiver_records (what an audit does
with them) on N exact waivers over N findings (one waived each), for two
sizes; the ratio of the times shows the growth (10x the waivers and findings:
~10x the time when linear, ~100x when quadratic).

    python benchmarks/waivers.py [N]
"""

from __future__ import annotations

import datetime as dt
import sys
import time

from checker.core.findings import Finding
from checker.decide.waivers import apply_waivers, waiver_records
from checker.load.build import Placed
from checker.load.models import Waiver
from checker.source.parse import Src

AS_OF = dt.date(2027, 1, 15)


RULE = "power.rack-capacity"


def waivers_and_findings(n: int) -> tuple[list[Placed[Waiver]], list[Finding]]:
    until = dt.date(2027, 12, 31)
    waivers = [
        Placed(Waiver(rule="power.rack-capacity", entity=f"rack/f/R{i}", reason="ticket", owner="ops",
                      expires=until), "w.yaml", Src(i + 1, 5))
        for i in range(n)
    ]
    findings = [
        Finding("power.rack-capacity", "error", "power", f"rack/f/R{i}", "m", "r", "f.yaml", i + 1, 5)
        for i in range(n)
    ]
    return waivers, findings


def audit_waivers(waivers: list[Placed[Waiver]], findings: list[Finding]) -> None:
    """What an audit does with them (checker.audit): findings waived, then each waiver's record."""
    out = apply_waivers(findings, waivers, AS_OF, [RULE], [RULE])
    records = waiver_records(out, waivers, AS_OF)
    assert sum(f.waived for f in out) == len(findings) and all(r.waived == 1 for r in records)


def seconds(n: int) -> float:
    waivers, findings = waivers_and_findings(n)
    start = time.perf_counter()
    audit_waivers(waivers, findings)
    return time.perf_counter() - start


def main(n: int) -> None:
    small, large = seconds(n), seconds(10 * n)
    print(f"{n} waivers: {small:.4f} s | {10 * n}: {large:.4f} s | ratio {large / small:.1f} (10 = linear)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
