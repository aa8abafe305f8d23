from __future__ import annotations

from pathlib import Path

import pytest

from checker.capacity import FACILITY_COLUMNS, FEED_COLUMNS, RACK_COLUMNS, SERVER_COLUMNS, Column, compute
from checker.entity import entity_id
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


CAPACITY_SPECS = [
    ("facility", FACILITY_COLUMNS),
    ("rack", RACK_COLUMNS),
    ("feed", FEED_COLUMNS),
    ("server", SERVER_COLUMNS),
]


@pytest.mark.parametrize(("kind", "spec"), CAPACITY_SPECS)
def test_every_capacity_figure_is_a_fact_field_with_its_unit(kind: str, spec: tuple[Column, ...]) -> None:
    for column in spec:
        field = REGISTRY[kind].field(column.name)
        assert field is not None, column.name
        assert (field.type, field.unit, field.doc, field.path) == (column.type, column.unit, column.doc, None)


@pytest.mark.parametrize(
    ("kind", "name", "unit"),
    [
        ("rack", "load_kw", "kW"),
        ("rack", "heat_btu_h", "BTU/h"),
        ("rack", "airflow_cfm", "CFM"),
        ("rack", "floor_load_kg_per_m2", "kg/m2"),
        ("facility", "projected_pue", ""),
        ("facility", "energy_mwh_per_year", "MWh"),
        ("server", "psu_side_w", "W"),
        ("server", "power_cap_w", "W"),
        ("server", "inlet_c.max", "degC"),
    ],
)
def test_figures_carry_units(kind: str, name: str, unit: str) -> None:
    field = REGISTRY[kind].field(name)
    assert field is not None and field.unit == unit


def test_capacity_facts_are_the_capacity_rows(facts: dict[str, dict[str, object]]) -> None:
    inv, _ = load([EXAMPLE])
    cap = compute(inv)
    for key, row in zip(cap.racks.keys, cap.racks.rows, strict=True):
        fact = facts[entity_id("rack", key)]
        assert {k: fact[k] for k in row} == row
    assert facts["feed/sh1/B02/B02-A"]["capacity_kw"] == 16.849
    assert facts["server/sh1-b02-inf7"]["psu_side_w"] == 2600


def test_non_rack_mounted_server_has_no_u_fields(facts: dict[str, dict[str, object]]) -> None:
    kit = facts["server/edge-sz1-e01-orin1"]
    assert kit["rack_mounted"] is False
    assert "top_u" not in kit and "position" not in kit and "u_height" not in kit
    assert kit["peak_w"] == 60
