"""Audit a small generated rollout through the whole pipeline, for rule tables.

Many cases go into one inventory (one server, and optionally one workload,
each), so a table of cases costs one audit, not one per case.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from checker.audit import run_audit
from checker.decide.config import Config, settings
from checker.decide.result import AuditResult

AS_OF = dt.date(2027, 1, 15)

# One N rack with feeds far above anything the cases draw: power is not under test.
FACILITY = {
    "kind": "Facility",
    "name": "f1",
    "power": {"it_capacity_kw": 100000},
    "cooling": {"capacity_kw": 100000},
    "racks": [
        {
            "name": "R01",
            "u_height": 100,
            "feeds": [{"name": f"F{i}", "voltage": 415, "amps": 400, "phase": 3} for i in range(40)],
        }
    ],
}


def audit(
    folder: Path,
    servers: Sequence[Mapping[str, Any]],
    workloads: Sequence[Mapping[str, Any]] = (),
    *,
    rollout_date: dt.date | None = dt.date(2027, 2, 1),
    as_of: dt.date = AS_OF,
    config: Config | None = None,
) -> AuditResult:
    """Write the rollout below `folder` and audit it with the built-in rules."""
    doc: dict[str, Any] = {"kind": "Servers", "facility": "f1", "servers": [_server(s) for s in servers]}
    if rollout_date is not None:
        doc["rollout_date"] = rollout_date
    files = {"facility.yaml": FACILITY, "servers.yaml": doc}
    if workloads:
        files["workloads.yaml"] = {"kind": "Workloads", "workloads": list(workloads)}
    for name, value in files.items():
        (folder / name).write_text(yaml.safe_dump(value, sort_keys=False), encoding="utf-8")
    cfg = settings(config or Config(), None, select=[], ignore=[], fail_on=None, rule_dirs=[])
    result = run_audit([folder], cfg, as_of)
    schema = [f"{f.file}:{f.line}: {f.message}" for f in result.findings if f.category == "schema"]
    assert not schema, schema
    return result


def _server(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Rack, height and a generous max draw unless the case gives its own."""
    base: dict[str, Any] = {"rack": "R01", "u_height": 1, "power_w": {"max": 20000}}
    return {**base, **fields}


def rules_by_entity(result: AuditResult, categories: Sequence[str]) -> dict[str, set[str]]:
    """Rule ids that fired per entity id, for the given categories."""
    out: dict[str, set[str]] = {}
    for f in result.findings:
        if f.category in categories:
            out.setdefault(f.entity, set()).add(f.rule)
    return out
