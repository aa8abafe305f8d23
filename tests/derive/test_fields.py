"""Fact fields: every field a kind declares is computed for some entity of the
example rollout and the fixtures, and a value computed under a name no field
declares stops the run instead of vanishing from the facts."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import pytest

from checker.derive import software
from checker.derive.capacity import compute
from checker.derive.facts import REGISTRY, Context, UndeclaredField, build_all
from checker.derive.knowledge import TABLE_KINDS, builtin, extend
from checker.load.build import load

ROOT = Path(__file__).resolve().parents[2]
CORPUS = [
    ROOT / "inventories",
    *sorted(p for p in (ROOT / "examples").iterdir() if p.is_dir()),
    *sorted(p for p in (ROOT / "tests" / "fixtures").iterdir() if p.is_dir()),
]


def _facts(folder: Path) -> list[Any]:
    inv, problems = load([folder], tables=list(TABLE_KINDS))
    knowledge = extend(builtin(), inv.tables)  # a fixture's own knowledge rows (fixtures/knowledge)
    if problems or knowledge.problems:  # fixtures of input errors: no facts
        return []
    return build_all(inv, compute(inv), Context(dt.date(2027, 1, 15), knowledge=knowledge.knowledge))


def test_every_declared_field_is_computed_somewhere() -> None:
    seen: dict[str, set[str]] = {kind: set() for kind in REGISTRY}
    for folder in CORPUS:
        for fact in _facts(folder):
            # A field no entity has a value for is left out of the rows.
            seen[fact.kind].update(fact.values)
    never = {kind: [f.name for f in k.fields if f.name not in seen[kind]] for kind, k in REGISTRY.items()}
    assert never == {kind: [] for kind in REGISTRY}


@pytest.mark.parametrize("kind", list(REGISTRY))
def test_field_names_are_unique(kind: str) -> None:
    names = [f.name for f in REGISTRY[kind].fields]
    assert len(names) == len(set(names))


def test_a_computed_value_without_a_declared_field_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    original = software.gpu_values
    monkeypatch.setattr(software, "gpu_values", lambda *a: {**original(*a), "gpu.rack_units": 2})
    message = re.escape("fact kind server: computed but not declared: gpu.rack_units")
    with pytest.raises(UndeclaredField, match=message):
        _facts(ROOT / "tests" / "fixtures" / "minimal")
