from __future__ import annotations

from pathlib import Path

import pytest

from checker.capacity import compute
from checker.errors import UserError
from checker.facts import REGISTRY, build_all, fact_kind
from checker.inventory.loader import load

EXAMPLE = Path(__file__).resolve().parent.parent / "inventories"


@pytest.fixture(scope="module")
def facts() -> dict[str, dict[str, object]]:
    inv, problems = load([EXAMPLE])
    assert problems == []
    return {f.entity: dict(f.values) for f in build_all(inv, compute(inv))}


def test_every_entity_becomes_one_fact(facts: dict[str, dict[str, object]]) -> None:
    kinds = {entity.split("/")[0] for entity in facts}
    assert kinds == set(REGISTRY)


def test_server_fact_merges_catalog_and_uses_dotted_inventory_names(
    facts: dict[str, dict[str, object]],
) -> None:
    dgx = next(v for k, v in facts.items() if k.startswith("server/") and v.get("model") == "dgx-h100")
    assert dgx["power_w.max"] == 10200 and dgx["gpu.model"] == "h100-sxm-80gb" and dgx["gpu.count"] == 8
    assert isinstance(dgx["support.until"], str)  # dates are ISO strings for the engine


def test_facts_hold_only_registered_fields_and_no_none(facts: dict[str, dict[str, object]]) -> None:
    for entity, values in facts.items():
        known = REGISTRY[entity.split("/")[0]].field_types()
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
