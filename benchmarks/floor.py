"""The floor: a skeleton audit of a benchmarks/fleet.py folder, built from the
same kind of libraries as checker, doing the least an audit must.

    python benchmarks/floor.py FOLDER > findings.json

Issue 25's yardstick for the cold path ("cold 10,000-server audit <= 2.5x the
skeleton", measured in one run by benchmarks/targets.py). It reads every YAML
file with rapidyaml (C++) and the C JSON reader, validates racks and servers
with typed pydantic models (strict numbers, unknown keys refused), sums each
rack's peak draw and each side's PSU capacity with numpy, evaluates three
rules in durable-rules' C engine (the rack over a side's feed, the rack's air
density, servers short of their peak on one side's PSUs) and writes the
findings with the C JSON encoder.

It is a floor, not a second checker: no positions (file, line, column), no
source maps, no defaults or catalog merge, no per-phase or per-feed failover,
no messages from templates, three rules instead of the rulebook. It finds
the same three findings per rack as `checker audit` does on this fleet, which
the script checks, so it cannot go fast by finding nothing.
"""

from __future__ import annotations

import gc
import json
import math
import sys
from pathlib import Path
from typing import Annotated, Literal

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import ryml
from pydantic import BaseModel, ConfigDict, Field, Strict

# durable-rules' C engine and its Python host, as vendored with checker
# (importing them runs no other checker module but the BLAS setting).
from checker._vendor import durable_rules_engine
from checker._vendor.durable import engine as durable

Number = Annotated[float, Strict()]
Count = Annotated[int, Strict(), Field(ge=0)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Feed(_Model):
    name: str
    side: Literal["A", "B"] | None = None
    voltage: Number
    amps: Number
    phase: Literal[1, 3] = 1


class Rack(_Model):
    name: str
    redundancy: Literal["N", "2N"] = "N"
    cooling: Literal["air", "liquid", "rear-door"] = "air"
    feeds: list[Feed]


class Facility(_Model):
    kind: Literal["Facility"]
    name: str
    power: dict[str, Number] = {}
    racks: list[Rack]


class Power(_Model):
    max: Number
    typical: Number | None = None


class Psu(_Model):
    count: Count
    rating_w: Number
    redundant: Count = 0
    efficiency: str | None = None


class Server(_Model):
    name: str
    rack: str
    position: Count
    u_height: Count
    weight_kg: Number
    power_w: Power
    psu: Psu
    gpu: dict[str, str | int]
    memory_gb: Number
    storage: dict[str, str | float]
    network: dict[str, str | int | bool]
    software: dict[str, str]
    support: dict[str, object]
    workload: str


class Servers(_Model):
    kind: Literal["Servers"]
    facility: str
    rollout_date: object = None
    servers: list[Server]


# The three rules, in durable-rules' JSON form (as checker compiles `when`).
CONDITIONS = [
    {"$and": [{"$ex": {"capacity_kw": 1}}, {"$gt": {"load_kw": {"$m": "capacity_kw"}}}]},
    {"$and": [{"cooling": "air"}, {"$gt": {"heat_kw": 40}}]},
    {"$gt": {"side_short": 0}},
]
RULES = ("power.rack-capacity", "cooling.air-density", "power.psu-side-degraded")


class _Host(durable.Host):  # type: ignore[misc]
    def _run(self) -> None:  # no timer threads
        pass


def _never(closure: object) -> None:
    raise AssertionError("actions are drained from the C engine")


def run_ruleset(conditions: list[dict[str, object]], facts: str) -> set[tuple[int, int]]:
    """(condition, fact id) of every match, actions drained from the C engine.

    The drain loop is a copy of checker.evaluate.engine._fired, kept in step with
    it by hand: importing that module would import checker's derive stage, and the
    floor must not measure checker's own start-up."""
    rules = {f"r{i}": {"all": [{"m": c}], "run": _never} for i, c in enumerate(conditions)}
    handle = _Host({"floor": rules}).get_ruleset("floor")._handle
    durable_rules_engine.assert_facts(handle, facts)
    fired = set()
    started = durable_rules_engine.start_action(handle)
    while started:
        _, message, state = started
        while message:
            ((action, matched),) = json.loads(message).items()
            fired.add((int(action[1:]), int(matched["m"]["id"])))
            message = durable_rules_engine.complete_and_start_action(handle, state)
        started = durable_rules_engine.start_action(handle)
    return fired


def _documents(folder: Path) -> list[dict[str, object]]:
    docs = []
    for file in sorted(folder.glob("*.yaml")):
        tree = ryml.parse_in_arena(file.read_bytes())
        tree.resolve()  # anchors and aliases (the fleet's shared feeds)
        doc = json.loads(ryml.emit_json_malloc(tree, tree.root_id()))
        docs.append({k: v for k, v in doc.items() if not k.startswith("x-")})  # anchors only
    return docs


def audit(folder: Path) -> tuple[str, int]:
    """The findings as JSON, and how many racks the fleet has."""
    facility, racks, servers = None, [], []
    for doc in _documents(folder):
        kind = doc.get("kind")
        if kind == "Facility":
            facility = Facility.model_validate(doc)
            racks = facility.racks
        elif kind == "Servers":
            servers.extend(Servers.model_validate(doc).servers)
    assert facility is not None
    index = {r.name: i for i, r in enumerate(racks)}
    n = len(racks)
    rack = np.fromiter((index[s.rack] for s in servers), np.intp, len(servers))
    peak = np.fromiter((s.power_w.max for s in servers), np.float64, len(servers))
    side_w = np.fromiter(((s.psu.count // 2) * s.psu.rating_w for s in servers), np.float64, len(servers))
    load_kw = np.bincount(rack, weights=peak, minlength=n) / 1000
    short = np.bincount(rack, weights=side_w < peak, minlength=n)
    # A side's capacity: its feeds at 80 % (three-phase: V x A x sqrt 3).
    capacity_kw = np.zeros(n)
    for i, r in enumerate(racks):
        side = [f for f in r.feeds if f.side in (None, "A")]
        volt_amps = sum(f.voltage * f.amps * (math.sqrt(3) if f.phase == 3 else 1) for f in side)
        capacity_kw[i] = volt_amps * 0.8 / 1000
    facts = [
        {"id": i, "capacity_kw": capacity_kw[i], "load_kw": load_kw[i], "heat_kw": load_kw[i],
         "cooling": r.cooling, "side_short": int(short[i])}
        for i, r in enumerate(racks)
    ]
    fired = sorted(run_ruleset(CONDITIONS, json.dumps(facts)), key=lambda hit: (hit[1], hit[0]))
    findings = [
        {"rule": RULES[rule], "entity": f"rack/{facility.name}/{racks[i].name}",
         "message": f"rack {racks[i].name}: {load_kw[i]:.1f} kW against {capacity_kw[i]:.1f} kW a side"}
        for rule, i in fired
    ]
    return json.dumps({"findings": findings}), n  # the C encoder (indent would take Python's)


def main(argv: list[str]) -> int:
    gc.disable()  # as checker runs every command: the inventory holds no cycles
    text, racks = audit(Path(argv[0]))
    found = text.count('"rule"')
    if found != 3 * racks:  # what checker finds on this fleet: three findings a rack
        raise SystemExit(f"floor: {found} findings for {racks} racks, not {3 * racks}")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
