from __future__ import annotations

import copy
import datetime as dt
import json
import pickle
from pathlib import Path

import numpy as np
import pytest

from benchmarks.fleet import write
from checker.audit import run_audit
from checker.core.entity import entity_id
from checker.core.errors import UserError
from checker.decide.config import Config, settings
from checker.derive import facts as facts_module
from checker.derive.capacity import (
    FACILITY_COLUMNS,
    FEED_COLUMNS,
    RACK_COLUMNS,
    SERVER_COLUMNS,
    Column,
    compute,
)
from checker.derive.facts import REGISTRY, Context, Fact, build_all, fact_kind
from checker.derive.rows import Header, Row
from checker.load.build import load
from tests.conftest import AS_OF, CliRunner, Writer, summary
from tests.rollout import audit, rules_by_entity

EXAMPLE = Path(__file__).resolve().parents[2] / "inventories"


@pytest.fixture(scope="module")
def facts() -> list[tuple[str, str, dict[str, object]]]:
    inv, problems = load([EXAMPLE])
    assert problems == []
    built = build_all(inv, compute(inv), Context(dt.date(2027, 1, 15)))
    return [(f.kind, f.entity, dict(f.values)) for f in built]


# Kinds whose facts are about a part of a server and name the server.
OF_A_SERVER = {"framework", "container"}


def test_every_entity_becomes_one_fact_of_its_kind(facts: list[tuple[str, str, dict[str, object]]]) -> None:
    own = [(kind, entity) for kind, entity, _ in facts if kind not in OF_A_SERVER]
    # Every kind has facts somewhere in the example or the fixtures: tests/derive/test_fields.py.
    assert {kind for kind, _ in own} <= set(REGISTRY) - OF_A_SERVER
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


@pytest.fixture
def by_entity(facts: list[tuple[str, str, dict[str, object]]]) -> dict[str, dict[str, object]]:
    """The example's facts of the entity kinds (frameworks and containers share their server's id)."""
    return {entity: values for kind, entity, values in facts if kind not in OF_A_SERVER}


def test_capacity_facts_are_the_capacity_rows(by_entity: dict[str, dict[str, object]]) -> None:
    facts = by_entity
    inv, _ = load([EXAMPLE])
    cap = compute(inv)
    for key, row in zip(cap.racks.keys, cap.racks.rows, strict=True):
        fact = facts[entity_id("rack", key)]
        assert {k: fact[k] for k in row} == row
    assert facts["feed/sh1/B02/B02-A"]["capacity_kw"] == 16.849
    assert facts["server/sh1-b02-inf7"]["psu_side_w"] == 2600


def test_non_rack_mounted_server_has_no_u_fields(by_entity: dict[str, dict[str, object]]) -> None:
    kit = by_entity["server/edge-sz1-e01-orin1"]
    assert kit["rack_mounted"] is False
    assert "top_u" not in kit and "position" not in kit and "u_height" not in kit
    assert kit["peak_w"] == 60


# ---------------------------------------------------------------- support, through the rules
SUPPORT_CASES: list[tuple[str, dict[str, object], set[str]]] = [
    ("lapsed", {"level": "24x7", "until": dt.date(2026, 12, 31)}, {"support.ends-before-rollout"}),
    ("ends-soon", {"level": "24x7", "until": dt.date(2027, 5, 12)}, {"support.ends-soon"}),
    ("ends-on-rollout-day", {"level": "24x7", "until": dt.date(2027, 2, 1)}, {"support.ends-soon"}),
    ("covered", {"level": "24x7", "until": dt.date(2028, 2, 1)}, set()),
    ("no-end-date", {"level": "24x7"}, {"support.no-end-date"}),
    ("none", {"level": "none"}, {"support.none-on-gpu-server"}),
    ("nbd", {"level": "nbd", "until": dt.date(2030, 1, 1)}, {"support.level-24x7"}),
]


def _support_servers() -> list[dict[str, object]]:
    return [{"name": n, "gpu": {"model": "l4", "count": 1}, "support": s} for n, s, _ in SUPPORT_CASES]


@pytest.fixture(scope="module")
def support_fired(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    return rules_by_entity(audit(tmp_path_factory.mktemp("support"), _support_servers()), ["support"])


@pytest.mark.parametrize(("name", "rules"), [pytest.param(n, r, id=n) for n, _, r in SUPPORT_CASES])
def test_support_rules_against_the_rollout_date(
    support_fired: dict[str, set[str]], name: str, rules: set[str]
) -> None:
    assert support_fired.get(f"server/{name}", set()) == rules


def test_without_rollout_date_support_is_checked_as_of_the_audit_date(tmp_path: Path) -> None:
    support = {"level": "24x7", "until": "2027-01-01"}
    server = {"name": "s1", "gpu": {"model": "l4", "count": 1}, "support": support}
    result = audit(tmp_path, [server], rollout_date=None, as_of=dt.date(2027, 1, 15))
    [finding] = [f for f in result.findings if f.category == "support"]
    assert finding.rule == "support.ends-before-rollout"
    assert finding.message == (
        "server s1: support ends 2027-01-01, before the rollout on 2027-01-15 "
        "(the audit date: no rollout_date)"
    )


def test_support_horizon_comes_from_the_config(tmp_path: Path) -> None:
    support = {"level": "24x7", "until": "2027-05-12"}
    server = {"name": "s1", "gpu": {"model": "l4", "count": 1}, "support": support}
    assert rules_by_entity(audit(tmp_path, [server]), ["support"]) == {"server/s1": {"support.ends-soon"}}
    short = Config(support_horizon_days=90)
    assert rules_by_entity(audit(tmp_path, [server], config=short), ["support"]) == {}


# ---------------------------------------------------------------- rows: what facts cost in memory
# A fact's values are a Row: one tuple of cells under a header its kind shares,
# not a dict per entity; values a fleet repeats are one object, not one per
# server (docs/performance.md, "Memory").


def _fleet_facts(folder: Path, count: int = 40) -> list[Fact]:
    write(count, folder)
    inv, problems = load([folder])
    assert problems == []
    return build_all(inv, compute(inv), Context(dt.date(2027, 1, 15)))


def _as_lists(built: list[Fact]) -> list[tuple[str, str, list[tuple[str, object]], str]]:
    # Items in order: the order of fields is what messages and reports read.
    return [(f.kind, f.entity, list(f.values.items()), f.file) for f in built]


def test_a_row_reads_as_the_dict_of_its_present_values() -> None:
    row = Row(Header(["a", "b", "c"]), (1, None, "x"))
    assert dict(row) == {"a": 1, "c": "x"} == row and list(row) == ["a", "c"] and len(row) == 2
    assert list(row.items()) == [("a", 1), ("c", "x")] and list(row.values()) == [1, "x"]
    assert "a" in row and "b" not in row and "z" not in row and 1 not in row  # type: ignore[comparison-overlap]
    assert row.get("b") is None and row.get("z", 5) == 5 and row.get("c") == "x"
    with pytest.raises(KeyError):
        row["b"]
    with pytest.raises(KeyError):
        row["z"]


def test_a_row_cannot_be_changed() -> None:
    row = Row(Header(["a"]), (1,))
    with pytest.raises(AttributeError):
        row.cells = (2,)
    with pytest.raises(AttributeError):
        del row.header
    with pytest.raises(TypeError):
        row["a"] = 2  # type: ignore[index]
    assert dict(row) == {"a": 1}
    assert copy.deepcopy(row) == pickle.loads(pickle.dumps(row)) == copy.copy(row) == row


def test_facts_are_rows_under_one_header_per_kind_in_every_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(facts_module, "ROWS_AT_ONCE", 7)  # 40 servers in 6 parts
    built = _fleet_facts(tmp_path)
    for kind in {f.kind for f in built}:
        rows = [f.values for f in built if f.kind == kind]
        assert {type(r) for r in rows} == {Row}, kind  # no dict per entity
        assert len({id(r.header) for r in rows if isinstance(r, Row)}) == 1, kind
    assert len([f for f in built if f.kind == "server"]) == 40


def test_facts_built_in_parts_are_the_facts_built_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # The example's servers differ in which fields they have, so small parts
    # have headers of their own: the values must not depend on that.
    inv, _ = load([EXAMPLE])
    whole = _as_lists(build_all(inv, compute(inv), Context(dt.date(2027, 1, 15))))
    for size in (1, 2, 3):
        monkeypatch.setattr(facts_module, "ROWS_AT_ONCE", size)
        assert _as_lists(build_all(inv, compute(inv), Context(dt.date(2027, 1, 15)))) == whole


@pytest.mark.parametrize(
    "name",
    [
        "gpu.vendor",  # catalog, per GPU set-up
        "software.driver_num",  # knowledge tables, per software stack
        "support.checked_against",  # a date, as ISO text
        "support.days_after_rollout",  # an int > 256 (CPython shares only small ones)
        "support.until",  # a model date, as ISO text
        "rollout_date",
        "power_w.max",  # a whole float in the model, an int in the fact
        "workload_params_b",
    ],
)
def test_values_a_fleet_repeats_are_one_object(tmp_path: Path, name: str) -> None:
    servers = [f.values for f in _fleet_facts(tmp_path) if f.kind == "server"]
    values = [v[name] for v in servers]
    assert len(values) == 40 and len({id(v) for v in values}) == len({repr(v) for v in values})


@pytest.mark.parametrize(
    ("column", "type_", "expected"),
    [
        ([1.0, 1.0, 2.5, None, 3], "number", [1, 1, 2.5, None, 3]),
        ([-0.0, 0.0, 1e20], "number", [0, 0, 10**20]),
        ([True, 1.0, False, 0.0], "number", [True, 1, False, 0]),
        ([np.float64(2.0), np.float64(2.5)], "number", [2, np.float64(2.5)]),
        (["1.0", 7], "number", ["1.0", 7]),
        ([dt.date(2027, 1, 1), None, dt.date(2027, 1, 1)], "date", ["2027-01-01", None, "2027-01-01"]),
        ([dt.datetime(2027, 1, 1, 12), dt.date(2027, 1, 1)], "date", ["2027-01-01T12:00:00", "2027-01-01"]),
        ([1.0, "x"], "string", [1.0, "x"]),
    ],
)
def test_values_are_normalised_with_their_types(
    column: list[object], type_: str, expected: list[object]
) -> None:
    normal = facts_module._normal(column, type_)  # type: ignore[arg-type]
    assert normal == expected and list(map(type, normal)) == list(map(type, expected))


def test_nan_stays_nan_and_equal_floats_share_one_object() -> None:
    nan = float("nan")
    first, again = float("2.5"), float("2.5")
    normal = facts_module._normal([nan, first, again, 1.0], "number")
    assert normal[0] is nan and normal[1] is normal[2] and normal[3] == 1 and type(normal[3]) is int


@pytest.mark.parametrize(
    ("altitude", "klass", "inlet", "derating", "fired"),
    [
        # ASHRAE A1/A2: 1 degC per 300 m above 900 m. 1,800 m: (1,800 - 900) / 300 = 3 degC,
        # so A2's 35 degC maximum is 32 degC there and a 34 degC design fails.
        (1800, "A2", 34, 3.0, {"cooling.inlet-allowable"}),
        (1800, "A2", 32, 3.0, set()),
        # 2,100 m: 4 degC; A1's 32 degC is 28 degC.
        (2100, "A1", 29, 4.0, {"cooling.inlet-allowable"}),
        (1050, "A1", 31.5, 0.5, set()),
        # At or below 900 m nothing changes: 34 degC is inside A2's 35.
        (900, "A2", 34, 0.0, set()),
        (None, "A2", 34, 0.0, set()),
        # A3 above 900 m: its rate is not in the tables, and the check says so.
        (2000, "A3", 38, None, {"cooling.altitude-derating-unknown"}),
        (600, "A3", 38, 0.0, set()),
    ],
)
def test_the_allowable_inlet_maximum_drops_with_altitude(
    cli: CliRunner, workdir: Writer, altitude: float | None, klass: str, inlet: float,
    derating: float | None, fired: set[str],
) -> None:
    where = f"altitude_m: {altitude}\n" if altitude is not None else ""
    plant = f"cooling: {{capacity_kw: 100, inlet_c: {inlet}, ashrae_class: {klass}}}\n"
    workdir("facility.yaml", f"kind: Facility\nname: f1\n{where}{plant}racks: []\n")
    cfg = settings(Config(), None, select=[], ignore=[], fail_on=None, rule_dirs=[])
    result = run_audit([Path(".")], cfg, dt.date(2027, 1, 15))
    facility = next(f for f in result.facts if f.kind == "facility")
    assert facility.values.get("cooling.altitude_derating_c") == derating
    run = cli("audit", ".", *AS_OF, "--select", "cooling.inlet-allowable", "--select", "cooling.altitude-*",
              "--format", "json")
    assert {f["rule"] for f in json.loads(run.out)["findings"]} == fired


def test_cli_an_a2_design_at_altitude_fails_on_its_derated_maximum(cli: CliRunner, in_fixtures: Path) -> None:
    run = cli("audit", "altitude", *AS_OF, "--select", "cooling.inlet-allowable")
    assert (run.code, run.lines, run.err) == (1, [
        "altitude/facility.yaml:6:29: error cooling.inlet-allowable facility f1 is designed for 34 °C inlet"
        " air, outside the allowable range of ASHRAE class A2 (its maximum 3.0 °C lower at 1800 m)",
        summary(error=1),
    ], "")


@pytest.mark.parametrize(
    ("cells", "kept"),
    [
        ([None, None, None], False),
        ([], False),
        ([None, None, 0], True),  # a zero, False or "" is a value: only None is absent
        ([False, None], True),
        (["", None], True),
        ([np.nan, None], True),
        (["x", None, None], True),
    ],
)
def test_a_column_is_kept_when_any_entity_has_a_value(cells: list[object], kept: bool) -> None:
    header: dict[tuple[str, ...], Header] = {}
    rows = facts_module._assemble(["a", "b"], [cells, ["y"] * len(cells)], len(cells), header)
    assert facts_module._any_value(cells) is kept
    assert all(row.header.names == (("a", "b") if kept else ("b",)) for row in rows)


def test_a_kinds_field_types_are_made_once_and_read_only() -> None:
    kind = fact_kind("server")
    types = kind.field_types()
    assert types is kind.field_types() and types["gpu.count"] == "number"
    with pytest.raises(TypeError):
        types["gpu.count"] = "string"  # type: ignore[index]


def test_rows_know_from_their_columns_whether_a_cell_is_nan() -> None:
    """_assemble asks each column whether it holds a NaN: rows of columns without
    one say so (Row.nan False, never asked again); with one, each row is asked."""
    rows = facts_module._assemble(["a", "b"], [[1, 2], ["x", float("nan")]], 2, {})
    assert [row.nan for row in rows] == [None, None]
    assert [row.has_nan for row in rows] == [False, True]
    clean = facts_module._assemble(["a", "b"], [[1.5, None], ["x", "y"]], 2, {})
    assert [row.nan for row in clean] == [False, False]
