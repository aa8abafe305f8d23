from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from checker.capacity import compute
from checker.errors import UserError
from checker.facts import REGISTRY, Context, build_all, fact_kind
from checker.inventory.loader import load

EXAMPLE = Path(__file__).resolve().parent.parent / "inventories"


@pytest.fixture(scope="module")
def facts() -> list[tuple[str, str, dict[str, object]]]:
    inv, problems = load([EXAMPLE])
    assert problems == []
    built = build_all(inv, compute(inv), Context(dt.date(2027, 1, 15)))
    return [(f.kind, f.entity, dict(f.values)) for f in built]


def test_every_entity_becomes_one_fact_of_its_kind(facts: list[tuple[str, str, dict[str, object]]]) -> None:
    own = [(kind, entity) for kind, entity, _ in facts if kind != "framework"]
    assert {kind for kind, _ in own} == set(REGISTRY) - {"framework"}
    assert all(entity.startswith(f"{kind}/") for kind, entity in own)
    assert len(own) == len(set(own))


def test_one_framework_fact_per_installed_framework(facts: list[tuple[str, str, dict[str, object]]]) -> None:
    installed = [(entity, v["name"]) for kind, entity, v in facts if kind == "framework"]
    assert len(installed) == len(set(installed)) and installed
    assert all(entity.startswith("server/") for entity, _ in installed)


def test_server_fact_merges_catalog_and_uses_dotted_inventory_names(
    facts: list[tuple[str, str, dict[str, object]]],
) -> None:
    dgx = next(v for kind, _, v in facts if kind == "server" and v.get("model") == "dgx-h100")
    assert dgx["power_w.max"] == 10200 and dgx["gpu.model"] == "h100-sxm-80gb" and dgx["gpu.count"] == 8
    assert isinstance(dgx["support.until"], str)  # dates are ISO strings for the engine


def test_facts_hold_only_registered_fields_and_no_none(
    facts: list[tuple[str, str, dict[str, object]]],
) -> None:
    for kind, entity, values in facts:
        known = REGISTRY[kind].field_types()
        assert set(values) <= set(known), entity
        assert None not in values.values()


@pytest.mark.parametrize("kind", sorted(REGISTRY))
def test_every_field_is_documented_and_typed(kind: str) -> None:
    for f in REGISTRY[kind].fields:
        assert f.doc and f.type in ("number", "string", "boolean", "date")
        if f.path:
            assert REGISTRY[kind].has_path(f.name), f.name


def test_unknown_kind_suggests() -> None:
    with pytest.raises(UserError, match="did you mean 'rack'"):
        fact_kind("racks")
