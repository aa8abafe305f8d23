"""Inventory models: field names, types and ranges of the inventory contract (inventories/README.md)."""

from __future__ import annotations

from typing import Any, get_args

import pytest
from pydantic import BaseModel, ValidationError

from checker.load import models as m
from checker.load.build import KINDS
from checker.source.parse import WrittenFloat

FEED = {"name": "A", "voltage": 230, "amps": 32}
WORKLOAD = {"name": "w", "task": "training", "params_b": 7, "precision": "bf16"}
GPU = {"name": "g", "vendor": "NVIDIA", "memory_gb": 80, "source": "datasheet"}


def test_the_kinds_of_the_contract() -> None:
    # The contract's kinds (docs/architecture.md); it is only ever extended.
    assert list(KINDS)[:6] == ["Facility", "Servers", "Workloads", "Waivers", "GpuModels", "ServerModels"]


@pytest.mark.parametrize("name", list(KINDS))
def test_a_kind_row_names_its_own_model(name: str) -> None:
    # The `kind:` a model accepts is the name its row is filed under.
    assert get_args(KINDS[name].model.model_fields["kind"].annotation) == (name,)


# (id, model, input, field -> expected value)
VALID: list[tuple[str, type[BaseModel], dict[str, Any], dict[str, Any]]] = [
    ("feed-defaults", m.Feed, FEED, {"phase": 1, "max_utilization": 80, "power_factor": 1.0, "side": None}),
    ("rack-defaults", m.Rack, {"name": "R01"},
     {"u_height": 42, "footprint_m2": 0.72, "cooling": "air", "redundancy": "N", "feeds": []}),
    ("int-version-becomes-text", m.Software, {"cuda": 12}, {"cuda": "12"}),
    ("quoted-version", m.Software, {"driver": "535.129.03", "cuda": "12.10"}, {"cuda": "12.10"}),
    ("wheel-variant", m.Software, {"frameworks": {"pytorch": "2.3.1+cu121"}},
     {"frameworks": {"pytorch": m.FrameworkInstall(version="2.3.1+cu121")}}),
    ("framework-source", m.Software, {"frameworks": {"torch": {"version": "2.9.1", "source": "conda-forge"}}},
     {"frameworks": {"torch": m.FrameworkInstall(version="2.9.1", source="conda-forge")}}),
    ("cpu-arch", m.Cpu, {"arch": "aarch64"}, {"arch": "aarch64"}),
    ("raid-int-becomes-text", m.Storage, {"raid": 1}, {"raid": "1"}),
    ("date-from-text", m.Support, {"level": "24x7", "until": "2029-12-31"}, {"level": "24x7"}),
    ("cooling-defaults", m.FacilityCooling, {"capacity_kw": 100}, {"units": 1, "redundancy": "N"}),
    ("power-basis", m.FacilityPower, {"it_capacity_kw": 100}, {"basis": "max"}),
    ("typical-equal-max", m.PowerDraw, {"max": 100, "typical": 100}, {"typical": 100}),
    ("verified-catalog", m.GpuModel, GPU, {"verified": True, "forward_compatible": True}),
    ("unverified-catalog", m.GpuModel, {**GPU, "verified": False, "unverified": ["tdp_w"]},
     {"unverified": ["tdp_w"]}),
]


@pytest.mark.parametrize(("model", "data", "expected"), [pytest.param(*c[1:], id=c[0]) for c in VALID])
def test_valid(model: type[BaseModel], data: dict[str, Any], expected: dict[str, Any]) -> None:
    value = model.model_validate(data)
    for name, want in expected.items():
        assert getattr(value, name) == want


# (id, model, input, error location, pydantic error type)
INVALID: list[tuple[str, type[BaseModel], dict[str, Any], tuple[str | int, ...], str]] = [
    ("unknown-field", m.Feed, {**FEED, "amp": 32}, ("amp",), "extra_forbidden"),
    ("missing-amps", m.Feed, {"name": "A", "voltage": 230}, ("amps",), "missing"),
    ("negative-voltage", m.Feed, {**FEED, "voltage": -230}, ("voltage",), "greater_than"),
    ("zero-amps", m.Feed, {**FEED, "amps": 0}, ("amps",), "greater_than"),
    ("amps-text", m.Feed, {**FEED, "amps": "lots"}, ("amps",), "float_type"),  # strict: text is no number
    ("amps-quoted-number", m.Feed, {**FEED, "amps": "32"}, ("amps",), "float_type"),
    ("amps-boolean", m.Feed, {**FEED, "amps": True}, ("amps",), "float_type"),
    ("two-phase", m.Feed, {**FEED, "phase": 2}, ("phase",), "literal_error"),
    ("params-beyond-any-model", m.Workload, {**WORKLOAD, "params_b": 1e6}, ("params_b",), "less_than_equal"),
    ("side-c", m.Feed, {**FEED, "side": "C"}, ("side",), "literal_error"),
    ("utilization-over-100", m.Feed, {**FEED, "max_utilization": 101}, ("max_utilization",),
     "less_than_equal"),
    ("utilization-zero", m.Feed, {**FEED, "max_utilization": 0}, ("max_utilization",),
     "greater_than_equal"),
    ("power-factor-over-1", m.Feed, {**FEED, "power_factor": 1.2}, ("power_factor",), "less_than_equal"),
    ("name-with-slash", m.Feed, {**FEED, "name": "A/B"}, ("name",), "value_error"),
    ("name-with-space", m.Feed, {**FEED, "name": "A B"}, ("name",), "value_error"),
    ("name-with-tab", m.Feed, {**FEED, "name": "A\tB"}, ("name",), "value_error"),
    ("empty-name", m.Feed, {**FEED, "name": ""}, ("name",), "value_error"),
    ("name-too-long", m.Feed, {**FEED, "name": "a" * 201}, ("name",), "value_error"),
    ("name-not-text", m.Feed, {**FEED, "name": 7}, ("name",), "string_type"),
    ("rack-half-u", m.Rack, {"name": "R", "u_height": 42.5}, ("u_height",), "int_type"),  # strict int
    ("rack-quoted-u", m.Rack, {"name": "R", "u_height": "42"}, ("u_height",), "int_type"),
    ("rack-3n", m.Rack, {"name": "R", "redundancy": "3N"}, ("redundancy",), "literal_error"),
    ("rack-water", m.Rack, {"name": "R", "cooling": "water"}, ("cooling",), "literal_error"),
    ("float-version", m.Software, {"cuda": 12.1}, ("cuda",), "value_error"),
    ("float-framework-version", m.Software, {"frameworks": {"pytorch": 2.3}},
     ("frameworks", "pytorch", "version"), "value_error"),
    ("framework-source-typo", m.Software, {"frameworks": {"pytorch": {"version": "2.3.1", "source": "pip"}}},
     ("frameworks", "pytorch", "source"), "literal_error"),
    ("cpu-arch-typo", m.Cpu, {"arch": "arm64"}, ("arch",), "literal_error"),
    ("bool-version", m.Software, {"cuda": True}, ("cuda",), "string_type"),
    ("v-version", m.Software, {"cuda": "v12"}, ("cuda",), "value_error"),
    ("raid-2", m.Storage, {"raid": 2}, ("raid",), "literal_error"),
    ("typical-over-max", m.PowerDraw, {"max": 100, "typical": 200}, (), "value_error"),
    ("redundant-psus", m.Psu, {"count": 2, "redundant": 2}, (), "value_error"),
    ("no-psus", m.Psu, {"count": 0}, ("count",), "greater_than_equal"),
    ("zero-gpus", m.GpuRef, {"model": "l4", "count": 0}, ("count",), "greater_than_equal"),
    ("support-24-7", m.Support, {"level": "24/7"}, ("level",), "literal_error"),
    ("support-bad-date", m.Support, {"level": "24x7", "until": "soon"}, ("until",),
     "date_from_datetime_parsing"),
    ("workload-task", m.Workload, {**WORKLOAD, "task": "train"}, ("task",), "literal_error"),
    ("workload-precision", m.Workload, {**WORKLOAD, "precision": "fp64"}, ("precision",), "literal_error"),
    ("waiver-short-reason", m.Waiver,
     {"rule": "a.b", "entity": "rack/f/R", "reason": "ok", "owner": "me", "expires": "2027-01-01"},
     ("reason",), "string_too_short"),
    ("waiver-no-expiry", m.Waiver, {"rule": "a.b", "entity": "rack/f/R", "reason": "because", "owner": "me"},
     ("expires",), "missing"),
    ("pue-below-1", m.Facility, {"kind": "Facility", "name": "f", "pue_target": 0.9}, ("pue_target",),
     "greater_than_equal"),
    ("currency-lowercase", m.Facility, {"kind": "Facility", "name": "f", "currency": "usd"}, ("currency",),
     "string_pattern_mismatch"),
    ("facility-wrong-kind", m.Facility, {"kind": "Servers", "name": "f"}, ("kind",), "literal_error"),
    ("cooling-n-plus-2", m.FacilityCooling, {"capacity_kw": 1, "redundancy": "N+2"}, ("redundancy",),
     "literal_error"),
    ("loss-fraction-1", m.PueModel, {"fixed_kw": 0, "cooling_kw_per_it_kw": 0, "loss_fraction": 1},
     ("loss_fraction",), "less_than"),
    ("unverified-without-list", m.GpuModel, {**GPU, "verified": False}, (), "value_error"),
    ("list-without-unverified", m.GpuModel, {**GPU, "unverified": ["tdp_w"]}, (), "value_error"),
    ("gpu-vendor", m.GpuModel, {**GPU, "vendor": "Intel"}, ("vendor",), "literal_error"),
    ("catalog-needs-source", m.ServerModel, {"name": "x"}, ("source",), "missing"),
    ("server-unknown-field", m.Server, {"name": "s", "rack": "R", "racks": "R"}, ("racks",),
     "extra_forbidden"),
    ("servers-not-mappings", m.ServersDoc, {"kind": "Servers", "facility": "f", "servers": [1]},
     ("servers", 0), "dict_type"),
]


@pytest.mark.parametrize(("model", "data", "loc", "kind"), [pytest.param(*c[1:], id=c[0]) for c in INVALID])
def test_invalid(model: type[BaseModel], data: dict[str, Any], loc: tuple[str | int, ...], kind: str) -> None:
    with pytest.raises(ValidationError) as exc:
        model.model_validate(data)
    assert [(e["loc"], e["type"]) for e in exc.value.errors()] == [(loc, kind)]


@pytest.mark.parametrize(("model", "data", "message"), [
    (m.Software, {"cuda": 12.2}, 'write version numbers as strings: quote it, as in "12.2"'),
    (m.Software, {"cuda": "v12"},
     "a version is numbers separated by dots, with an optional +variant (e.g. 2.3.1+cu121)"),
    (m.Feed, {**FEED, "name": "A B"},
     "a name is 1-200 characters without spaces or '/' (it becomes part of entity ids)"),
    (m.Feed, {**FEED, "name": ""},
     "a name is 1-200 characters without spaces or '/' (it becomes part of entity ids)"),
    (m.PowerDraw, {"max": 100, "typical": 200}, "typical draw cannot exceed max draw"),
    (m.Psu, {"count": 2, "redundant": 2}, "redundant PSUs must be fewer than the PSU count"),
    (m.GpuModel, {**GPU, "verified": False},
     "list the unverified fields in `unverified` exactly when verified is false"),
    # A CDU set and the air handlers take the plant's units: a count or a list (m.UnitSet).
    (m.Cdu, {"name": "C", "units": 2, "rows": ["A"]},
     "give capacity_kw, or list the units with their capacity_kw"),
    (m.Cdu, {"name": "C", "capacity_kw": 100, "units": [{"name": "A", "capacity_kw": 60}], "rows": ["A"]},
     "capacity_kw 100 is not the 60 kW its units add up to"),
    (m.Cdu, {"name": "C", "redundancy": "N+1", "units": [{"name": "A", "capacity_kw": 60}], "rows": ["A"]},
     "N+1 needs two or more units"),
    (m.RoomAir, {"capacity_kw": 100, "redundancy": "N+1"}, "N+1 needs two or more units"),
    (m.RoomAir, {"units": [{"name": "A", "capacity_kw": 60}], "capacity_kw": 61},
     "capacity_kw 61 is not the 60 kW its units add up to"),
    (m.FacilityCooling, {"capacity_kw": 100, "redundancy": "N+1"}, "N+1 needs two or more units"),
    # 2N keeps half only when either half may fail: two equal halves (as generator sets).
    (m.FacilityCooling, {"capacity_kw": 900, "units": 3, "redundancy": "2N"},
     "2N is two equal halves: an even count of units, not 3"),
    (m.Cdu, {"name": "C", "redundancy": "2N", "rows": ["A"],
             "units": [{"name": "A", "capacity_kw": 600}, {"name": "B", "capacity_kw": 300}]},
     "2N is two equal halves: list units of one rating (or use N+1)"),
])
def test_own_messages(model: type[BaseModel], data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as exc:
        model.model_validate(data)
    assert exc.value.errors()[0]["msg"] == f"Value error, {message}"


def test_float_version_hint_shows_the_written_text() -> None:
    """`cuda: 12.10` reads as the float 12.1; the loader passes it on as a WrittenFloat that keeps "12.10"
    (a plain float has only its value: see test_own_messages)."""
    with pytest.raises(ValidationError) as exc:
        m.Software.model_validate({"cuda": WrittenFloat(12.1, "12.10")})
    message = exc.value.errors()[0]["msg"]
    assert message == 'Value error, write version numbers as strings: quote it, as in "12.10"'


@pytest.mark.parametrize(("model", "data", "loc", "kind"), [
    (m.Feed, {**FEED, "amps": True}, ("amps",), "float_type"),
    (m.Rack, {"name": "R", "u_height": True}, ("u_height",), "int_type"),
    (m.Network, {"ports": True}, ("ports",), "int_type"),
    (m.Psu, {"count": True}, ("count",), "int_type"),
    (m.Facility, {"kind": "Facility", "name": "f", "pue_target": False}, ("pue_target",), "float_type"),
])
def test_booleans_are_not_numbers(
    model: type[BaseModel], data: dict[str, Any], loc: tuple[str, ...], kind: str,
) -> None:
    with pytest.raises(ValidationError) as exc:
        model.model_validate(data)
    assert [(e["loc"], e["type"]) for e in exc.value.errors()] == [(loc, kind)]


@pytest.mark.parametrize("phase", [True, 3.0, "3", 2])
def test_phase_is_exactly_1_or_3(phase: object) -> None:
    with pytest.raises(ValidationError):
        m.Feed.model_validate({**FEED, "phase": phase})


@pytest.mark.parametrize("flag", ["yes", 1])
def test_nvlink_flag_is_a_real_boolean(flag: object) -> None:
    with pytest.raises(ValidationError):
        m.Network.model_validate({"nvlink": flag})


def test_models_are_frozen() -> None:
    feed = m.Feed.model_validate(FEED)
    with pytest.raises(ValidationError):
        feed.amps = 63  # type: ignore[misc]


def test_servers_document_keeps_servers_raw_for_merging() -> None:
    """Servers are validated one by one after `defaults` and the catalog model are merged in."""
    doc = m.ServersDoc.model_validate({"kind": "Servers", "facility": "f1", "defaults": {"rack": "R01"},
                                       "servers": [{"name": "s1", "bogus": 1}]})
    assert doc.servers == [{"name": "s1", "bogus": 1}]
    assert doc.defaults == {"rack": "R01"}


def test_catalog_meta_fields_are_not_server_fields() -> None:
    assert {"name", "source", "verified", "unverified", "notes", "description", "vendor"} <= m.CATALOG_META
    assert not ({"source", "verified", "unverified", "notes"} & set(m.Server.model_fields))
