"""Fact kinds: what rules can look at, one registry, each field documented.

A fact is one entity seen as a flat record. Fields named like an inventory
path (`support.until`) are read from the validated model, so a rule author
writes what they see in the YAML; other fields are derived (capacity, counts).
`checker facts [KIND]` prints this registry.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from checker.capacity import FACILITY_COLUMNS, FEED_COLUMNS, RACK_COLUMNS, SERVER_COLUMNS, Capacity, Column
from checker.entity import entity_id
from checker.inventory import models as m
from checker.inventory.loader import Inventory, Placed
from checker.inventory.loader import inner_models as _inner_models
from checker.inventory.source import Src
from checker.suggest import lookup

FieldType = Literal["number", "string", "boolean", "date"]


@dataclass(frozen=True, slots=True)
class FactField:
    name: str
    type: FieldType
    unit: str
    doc: str
    # Inventory path of the value, when it is read from the model (for `locate`).
    path: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Fact:
    kind: str
    entity: str
    values: Mapping[str, Any]
    file: str
    src: Src


Builder = Callable[[Inventory, Capacity], Iterator[Fact]]


@dataclass(frozen=True)
class FactKind:
    name: str
    doc: str
    fields: tuple[FactField, ...]
    build: Builder
    model: type[BaseModel]

    def has_path(self, dotted: str) -> bool:
        """Whether `dotted` names a field of the entity's inventory model (for `locate`)."""
        model: type[BaseModel] | None = self.model
        for step in dotted.split("."):
            info = model.model_fields.get(step) if model else None
            if info is None:
                return False
            model = next(_inner_models(info.annotation), None)
        return True

    def field_types(self) -> dict[str, FieldType]:
        return {f.name: f.type for f in self.fields}

    def field(self, name: str) -> FactField | None:
        return next((f for f in self.fields if f.name == name), None)


def _m(name: str, type_: FieldType, unit: str, doc: str) -> FactField:
    """A field read from the model at the inventory path spelled by its name."""
    return FactField(name, type_, unit, doc, tuple(name.split(".")))


def _d(name: str, type_: FieldType, unit: str, doc: str) -> FactField:
    """A derived field (no inventory path)."""
    return FactField(name, type_, unit, doc)


def _read(model: BaseModel, path: tuple[str, ...]) -> Any:
    value: Any = model
    for step in path:
        value = getattr(value, step, None)
        if value is None:
            return None
    return value.isoformat() if isinstance(value, dt.date) else value


def _values(fields: tuple[FactField, ...], model: BaseModel, derived: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields:
        value = _read(model, f.path) if f.path else derived.get(f.name)
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # `memory_gb: 512` reads back as 512 in messages, not 512.0
        if value is not None:
            out[f.name] = value
    return out


def _fact(
    kind: str, entity: str, place: Placed[Any], fields: tuple[FactField, ...], derived: Mapping[str, Any]
) -> Fact:
    return Fact(kind, entity, _values(fields, place.value, derived), place.file, place.src)


def _columns(spec: tuple[Column, ...]) -> tuple[FactField, ...]:
    """Capacity columns as derived fields: declared once, with unit and meaning."""
    return tuple(_d(c.name, c.type, c.unit, c.doc) for c in spec)


# ---------------------------------------------------------------- facility
FACILITY_FIELDS = (
    _m("name", "string", "", "facility name"),
    _m("location", "string", "", "free-text location"),
    _m("pue_target", "number", "", "maximum allowed PUE"),
    _m("design_pue", "number", "", "design PUE, used when pue_model is absent"),
    _m("pue_model.fixed_kw", "number", "kW", "fixed overhead: lighting, offices, security"),
    _m("pue_model.cooling_kw_per_it_kw", "number", "kW/kW", "cooling power per IT kW"),
    _m("pue_model.loss_fraction", "number", "", "UPS and distribution losses per IT kW"),
    _m("power.it_capacity_kw", "number", "kW", "UPS / critical IT capacity"),
    _m("power.utility_kw", "number", "kW", "utility supply"),
    _m(
        "power.basis",
        "string",
        "",
        "max | typical: the draw UPS, utility, energy and PUE use (feeds and racks always use peak)",
    ),
    _m("cooling.capacity_kw", "number", "kW", "heat rejection with all units running"),
    _m("cooling.units", "number", "", "number of cooling units"),
    _m("cooling.redundancy", "string", "", "N | N+1 | 2N"),
    _m("cooling.inlet_c", "number", "degC", "design inlet temperature"),
    _m("cooling.ashrae_class", "string", "", "ASHRAE TC 9.9 class A1..A4"),
    _m("cooling.delta_t_c", "number", "degC", "air temperature rise across servers, for airflow"),
    _m("floor_max_kg_per_m2", "number", "kg/m2", "floor loading limit"),
    _m("energy_price_per_kwh", "number", "currency/kWh", "energy price"),
    _m("currency", "string", "", "currency of energy_price_per_kwh"),
    *_columns(FACILITY_COLUMNS),
)


def _facilities(inv: Inventory, cap: Capacity) -> Iterator[Fact]:
    for name, place in inv.facilities.items():
        row = cap.facilities.row(name)
        yield _fact("facility", entity_id("facility", name), place, FACILITY_FIELDS, row)


# ---------------------------------------------------------------- rack
RACK_FIELDS = (
    _d("facility", "string", "", "facility the rack is in"),
    _m("name", "string", "", "rack name"),
    _m("u_height", "number", "U", "rack height"),
    _m("weight_kg", "number", "kg", "empty rack weight"),
    _m("max_weight_kg", "number", "kg", "rated static load"),
    _m("footprint_m2", "number", "m2", "floor area"),
    _m("cooling", "string", "", "air | rear-door | liquid"),
    _m("cooling_kw", "number", "kW", "heat this position can reject"),
    _m("redundancy", "string", "", "N | N+1 | 2N"),
    *_columns(RACK_COLUMNS),
)


def _racks(inv: Inventory, cap: Capacity) -> Iterator[Fact]:
    for key, place in inv.racks.items():
        derived = {"facility": key[0], **cap.racks.row(key)}
        yield _fact("rack", entity_id("rack", key), place, RACK_FIELDS, derived)


# ---------------------------------------------------------------- feed
FEED_FIELDS = (
    _d("facility", "string", "", "facility of the feed's rack"),
    _d("rack", "string", "", "rack the feed powers"),
    _m("name", "string", "", "feed name"),
    _m("side", "string", "", "A | B (2N racks)"),
    _m("voltage", "number", "V", "line-to-line voltage for three-phase"),
    _m("amps", "number", "A", "breaker rating"),
    _m("phase", "number", "", "1 | 3"),
    _m("max_utilization", "number", "%", "continuous-load limit (NEC 210.20(A), IEC 60364-4-43: 80)"),
    _m("power_factor", "number", "", "power factor"),
    *_columns(FEED_COLUMNS),
)


def _feeds(inv: Inventory, cap: Capacity) -> Iterator[Fact]:
    for key, place in inv.feeds.items():
        derived = {"facility": key[0], "rack": key[1], **cap.feeds.row(key)}
        yield _fact("feed", entity_id("feed", key), place, FEED_FIELDS, derived)


# ---------------------------------------------------------------- server
SERVER_FIELDS = (
    _m("name", "string", "", "server name"),
    _d("facility", "string", "", "facility of the server's document"),
    _m("rack", "string", "", "rack name"),
    _m("model", "string", "", "catalog server model"),
    _m("position", "number", "U", "lowest U occupied (absent: not rack-mounted)"),
    _m("u_height", "number", "U", "height"),
    _m("weight_kg", "number", "kg", "weight"),
    _m("power_w.max", "number", "W", "maximum wall draw"),
    _m("power_w.typical", "number", "W", "typical wall draw"),
    _m("power_cap_w", "number", "W", "enforced cap on wall draw; replaces power_w.max on branch circuits"),
    _m("psu.count", "number", "", "power supplies"),
    _m("psu.rating_w", "number", "W", "rating of one PSU"),
    _m("psu.redundant", "number", "", "PSUs that may fail (the +N)"),
    _m("psu.per_side", "number", "", "PSUs on the smaller side of a 2N rack (default count // 2)"),
    _m("psu.efficiency", "string", "", "80 PLUS level"),
    _m("cooling", "string", "", "air | liquid"),
    _m("inlet_c.min", "number", "degC", "lowest inlet temperature the equipment is specified for"),
    _m("inlet_c.max", "number", "degC", "highest inlet temperature the equipment is specified for"),
    _m("gpu.model", "string", "", "catalog GPU model"),
    _m("gpu.count", "number", "", "GPUs"),
    _m("cpu.sockets", "number", "", "CPU sockets"),
    _m("cpu.pcie_lanes", "number", "", "PCIe lanes"),
    _m("memory_gb", "number", "GB", "system memory"),
    _m("storage.nvme_tb", "number", "TB", "NVMe capacity"),
    _m("storage.raid", "string", "", "none | 0 | 1 | 5 | 6 | 10"),
    _m("network.fabric", "string", "", "infiniband | roce | ethernet"),
    _m("network.gbps", "number", "Gb/s", "per-port speed"),
    _m("network.ports", "number", "", "fabric ports"),
    _m("network.nvlink", "boolean", "", "NVLink between the GPUs"),
    _m("software.os", "string", "", "operating system"),
    _m("software.driver", "string", "", "NVIDIA driver version"),
    _m("software.cuda", "string", "", "CUDA version the software is built for"),
    _m("software.rocm", "string", "", "ROCm version"),
    _m("support.vendor", "string", "", "support vendor"),
    _m("support.level", "string", "", "24x7 | 8x5 | nbd | none"),
    _m("support.until", "date", "", "end of the support contract"),
    _d("rollout_date", "date", "", "rollout date of the server's document"),
    _m("workload", "string", "", "workload the server runs"),
    *_columns(SERVER_COLUMNS),
)


def _servers(inv: Inventory, cap: Capacity) -> Iterator[Fact]:
    for (name, entry), row in zip(inv.servers.items(), cap.servers.rows, strict=True):
        rollout = entry.rollout_date.isoformat() if entry.rollout_date else None
        derived = {"facility": entry.facility, "rollout_date": rollout, **row}
        yield _fact("server", entity_id("server", name), entry.place, SERVER_FIELDS, derived)


# ---------------------------------------------------------------- workload
WORKLOAD_FIELDS = (
    _m("name", "string", "", "workload name"),
    _m("task", "string", "", "training | fine-tuning | inference"),
    _m("params_b", "number", "billion", "model parameters"),
    _m("precision", "string", "", "fp32 | bf16 | fp16 | fp8 | int8 | int4"),
    _m("framework", "string", "", "framework that must be installed"),
    _m("dataset_tb", "number", "TB", "dataset size"),
    _m("tokens_b", "number", "billion", "training tokens"),
    _m("deadline_days", "number", "days", "deadline"),
    _d("server_count", "number", "", "servers that run it"),
)


def _workloads(inv: Inventory, cap: Capacity) -> Iterator[Fact]:
    counts: dict[str, int] = {}
    for entry in inv.servers.values():
        if entry.server.workload:
            counts[entry.server.workload] = counts.get(entry.server.workload, 0) + 1
    for name, place in inv.workloads.items():
        yield _fact(
            "workload",
            entity_id("workload", name),
            place,
            WORKLOAD_FIELDS,
            {"server_count": counts.get(name, 0)},
        )


REGISTRY: dict[str, FactKind] = {
    k.name: k
    for k in (
        FactKind(
            "facility", "a site: power, cooling and PUE figures", FACILITY_FIELDS, _facilities, m.Facility
        ),
        FactKind("rack", "a rack position with its feeds and load", RACK_FIELDS, _racks, m.Rack),
        FactKind("feed", "one power feed of a rack", FEED_FIELDS, _feeds, m.Feed),
        FactKind(
            "server", "a server, with catalog and defaults merged in", SERVER_FIELDS, _servers, m.Server
        ),
        FactKind(
            "workload", "a workload and the servers that run it", WORKLOAD_FIELDS, _workloads, m.Workload
        ),
    )
}


def fact_kind(name: str) -> FactKind:
    """The registered kind, or a clear error naming the valid ones."""
    return lookup(REGISTRY, name, "fact kind")


def build_all(inv: Inventory, cap: Capacity) -> list[Fact]:
    return [fact for kind in REGISTRY.values() for fact in kind.build(inv, cap)]
