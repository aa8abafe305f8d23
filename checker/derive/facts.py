"""Fact kinds: what rules can look at, one registry, each field documented.

A fact is one entity seen as a flat record. Fields named like an inventory
path (`support.until`) are read from the validated model, so a rule author
writes what they see in the YAML; other fields are derived (capacity, counts,
catalog and knowledge-table lookups: checker.derive.software, checker.derive.fit). Rules
cannot order version strings, so each version is also a `*_num` number that
orders like the version (checker.derive.knowledge.version_number), next to the
thresholds the tables give. `checker facts [KIND]` prints this registry.
"""

from __future__ import annotations

import datetime as dt
import operator
from collections.abc import Callable, Hashable, ItemsView, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, TypeVar

import numpy as np
from pydantic import BaseModel

from checker.core.entity import entity_id
from checker.core.suggest import lookup
from checker.derive import fit, software
from checker.derive.capacity import (
    FACILITY_COLUMNS,
    FEED_COLUMNS,
    RACK_COLUMNS,
    SERVER_COLUMNS,
    Capacity,
    Column,
)
from checker.derive.knowledge import Knowledge, builtin
from checker.load import models as m
from checker.load.build import Inventory, Placed
from checker.load.build import inner_models as _inner_models
from checker.source.parse import Src

FieldType = Literal["number", "string", "boolean", "date"]


@dataclass(frozen=True, slots=True)
class FactField:
    name: str
    type: FieldType
    unit: str
    doc: str
    # Inventory path of the value, when it is read from the model (for `locate`).
    path: tuple[str, ...] | None = None


class Header:
    """The field names of one kind's rows, shared by all of them, with each
    name's position (a fact costs one tuple of cells, not a dict of its own)."""

    __slots__ = ("index", "names")

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        self.index = {name: i for i, name in enumerate(self.names)}


_set = object.__setattr__


class Row(Mapping[str, Any]):
    """One entity's fact values as a read-only mapping: a tuple of cells in its
    kind's `Header` order, None where the entity has no value (so the field is
    absent, as from a dict that leaves it out).

    A 100,000-server fleet has ~175,000 facts of up to ~100 fields: a dict each
    was ~1.6 kB per server, this tuple ~0.6 kB (docs/performance.md, "Memory")."""

    __slots__ = ("cells", "header")
    header: Header
    cells: tuple[Any, ...]

    def __init__(self, header: Header, cells: tuple[Any, ...]) -> None:
        _set(self, "header", header)
        _set(self, "cells", cells)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a fact's values cannot be changed ({name})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a fact's values cannot be changed ({name})")

    def __reduce__(self) -> tuple[type[Row], tuple[Header, tuple[Any, ...]]]:
        # Copied and pickled through __init__, not by setting its slots.
        return Row, (self.header, self.cells)

    def get(self, name: str, default: Any = None) -> Any:
        i = self.header.index.get(name)
        value = None if i is None else self.cells[i]
        return default if value is None else value

    def __getitem__(self, name: str) -> Any:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[str]:
        return (name for name, value in zip(self.header.names, self.cells, strict=True) if value is not None)

    def __len__(self) -> int:
        return len(self.cells) - self.cells.count(None)

    def items(self) -> ItemsView[str, Any]:
        return _RowItems(self)

    def __repr__(self) -> str:
        return f"Row({dict(self.items())!r})"


class _RowItems(ItemsView[str, Any]):
    """(name, value) pairs read straight off the cells (the hot loop of messages
    and the NaN check), not a lookup per name."""

    __slots__ = ("_row",)

    def __init__(self, row: Row) -> None:
        super().__init__(row)
        self._row = row

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        pairs = zip(self._row.header.names, self._row.cells, strict=True)
        return ((name, value) for name, value in pairs if value is not None)


@dataclass(frozen=True, slots=True)
class Fact:
    """One entity seen as a flat record; its values are a `Row` when built here
    (any mapping will do: tests build facts from dicts)."""

    kind: str
    entity: str
    values: Mapping[str, Any]
    file: str
    src: Src


@dataclass(frozen=True)
class Context:
    """What facts need besides the inventory: the audit date, settings, tables."""

    as_of: dt.date
    support_horizon_days: int = 365
    knowledge: Knowledge = field(default_factory=builtin)


class Derivation:
    """One inventory's facts being built: the inventory, its capacity, the
    context, and what several kinds read, worked out once: the workload fit
    figures (server and workload facts both read them, checker.derive.fit).
    build_all makes one per call, so nothing derived outlives the call."""

    def __init__(self, inv: Inventory, cap: Capacity, ctx: Context) -> None:
        self.inv = inv
        self.cap = cap
        self.ctx = ctx

    @cached_property
    def workloads(self) -> dict[str, dict[str, Any]]:
        """Fit figures of every workload, with its model and server count."""
        return _workload_values(self.inv, self.ctx)


Builder = Callable[[Derivation], list[Fact]]


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


Columns = dict[tuple[str, ...], list[Any]]


def _column(models: Sequence[Any], path: tuple[str, ...], memo: Columns) -> list[Any]:
    """One inventory path read from every model (None where a step is absent);
    `memo` keeps the columns of path prefixes (`psu` for psu.count and psu.rating_w)."""
    column = memo.get(path)
    if column is not None:
        return column
    column = _column(models, path[:-1], memo) if len(path) > 1 else list(models)
    get = operator.attrgetter(path[-1])
    try:
        column = list(map(get, column))  # at C speed while no step is absent
    except AttributeError:
        column = [None if value is None else get(value) for value in column]
    memo[path] = column
    return column


def _normal(column: list[Any], type_: FieldType) -> list[Any]:
    """Values as facts hold them: dates as ISO text, whole floats as ints (so
    `memory_gb: 512` reads back as 512 in messages, not 512.0).

    Each distinct date or float is converted once and its result shared by
    every entity that has it: a fleet repeats a few values many times, and a
    string or int of its own per server is ~30-60 bytes each."""
    if type_ == "date":
        iso = {v: v.isoformat() for v in set(column) if isinstance(v, dt.date)}
        return [iso.get(v, v) for v in column] if iso else column
    if type_ == "number" and any(issubclass(kind, float) for kind in set(map(type, column))):
        # Keyed by exact floats only: 1 and True are equal to 1.0 as dict keys.
        # Equal floats are the same value (0.0 and -0.0 both become 0).
        shared = {v: _whole(v) for v in {v for v in column if type(v) is float}}
        return [shared[v] if type(v) is float else _whole(v) if isinstance(v, float) else v for v in column]
    return column


def _whole(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _records(
    fields: tuple[FactField, ...],
    models: Sequence[Any],
    derived: Sequence[Mapping[str, Any]],
    columns: Mapping[str, Sequence[Any]],
    headers: dict[tuple[str, ...], Header],
) -> list[Row]:
    """Fact values of many entities, built a column at a time: each field of
    every entity in one list comprehension (or taken whole from `columns`,
    such as the capacity table's, whose values are as facts hold them), then
    one row per entity in field order."""

    memo: Columns = {}

    def column(f: FactField) -> Sequence[Any]:
        if f.path:
            return _normal(_column(models, f.path, memo), f.type)
        given = columns.get(f.name)
        return given if given is not None else _normal([d.get(f.name) for d in derived], f.type)

    return _assemble([f.name for f in fields], [column(f) for f in fields], len(models), headers)


def _assemble(
    names: list[str], cells: list[Sequence[Any]], count: int, headers: dict[tuple[str, ...], Header]
) -> list[Row]:
    """One row per entity, its cells in column order and taken by zip() at C
    speed; a column no entity has is left out of the header. Rows with the
    same columns share one header (from `headers`)."""
    kept = [(name, cell) for name, cell in zip(names, cells, strict=True) if cell.count(None) < count]
    kept_names = tuple(name for name, _ in kept)
    header = headers.get(kept_names) or headers.setdefault(kept_names, Header(kept_names))
    rows = zip(*(cell for _, cell in kept), strict=True) if kept else [()] * count
    return [Row(header, row) for row in rows]


# An entity's id, its placed model and the derived values not given as columns.
Entry = tuple[str, Placed[Any], Mapping[str, Any]]
ROWS_AT_ONCE = 5_000


def _facts(
    kind: str,
    fields: tuple[FactField, ...],
    entries: Sequence[Entry],
    columns: Mapping[str, Sequence[Any]] | None = None,
) -> list[Fact]:
    """Facts of (entity id, placed model, derived values) entries, plus derived
    `columns` that hold one value per entry.

    Built ROWS_AT_ONCE entities at a time: a field's column is alive only while
    its rows are made, so what building costs beyond the facts themselves is
    the size of one part, not of the fleet (docs/performance.md, "Memory")."""
    headers: dict[tuple[str, ...], Header] = {}
    facts: list[Fact] = []
    for first in range(0, len(entries), ROWS_AT_ONCE):
        part = entries[first : first + ROWS_AT_ONCE]
        given = {name: column[first : first + ROWS_AT_ONCE] for name, column in (columns or {}).items()}
        rows = _records(fields, [e[1].value for e in part], [e[2] for e in part], given, headers)
        facts += [
            Fact(kind, entity, values, place.file, place.src)
            for (entity, place, _), values in zip(part, rows, strict=True)
        ]
    return facts


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


def _facilities(run: Derivation) -> list[Fact]:
    inv, cap = run.inv, run.cap
    entries: list[Entry] = [(entity_id("facility", n), place, {}) for n, place in inv.facilities.items()]
    return _facts("facility", FACILITY_FIELDS, entries, cap.facilities.cells_for(list(inv.facilities)))


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


def _racks(run: Derivation) -> list[Fact]:
    inv, cap = run.inv, run.cap
    entries: list[Entry] = [(entity_id("rack", key), place, {}) for key, place in inv.racks.items()]
    columns = {**cap.racks.cells_for(list(inv.racks)), "facility": [key[0] for key in inv.racks]}
    return _facts("rack", RACK_FIELDS, entries, columns)


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


def _feeds(run: Derivation) -> list[Fact]:
    inv, cap = run.inv, run.cap
    entries: list[Entry] = [(entity_id("feed", key), place, {}) for key, place in inv.feeds.items()]
    columns = {
        **cap.feeds.cells_for(list(inv.feeds)),
        "facility": [key[0] for key in inv.feeds],
        "rack": [key[1] for key in inv.feeds],
    }
    return _facts("feed", FEED_FIELDS, entries, columns)


# ---------------------------------------------------------------- server
# Versions are strings as written plus `*_num` numbers rules compare
# (checker.derive.knowledge.version_number: 535.129.03 -> 535129003000).
SOFTWARE_FIELDS = (
    _d("gpu.vendor", "string", "", "NVIDIA | AMD (GPU catalog)"),
    _d("gpu.architecture", "string", "", "GPU architecture (Ampere, Hopper, ...)"),
    _d("gpu.form_factor", "string", "", "sxm | pcie | oam | embedded"),
    _d("gpu.forward_compatible", "boolean", "", "CUDA forward compatibility (cuda-compat) works on the GPU"),
    _d("gpu.devices", "number", "", "GPUs as software sees them (an MI250X is two)"),
    _d("gpu.memory_gb", "number", "GB", "memory of one GPU as software sees it (MI250X: 64)"),
    _d("gpu.memory_total_gb", "number", "GB", "GPU memory of the server"),
    _d("gpu.tdp_w", "number", "W", "board power of one GPU package"),
    _d("gpu.tdp_total_w", "number", "W", "gpu.count x gpu.tdp_w"),
    _d("gpu.tdp_unverified", "boolean", "", "the catalog marks the TDP unverified"),
    _d("gpu.nvlink", "boolean", "", "NVLink between the GPUs: network.nvlink, else the catalog interconnect"),
    _d("gpu.min_cuda", "string", "", "first CUDA that supports the GPU"),
    _d("gpu.min_cuda_num", "number", "version", "gpu.min_cuda as a version number"),
    _d("gpu.cuda_dropped", "string", "", "first CUDA without support for the GPU"),
    _d("gpu.cuda_dropped_num", "number", "version", "gpu.cuda_dropped as a version number"),
    _d("gpu.min_driver", "string", "", "driver the GPU needs beyond its CUDA's (HGX B200)"),
    _d("gpu.min_driver_num", "number", "version", "gpu.min_driver as a version number"),
    _d("gpu.last_driver_branch", "number", "", "last driver branch that supports the GPU"),
    _d("gpu.min_rocm", "string", "", "first ROCm that supports the GPU"),
    _d("gpu.min_rocm_num", "number", "version", "gpu.min_rocm as a version number"),
    _d("gpu.options", "string", "", "GPU models the server model takes"),
    _d("gpu.matches_server_model", "boolean", "", "gpu.model is one the server model takes"),
    _d("software.declared", "boolean", "", "the server has a software section"),
    _d("software.driver_num", "number", "version", "software.driver as a version number"),
    _d("software.driver_branch", "number", "", "driver branch (major version: 535)"),
    _d("software.driver_known", "boolean", "", "the driver version reads as a version number"),
    _d("software.cuda_num", "number", "version", "software.cuda as a version number"),
    _d("software.cuda_known", "boolean", "", "the tables know the CUDA release"),
    _d("software.cuda_full_driver", "string", "", "full-feature minimum driver of software.cuda"),
    _d("software.cuda_full_driver_num", "number", "version", "that driver as a version number"),
    _d("software.cuda_driver_floor", "string", "", "minor-version-compat minimum driver of software.cuda"),
    _d("software.cuda_driver_floor_num", "number", "version", "that driver as a version number"),
    _d("software.rocm_num", "number", "version", "software.rocm as a version number"),
    _d("software.rocm_known", "boolean", "", "the tables know the ROCm release"),
)

SUPPORT_FIELDS = (
    _d("support.checked_against", "date", "", "rollout_date, or the audit date (--as-of) without one"),
    _d("support.days_after_rollout", "number", "days", "support.until minus support.checked_against"),
    _d("support.horizon_days", "number", "days", "warn when support ends this soon after rollout "
       "(checker.yaml support_horizon_days, default 365)"),
)

SERVER_FIT_FIELDS = (
    _d("workload_task", "string", "", "task of the server's workload"),
    _d("workload_servers", "number", "", "servers that run the server's workload"),
    _d("workload_params_b", "number", "billion", "parameters of the server's workload's model"),
    _d("workload_framework", "string", "", "framework the server's workload needs"),
    _d("workload_dataset_tb", "number", "TB", "dataset of the server's workload"),
    _d("workload_memory_required_gb", "number", "GB", "GPU memory the server's workload needs"),
    _d("framework_installed", "boolean", "", "the workload's framework is in software.frameworks"),
)

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
    _m("storage.scratch", "boolean", "", "local NVMe is a scratch or cache tier (data lives elsewhere)"),
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
    *SOFTWARE_FIELDS,
    *SUPPORT_FIELDS,
    *SERVER_FIT_FIELDS,
)


def _support(checked: dt.date, until: dt.date | None, ctx: Context) -> dict[str, Any]:
    return {
        "support.checked_against": checked.isoformat(),
        "support.days_after_rollout": (until - checked).days if until else None,
        "support.horizon_days": ctx.support_horizon_days,
    }


def _server_fit(server: m.Server, workloads: Mapping[str, dict[str, Any]], ctx: Context) -> dict[str, Any]:
    wl = workloads.get(server.workload) if server.workload else None
    if wl is None:
        return {}
    model: m.Workload = wl["model"]
    values = {
        "workload_task": model.task,
        "workload_servers": wl["server_count"],
        "workload_params_b": model.params_b,
        "workload_framework": model.framework,
        "workload_dataset_tb": model.dataset_tb,
        "workload_memory_required_gb": wl.get("memory_required_gb"),
    }
    if model.framework:
        values["framework_installed"] = software.installed(server.software, model.framework, ctx.knowledge)
    return values


def _gpu_values(inv: Inventory, server: m.Server) -> dict[str, Any]:
    gpu = inv.gpu_models.get(server.gpu.model) if server.gpu else None
    model = inv.server_models.get(server.model) if server.model else None
    return software.gpu_values(server, gpu.value if gpu else None, model.value if model else None)


# Derived values given as columns: no entity has a dict of its own.
_NO_VALUES: Mapping[str, Any] = {}


def _servers(run: Derivation) -> list[Fact]:
    inv, cap, ctx = run.inv, run.cap, run.ctx
    entries: list[Entry] = [(entity_id("server", n), e.place, _NO_VALUES) for n, e in inv.servers.items()]
    rollout = _normal([e.rollout_date for e in inv.servers.values()], "date")
    facility = [entry.facility for entry in inv.servers.values()]
    capacity = cap.servers.cells_for(list(inv.servers))
    columns = {**capacity, **_derived(inv, ctx, run.workloads), "facility": facility, "rollout_date": rollout}
    return _facts("server", SERVER_FIELDS, entries, columns)


def _derived(
    inv: Inventory, ctx: Context, workloads: Mapping[str, dict[str, Any]]
) -> dict[str, list[Any]]:
    """Catalog, software, support and workload values of every server, as columns.

    A fleet repeats a few configurations many times: each value is computed
    once per distinct input (GPU set-up, software stack, support dates,
    workload) and shared by every server that has it."""
    gpu_keys: list[Hashable] = []
    sw_keys: list[Hashable] = []
    support_keys: list[tuple[dt.date, dt.date | None]] = []
    fit_keys: list[Hashable] = []
    for entry in inv.servers.values():
        server, sw = entry.server, entry.server.software
        nvlink = server.network.nvlink if server.network else None
        gpu_keys.append((server.gpu.model, server.gpu.count, nvlink, server.model) if server.gpu else None)
        sw_keys.append((sw.driver, sw.cuda, sw.rocm) if sw else None)
        # Without a rollout date the server is checked as of the audit date, not skipped.
        until = server.support.until if server.support else None
        support_keys.append((entry.rollout_date or ctx.as_of, until))
        # What _server_fit reads: the workload, and the names of the frameworks installed.
        fit_keys.append((server.workload, None if sw is None else tuple(sw.frameworks)))
    servers = [entry.server for entry in inv.servers.values()]
    return {
        **_spread(gpu_keys, servers, lambda server: _gpu_values(inv, server)),
        **_spread(sw_keys, servers, lambda server: software.software_values(server.software, ctx.knowledge)),
        **_spread(support_keys, support_keys, lambda key: _support(*key, ctx)),
        **_spread(fit_keys, servers, lambda server: _server_fit(server, workloads, ctx)),
    }


T = TypeVar("T")


def _spread(
    keys: Sequence[Hashable], items: Sequence[T], compute: Callable[[T], Mapping[str, Any]]
) -> dict[str, list[Any]]:
    """Columns of values computed once per distinct key (the first item with
    that key stands for all), then spread to every item by a lookup at C speed."""
    rows: dict[Hashable, dict[str, Any]] = {}
    for key, item in zip(keys, items, strict=True):
        if key not in rows:
            rows[key] = {k: _normal([v], "number")[0] for k, v in compute(item).items()}
    names = dict.fromkeys(name for row in rows.values() for name in row)
    by_key = {name: {k: row.get(name) for k, row in rows.items()} for name in names}
    return {name: list(map(values.__getitem__, keys)) for name, values in by_key.items()}


# ---------------------------------------------------------------- framework
FRAMEWORK_FIELDS = (
    _d("server", "string", "", "server the framework is installed on"),
    _d("name", "string", "", "framework name as written (a key of software.frameworks)"),
    _d("canonical", "string", "", "the tables' name for it (torch -> pytorch)"),
    _d("version", "string", "", "version as written, with its build variant (2.3.1+cu121)"),
    _d("known", "boolean", "", "the tables know the framework"),
    _d("release", "string", "", "release line of the version (2.3.1 -> 2.3)"),
    _d("release_num", "number", "version", "release line as a version number"),
    _d("release_known", "boolean", "", "the tables know the release (absent for an unknown framework)"),
    _d("stack", "string", "", "cuda | rocm | cpu | unknown: what the build runs on"),
    _d("build_from", "string", "", "where the build's CUDA/ROCm came from: variant | software.cuda | "
       "software.rocm | tested build"),
    _d("build_exists", "boolean", "", "an official build of this release exists for that CUDA/ROCm"),
    _d("builds", "string", "", "the official builds of the release, for messages"),
    _d("cuda", "string", "", "CUDA the framework runs with (wheel variant, software.cuda or tested build)"),
    _d("cuda_num", "number", "version", "that CUDA as a version number"),
    _d("rocm", "string", "", "ROCm the framework runs with"),
    _d("rocm_num", "number", "version", "that ROCm as a version number"),
    _d("cuda_full_driver", "string", "", "full-feature minimum driver of the framework's CUDA"),
    _d("cuda_full_driver_num", "number", "version", "that driver as a version number"),
    _d("cuda_driver_floor", "string", "", "minor-version-compatibility minimum driver of its CUDA"),
    _d("cuda_driver_floor_num", "number", "version", "that driver as a version number"),
    _d("driver", "string", "", "the server's NVIDIA driver"),
    _d("driver_num", "number", "version", "that driver as a version number"),
    _d("gpu.model", "string", "", "the server's GPU model"),
    _d("gpu.vendor", "string", "", "NVIDIA | AMD"),
    _d("gpu.architecture", "string", "", "GPU architecture"),
    _d("gpu.min_rocm", "string", "", "first ROCm that supports the GPU"),
    _d("gpu.min_rocm_num", "number", "version", "that ROCm as a version number"),
    _d("arch_min_cuda", "string", "", "oldest framework CUDA build that runs the GPU's architecture"),
    _d("arch_min_cuda_num", "number", "version", "that CUDA as a version number"),
    _d("arch_min_release", "string", "", "first framework release that runs the architecture"),
    _d("arch_min_release_num", "number", "version", "that release as a version number"),
    _d("arch_warn_from", "string", "", "first release whose support for the architecture is in doubt"),
    _d("arch_warn_from_num", "number", "version", "that release as a version number"),
    _d("arch_note", "string", "", "the table's note on the architecture"),
)


def _frameworks(run: Derivation) -> list[Fact]:
    inv, ctx = run.inv, run.ctx
    entries: list[Entry] = []
    keys: list[Hashable] = []
    installs: list[tuple[str, str, m.Software, str | None]] = []
    servers: list[str] = []
    for name, entry in inv.servers.items():
        sw = entry.server.software
        if sw is None:
            continue
        gpu = entry.server.gpu.model if entry.server.gpu else None
        for fw, version in sw.frameworks.items():
            src = entry.place.src.descend("software", "frameworks", fw)
            place = Placed(entry.server, entry.place.file, src)
            entries.append((entity_id("server", name), place, _NO_VALUES))
            # What software.framework_values reads of the install and its server.
            keys.append((fw, version, sw.driver, sw.cuda, sw.rocm, gpu))
            installs.append((fw, version, sw, gpu))
            servers.append(name)

    def values(install: tuple[str, str, m.Software, str | None]) -> dict[str, Any]:
        fw, version, sw, gpu_name = install
        gpu = inv.gpu_models.get(gpu_name) if gpu_name is not None else None
        return software.framework_values(fw, version, sw, gpu.value if gpu else None, ctx.knowledge)

    columns = {**_spread(keys, installs, values), "server": servers}
    return _facts("framework", FRAMEWORK_FIELDS, entries, columns)


# ---------------------------------------------------------------- workload
WORKLOAD_FIT_FIELDS = (
    _d("memory_scope", "string", "", "job: sharded over all its GPUs; server: within each server"),
    _d("memory_allowance_pct", "number", "%", "activation / KV-cache allowance in memory_required_gb "
       "(a planning default, unverified)"),
    _d("memory_required_gb", "number", "GB", "GPU memory needed (rules/knowledge/fit.yaml)"),
    _d("memory_available_gb", "number", "GB", "GPU memory of the job, or of its smallest server"),
    _d("memory_per_gpu_gb", "number", "GB", "memory_required_gb over job_gpu_count"),
    _d("gpu_count", "number", "", "GPUs of all its servers, as software sees them"),
    _d("job_gpu_count", "number", "", "GPUs one job uses: all (job scope) or its smallest server's"),
    _d("gpus_per_server_min", "number", "", "GPUs of its smallest server"),
    _d("gpu_memory_gb_min", "number", "GB", "smallest per-GPU memory among its servers"),
    _d("gpu_memory_gb_max", "number", "GB", "largest per-GPU memory among its servers"),
    _d("peak_tflops", "number", "TFLOPS", "dense BF16 peak of all its GPUs (absent if one is unknown)"),
    _d("mfu", "number", "", "model FLOPs utilisation the estimate assumes"),
    _d("train_days", "number", "days", "6 x params x tokens / (peak x MFU), training and fine-tuning"),
    _d("estimate_unverified", "boolean", "", "the estimate uses a peak the catalog marks unverified"),
)

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
    *WORKLOAD_FIT_FIELDS,
)


def _workload_values(inv: Inventory, ctx: Context) -> dict[str, dict[str, Any]]:
    """Fit figures of every workload (checker.derive.fit), with its model and server count."""
    names = list(inv.workloads)
    servers = [e.server for e in inv.servers.values()]
    gpus = {k: p.value for k, p in inv.gpu_models.items()}
    cols = fit.server_columns(servers, gpus, names)
    models = [inv.workloads[n].value for n in names]
    values = fit.workload_values(models, cols, ctx.knowledge.fit)
    placed = cols.workload[cols.workload >= 0]
    counts = np.bincount(placed, minlength=len(names)).tolist()
    return {
        n: {**v, "model": mod, "server_count": c}
        for n, v, mod, c in zip(names, values, models, counts, strict=True)
    }


def _workloads(run: Derivation) -> list[Fact]:
    inv = run.inv
    entries = [
        (entity_id("workload", name), inv.workloads[name], {k: v for k, v in values.items() if k != "model"})
        for name, values in run.workloads.items()
    ]
    return _facts("workload", WORKLOAD_FIELDS, entries)


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
        FactKind(
            "framework",
            "one framework installed on a server, with the server's GPU and driver (entity: the server)",
            FRAMEWORK_FIELDS,
            _frameworks,
            m.Software,
        ),
    )
}


def fact_kind(name: str) -> FactKind:
    """The registered kind, or a clear error naming the valid ones."""
    return lookup(REGISTRY, name, "fact kind")


def build_all(inv: Inventory, cap: Capacity, ctx: Context) -> list[Fact]:
    run = Derivation(inv, cap, ctx)
    return [fact for kind in REGISTRY.values() for fact in kind.build(run)]
