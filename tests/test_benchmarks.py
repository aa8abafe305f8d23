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


def test_the_facility_benchmark_loads_cleanly_and_its_checks_still_check(tmp_path: Path) -> None:
    """benchmarks/facility_checks.py times a facility whose every check passes;
    the same facility with one feed on a panel it lacks and one CDU on a row it
    lacks is reported at each, as the checks that look names up in the
    facility's tables (made once per facility) report them."""
    from benchmarks import facility_checks
    from checker.load.build import load

    text = facility_checks.facility(60)  # 3 rows
    (tmp_path / "facility.yaml").write_text(text)
    _, problems = load([tmp_path])
    assert problems == []
    text = text.replace("panel: P0002A}", "panel: P0009A}", 1)
    text = text.replace("rows: [L0001]", "rows: [L0007]", 1)
    (tmp_path / "facility.yaml").write_text(text)
    _, problems = load([tmp_path])
    assert sorted(p.message for p in problems) == [
        "CDU CDU0001: no row 'L0007' in facility bench (did you mean 'L0002'?)",
        "feed A of rack R00040: facility bench has no panel 'P0009A' (did you mean 'P0002A'?)",
        # on no panel it has, so on no UPS block either
        "feed A of rack R00040: say which UPS block feeds it (ups: NAME, or a panel whose ups names it);"
        " facility bench has UPS-A, UPS-B (2N)",
    ]
