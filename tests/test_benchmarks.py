"""The floor benchmark (benchmarks/floor.py) finds what checker finds.

It is issue 25's yardstick for the cold path: a skeleton audit that could go
fast by finding less would make any ratio against it meaningless.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import fleet, floor
from tests.conftest import AS_OF, CliRunner


def test_the_floor_finds_the_rack_findings_checker_finds(tmp_path: Path, cli: CliRunner) -> None:
    fleet.write(800, tmp_path)  # 200 racks, two pod files
    text, racks = floor.audit(tmp_path)
    ours = {(f["rule"], f["entity"]) for f in json.loads(text)["findings"]}
    run = cli("audit", str(tmp_path), *AS_OF, "--no-cache", "--format", "json")
    theirs = {(f["rule"], f["entity"]) for f in json.loads(run.out)["findings"] if f["rule"] in floor.RULES}
    assert racks == 200
    assert len(ours) == 3 * racks
    assert ours == theirs
