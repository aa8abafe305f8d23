"""What pointing `checker diff`'s new findings at the changed lines costs, against the audit.

    python benchmarks/diff_locations.py [SERVERS]     (default 10,000)

A fleet (benchmarks/fleet.py) is committed in a temporary git repository,
then four servers are added to its last rack (in its last pod file). The
head is audited once; then the findings are moved to the changed lines
(checker.decide.touched.relocate), as `checker diff` does:

- the last rack's findings (its four servers walked, then the new ones);
- the worst case: one finding per facility, rack or server rule, written
  at a line the change did not touch, on the facility, whose servers are
  all walked until the one the change added (`held`), the first time; the
  same again for a second rule (each server's positions are worked out once).

Printed: seconds, and each as a ratio to the head audit in the same run.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from benchmarks import fleet
from checker.audit import run_audit
from checker.decide.config import Config, settings
from checker.decide.touched import relocate
from checker.diff import _Touched
from checker.gitref import materialize, resolve_ref, working_directory

AS_OF = dt.date(2027, 1, 15)


def _git(repo: Path, *args: str) -> None:
    who = ["-c", "user.name=b", "-c", "user.email=b@example.com"]
    subprocess.run(["git", *who, *args], cwd=repo, check=True, capture_output=True)


def main(servers: int) -> None:
    with tempfile.TemporaryDirectory(prefix="checker-bench-") as tmp:
        repo = Path(tmp) / "repo"
        fleet.write(servers, repo / "fleet")
        _git(repo, "init", "-q")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", "fleet")
        # Four more servers in the last rack (copies of its own, renamed): the facility file is untouched.
        pods = sorted((repo / "fleet").glob("servers-pod-*.yaml"))
        body = fleet.servers(servers - fleet.SERVERS_PER_RACK, servers).split("servers:\n", 1)[1]
        pods[-1].write_text(pods[-1].read_text() + body.replace("name: gpu-", "name: new-gpu-"))
        last = f"rack/bench/R{servers // fleet.SERVERS_PER_RACK - 1:05d}"
        cfg = settings(Config(), None, select=[], ignore=[], fail_on=None, rule_dirs=[])
        with working_directory(repo):
            start = time.perf_counter()
            head = run_audit([Path("fleet")], cfg, AS_OF)
            audit_s = time.perf_counter() - start
            base_root = Path(tmp) / "base"
            materialize(repo, resolve_ref(repo, "HEAD"), [repo / "fleet"], base_root)
            touched = _Touched(repo, base_root)
            new = [f for f in head.detected if f.entity == last]
            start = time.perf_counter()
            moved = relocate(new, head.facts, touched)
            own_s = time.perf_counter() - start
            assert new and {f.file for f in moved} == {pods[-1].relative_to(repo).as_posix()}, moved
            far = replace(head.detected[0], entity="facility/bench", file="fleet/facility.yaml", line=1)
            worst = [far, replace(far, rule="second.rule")]
            start = time.perf_counter()
            moved = relocate(worst, head.facts, touched)
            worst_s = time.perf_counter() - start
            assert {f.file for f in moved} == {pods[-1].relative_to(repo).as_posix()}, moved
    print(f"servers: {servers}, head audit: {audit_s:.2f} s")
    print(f"the last rack's {len(new)} findings: {own_s:.3f} s ({own_s / audit_s:.1%} of the audit)")
    print(f"2 facility findings, every server walked: {worst_s:.3f} s ({worst_s / audit_s:.1%} of the audit)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
