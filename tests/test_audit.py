from __future__ import annotations

import datetime as dt
from pathlib import Path

from benchmarks.fleet import write
from checker.audit import run_audit
from checker.decide.config import Config, settings
from checker.render import get_formatter

AS_OF = dt.date(2027, 1, 15)
CFG = settings(Config(), None, select=[], ignore=[], fail_on=None, rule_dirs=[])


def test_large_fleet_audit_is_byte_identical_run_after_run(tmp_path: Path) -> None:
    write(2_000, tmp_path)  # 4 DGX per 2N 63 A rack: every rack is over its 36.2 kW
    outputs = [get_formatter("json")(run_audit([tmp_path], CFG, AS_OF)) for _ in range(2)]
    assert outputs[0] == outputs[1]
    result = run_audit([tmp_path], CFG, AS_OF)
    assert result.summary["error"] == 500 and result.exit_code == 1


def test_input_errors_are_reported_alone_without_rule_findings(tmp_path: Path) -> None:
    write(8, tmp_path)
    (tmp_path / "bad.yaml").write_text("kind: Workloads\nworkloads: []\nextra: 1\n")
    result = run_audit([tmp_path], CFG, AS_OF)
    assert [f.rule for f in result.findings] == ["schema.unknown-field"]
    assert result.exit_code == 2 and result.capacity is None


def test_ignored_rules_produce_no_findings(tmp_path: Path) -> None:
    write(8, tmp_path)
    cfg = settings(Config(), None, select=[], ignore=["power.*"], fail_on=None, rule_dirs=[])
    result = run_audit([tmp_path], cfg, AS_OF)
    assert not any(f.rule.startswith("power.") for f in result.findings)
    assert result.exit_code == 0


def test_a_current_correct_fleet_raises_no_software_support_or_fit_finding() -> None:
    # Driver >= what its CUDA and GPUs need, matching wheels, 24x7 support,
    # enough memory and fabric: any finding here is a false alarm.
    fleet = Path(__file__).resolve().parent / "fixtures" / "fleet"
    result = run_audit([fleet], CFG, AS_OF)
    mine = [f for f in result.findings if f.category in ("compatibility", "support", "workload-fit")]
    assert mine == [] and result.exit_code == 0
