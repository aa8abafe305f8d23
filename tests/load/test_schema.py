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


COOLING_FIXTURES = ("plant", "liquid", "floor", "cdu-units")
EXAMPLES = sorted([
    *(ROOT / "inventories").rglob("*.yaml"),
    *(ROOT / "rules" / "knowledge" / name for name in CATALOG_FILES),
    # The knowledge tables: a team's own documents of their kinds sit among the inventories.
    *(ROOT / "rules" / "knowledge" / file for file, _ in _FILES.values()),
    ROOT / "tests" / "fixtures" / "knowledge" / "knowledge.yaml",
    *(ROOT / "templates" / "init" / "inventories").glob("*.yaml"),
    # The cooling plant unit by unit, CDUs and liquid fractions, floor ratings.
    *(ROOT / "tests" / "fixtures" / name / "facility.yaml" for name in COOLING_FIXTURES),
    *(ROOT / "tests" / "fixtures" / name / "servers.yaml" for name in COOLING_FIXTURES),
])


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_schema_accepts_every_example_inventory(path: Path) -> None:
    validator = jsonschema.Draft202012Validator(inventory_schema(table_models()))
    for doc in _documents(path):
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]
        assert not errors, errors


TYPOS = [
    ({"kind": "Facility", "name": "f", "racks": [{"name": "R", "u_hieght": 42}]}, ["racks", 0], "u_hieght"),
    ({"kind": "Servers", "facility": "f", "servers": [{"name": "s", "memroy_gb": 512}]}, ["servers", 0],
     "memroy_gb"),
    ({"kind": "Facility", "name": "f", "cooling": {"units": [{"name": "CH1", "capacity_kw": 400}],
                                                  "redundncy": "N+1"}}, ["cooling"], "redundncy"),
    ({"kind": "Facility", "name": "f", "cdus": [{"name": "C", "capacity_kw": 1, "row": ["L"]}]},
     ["cdus", 0], "row"),
    ({"kind": "Workloads", "workloads": [
        {"name": "w", "task": "inference", "params_b": 1, "precision": "bf16", "framwork": "pytorch"},
    ]}, ["workloads", 0], "framwork"),
    ({"kind": "Facility", "name": "f", "power": {"it_capacity_kw": 100, "ups": None, "generatrs": {}}},
     ["power"], "generatrs"),
    ({"kind": "Servers", "facility": "f", "servers": [],
      "defaults": {"gpu": {"model": "H100-SXM", "count": 8, "nvlnk": True}}},
     ["defaults", "gpu"], "nvlnk"),
    ({"kind": "Waivers", "waivers": [{"rule": "r", "entity": "e", "reason": "a known overload", "owner": "o",
                                      "expires": "2027-01-01", "ownr": "p"}]}, ["waivers", 0], "ownr"),
    # A knowledge table's kind, which inventories may hold too (docs/knowledge.md).
    ({"kind": "DriverBranches", "as_of": "2027-01-01", "sources": {"x": "x"},
      "branches": [{"branch": 640, "end_of_life": "2028-03", "source": ["x"]}]},
     ["branches", 0], "end_of_life"),
]


@pytest.mark.parametrize(("doc", "where", "typo"), TYPOS, ids=[typo for *_, typo in TYPOS])
def test_a_misspelt_field_is_exactly_one_error_that_names_it(
    doc: dict[str, Any], where: list[Any], typo: str
) -> None:
    """Not one error per kind the document is not: the kind picks its schema (if/then)."""
    errors = list(jsonschema.Draft202012Validator(inventory_schema(table_models())).iter_errors(doc))
    assert [(list(e.absolute_path), e.message) for e in errors] == [
        (where, f"Additional properties are not allowed ({typo!r} was unexpected)")]


@pytest.mark.parametrize(
    ("doc", "where", "message"),
    [
        ({"kind": "Facilty", "name": "f"}, ["kind"], "'Facilty' is not one of ['ContainerImages',"
         " 'CudaReleases', 'DriverBranches', 'Facility', 'FitModel', 'Frameworks', 'GpuModels',"
         " 'InferenceEngines', 'JaxReleases', 'LanguageModels', 'RocmReleases', 'ServerModels', 'Servers',"
         " 'Waivers', 'Workloads']"),
        ({"name": "f"}, [], "'kind' is a required property"),
        ({"kind": "Facility", "name": "f", "cooling": "lots"}, ["cooling"],
         "'lots' is not of type 'object', 'null'"),
        ({"kind": "Facility", "name": "f", "cooling": {"units": "2"}}, ["cooling", "units"],
         "'2' is not of type 'integer', 'array'"),
        ({"kind": "Facility", "name": "f", "racks": [{"name": "R", "u_height": "42"}]},
         ["racks", 0, "u_height"],
         "'42' is not of type 'integer'"),
    ],
    ids=["kind", "no-kind", "null-or-object", "count-or-list", "type"],
)
def test_a_wrong_kind_or_type_is_one_error(doc: dict[str, Any], where: list[Any], message: str) -> None:
    errors = list(jsonschema.Draft202012Validator(inventory_schema(table_models())).iter_errors(doc))
    assert [(list(e.absolute_path), e.message) for e in errors] == [(where, message)]


def test_the_schema_is_valid_json_schema_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(inventory_schema(table_models()))


def _properties(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    found = []
    if isinstance(node, dict):
        found += [(f"{path}/{name}", prop) for name, prop in node.get("properties", {}).items()]
        for key, value in node.items():
            found += _properties(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _properties(value, f"{path}/{i}")
    return found


def test_every_field_of_every_kind_is_described() -> None:
    """Editors show it on hover: a new field is described in checker/load/fielddocs.py."""
    props = _properties(inventory_schema(table_models()))
    assert len(props) > 250
    assert [path for path, prop in props if not prop.get("description")] == []


@pytest.mark.parametrize(
    ("definition", "field", "description"),
    [
        ("Feed", "amps", "the breaker rating (A)"),
        ("Feed", "voltage", "the feed's voltage (line to line for three-phase) (V)"),
        ("UpsBlock", "capacity_kw", "the block's output rating (kW)"),
        ("Facility", "floor_max_kg_per_m2", "the raised floor's distributed load rating (kg/m²)"),
        ("PueModel", "cooling_kw_per_it_kw", "cooling power for each kW of IT load (kW per kW of IT load)"),
        ("FacilityCooling", "water_supply_c", "the facility water's design supply temperature (°C)"),
        ("PowerDraw", "max", "peak (nameplate) draw, what breakers and feeds are sized for (W)"),
        ("Workload", "params_b", "its parameters (billions)"),
        ("GpuModel", "memory_gb", "memory per GPU (GB)"),
        # A knowledge table's row: `cuda` of a release, not the host's.
        ("CudaRelease", "cuda", "the CUDA toolkit release"),
        ("Runtime", "overhead_gb", "the CUDA context and kernels on each GPU (GB)"),
        ("Rack", "name", "its name, unique among its kind; 1-200 characters, no spaces or '/' (it is part"
         " of entity ids)"),
    ],
)
def test_a_field_is_described_with_its_unit(definition: str, field: str, description: str) -> None:
    defs = inventory_schema(table_models())["$defs"]
    assert defs[definition]["properties"][field]["description"] == description


def test_check_jsonschema_reports_the_one_typo(tmp_path: Path) -> None:
    """The validator CI and pre-commit use (check-jsonschema): one error, where the
    typo is, not "not valid under any of the given schemas" and 18 more."""
    import subprocess
    import sys

    (tmp_path / "schema.json").write_text(json.dumps(inventory_schema(table_models())))
    (tmp_path / "facility.yaml").write_text(
        "kind: Facility\nname: f1\nracks:\n  - name: R01\n    u_hieght: 42\n"
    )
    command = [sys.executable, "-m", "check_jsonschema", "--schemafile", str(tmp_path / "schema.json"),
               str(tmp_path / "facility.yaml")]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    errors = [line for line in done.stdout.splitlines() if "::$" in line]
    assert errors == [f"  {tmp_path / 'facility.yaml'}::$.racks[0]: Additional properties are not allowed"
                      " ('u_hieght' was unexpected)"]
    assert "other errors" not in done.stdout
