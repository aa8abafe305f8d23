from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from checker.derive.knowledge import _FILES, table_models
from checker.load.build import CATALOG_FILES, KINDS
from checker.load.schema import inventory_schema


def test_schema_covers_every_kind_and_lets_servers_lean_on_defaults() -> None:
    schema = inventory_schema()
    json.dumps(schema)  # serialisable as is
    kinds = {
        d["properties"]["kind"]["const"]
        for d in schema["$defs"].values()
        if "kind" in d.get("properties", {})
    }
    assert kinds == set(KINDS)
    servers = schema["$defs"]["ServersDoc"]["properties"]["servers"]["items"]
    assert servers["required"] == ["name"] and servers["additionalProperties"] is False


# ---------------------------------------------------------------- editors validate real files with it
ROOT = Path(__file__).resolve().parents[2]


class _EditorLoader(yaml.SafeLoader):
    """What an editor sees: YAML with merge keys, dates left as strings (JSON has no dates)."""


_EditorLoader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _documents(path: Path) -> list[Any]:
    return [d for d in yaml.load_all(path.read_text(encoding="utf-8"), Loader=_EditorLoader) if d]


EXAMPLES = sorted([
    *(ROOT / "inventories").rglob("*.yaml"),
    *(ROOT / "rules" / "knowledge" / name for name in CATALOG_FILES),
    # The knowledge tables: a team's own documents of their kinds sit among the inventories.
    *(ROOT / "rules" / "knowledge" / file for file, _ in _FILES.values()),
    ROOT / "tests" / "fixtures" / "knowledge" / "knowledge.yaml",
    *(ROOT / "templates" / "init" / "inventories").glob("*.yaml"),
    # The cooling plant unit by unit, CDUs and liquid fractions, floor ratings.
    *(ROOT / "tests" / "fixtures" / name / "facility.yaml" for name in ("plant", "liquid", "floor")),
    *(ROOT / "tests" / "fixtures" / name / "servers.yaml" for name in ("plant", "liquid", "floor")),
])


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_schema_accepts_every_example_inventory(path: Path) -> None:
    validator = jsonschema.Draft202012Validator(inventory_schema(table_models()))
    for doc in _documents(path):
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]
        assert not errors, errors


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        ({"kind": "Facility", "name": "f", "racks": [{"name": "R", "u_hieght": 42}]}, ["racks", 0]),
        ({"kind": "Servers", "facility": "f", "servers": [{"name": "s", "memroy_gb": 512}]}, ["servers", 0]),
        ({"kind": "Facility", "name": "f", "cooling": {"units": [{"name": "CH1", "capacity_kv": 400}]}},
         ["cooling", "units", 0]),
        ({"kind": "Facility", "name": "f", "cdus": [{"name": "C", "capacity_kw": 1, "row": ["L"]}]},
         ["cdus", 0]),
        ({"kind": "Workloads", "workloads": [
            {"name": "w", "task": "inference", "params_b": 1, "precision": "bf16", "framwork": "pytorch"},
        ]}, ["workloads", 0]),
        ({"kind": "DriverBranches", "as_of": "2027-01-01", "sources": {"x": "x"},
          "branches": [{"branch": 640, "end_of_life": "2028-03", "source": ["x"]}]}, ["branches", 0]),
    ],
)
def test_schema_rejects_a_misspelt_field(doc: dict[str, Any], where: list[Any]) -> None:
    errors = list(jsonschema.Draft202012Validator(inventory_schema(table_models())).iter_errors(doc))
    assert errors
    assert any("Additional properties are not allowed" in e.message for e in _leaves(errors))


def _leaves(errors: list[Any]) -> list[Any]:
    out = []
    for e in errors:
        out += _leaves(list(e.context)) if e.context else [e]
    return out
