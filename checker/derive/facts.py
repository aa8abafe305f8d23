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
import itertools
import operator
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any, TypeVar, cast

import numpy as np
from pydantic import BaseModel

from checker.core.carried import Carried
from checker.core.entity import entity_id, entity_ids
from checker.core.made import made, setter
from checker.core.suggest import lookup
from checker.derive import carried_rows, fit, kept_rows, kept_tables, software
from checker.derive.capacity import (
    CDU_COLUMNS,
    COOLING_UNIT_COLUMNS,
    FACILITY_COLUMNS,
    FEED_COLUMNS,
    PANEL_COLUMNS,
    RACK_COLUMNS,
    SERVER_COLUMNS,
    SHELF_COLUMNS,
    UPS_COLUMNS,
    Capacity,
    Column,
    Table,
)
from checker.derive.fields import FactField, FieldType, derived, written
from checker.derive.knowledge import Knowledge, builtin
from checker.derive.rows import Block, Header, Row, made_rows
from checker.load import models as m
from checker.load.build import ENTITIES, Inventory, Placed, ServerEntry, placed_fields, server_fields
from checker.source.parse import Src
from checker.source.reader import inner_models as _inner_models


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
    # Policy thresholds (checker.yaml): models above this size are large; the
    # share of a capacity to keep free.
    large_model_params_b: float = 1.0
    headroom_pct: float = 10.0
    support_level: str = "24x7"  # expected of GPU servers


class Derivation:
    """One inventory's facts being built: the inventory, its capacity, the
    context, and what several kinds read, worked out once: the workload fit
    figures (server and workload facts both read them, checker.derive.fit).
    build_all makes one per call, so nothing derived outlives the call but
    what `carried` keeps: the resident process's, for the next command."""

    def __init__(self, inv: Inventory, cap: Capacity, ctx: Context, carried: Carried | None = None) -> None:
        self.inv = inv
        self.cap = cap
        self.ctx = ctx
        self.carried = carried  # what the server rows are carried in (checker.derive.carried_rows)

    @cached_property
    def server_ids(self) -> dict[str, str]:
        """Each server's entity id, by name: the server and software kinds all need it."""
        names = list(self.inv.servers)
        return dict(zip(names, entity_ids("server", names), strict=True))

    def server_id(self, name: str) -> str:
        """A server's entity id: from server_ids where they were all made (a process
        of its own), else made for it alone (the resident process makes the ids of
        the servers whose facts it makes again: checker.derive.carried_rows)."""
        ids = self.__dict__.get("server_ids")
        return ids[name] if ids is not None else entity_id("server", name)

    @cached_property
    def server_runs(self) -> carried_rows.Runs:
        """The servers cut into runs of one file, each digested once (the resident
        process's: what the server and software kinds carry is keyed by them)."""
        return carried_rows.server_runs(self.inv, self.ctx, self.workloads)

    @cached_property
    def workloads(self) -> dict[str, dict[str, Any]]:
        """Fit figures of every workload, with its model and server count."""
        return _workload_values(self.inv, self.ctx, self.carried)

    @cached_property
    def _software_ids(self) -> tuple[list[int], dict[int, m.Software | None]]:
        """Each server's software section by id, and each distinct section (the
        loader shares equal ones: a file's servers mostly have one)."""
        sections = server_fields(list(self.inv.servers.values()), "software")[0]
        ids = list(map(id, sections))
        return ids, dict(zip(ids, sections, strict=True))

    def with_software(self, has: Callable[[m.Software], bool]) -> carried_rows.Servers:
        """The servers, in their order, whose software section `has` something:
        asked once per distinct section, the servers picked at C speed (the
        software kinds' facts are made of those only; most fleets install no
        JAX, many no container)."""
        ids, sections = self._software_ids
        answer = {key: sw is not None and has(sw) for key, sw in sections.items()}
        return list(itertools.compress(self.inv.servers.items(), map(answer.__getitem__, ids)))


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

    def field_types(self) -> Mapping[str, FieldType]:
        """Each field's type by name: made once (each rule of the kind asks, three times)."""
        return self._field_types

    @cached_property
    def _field_types(self) -> Mapping[str, FieldType]:
        return MappingProxyType({f.name: f.type for f in self.fields})

    def field(self, name: str) -> FactField | None:
        return next((f for f in self.fields if f.name == name), None)


Columns = dict[tuple[str, ...], list[Any]]


def _column(places: Sequence[Placed[Any]], path: tuple[str, ...], memo: Columns) -> list[Any]:
    """One inventory path read from every model placed at `places` (None where a
    step is absent), its first step a column at a time (placed_fields: a kept
    facility's racks and feeds make no model); `memo` keeps the columns of path
    prefixes (`psu` for psu.count and psu.rating_w)."""
    column = memo.get(path)
    if column is not None:
        return column
    if len(path) == 1:
        column = placed_fields(places, path[0])[0]
    else:
        parent = _column(places, path[:-1], memo)
        get = operator.attrgetter(path[-1])
        try:
            column = list(map(get, parent))  # at C speed while no step is absent
        except AttributeError:
            column = [None if value is None else get(value) for value in parent]
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
    places: Sequence[Placed[Any]],
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
            return _normal(_column(places, f.path, memo), f.type)
        given = columns.get(f.name)
        return given if given is not None else _normal([d.get(f.name) for d in derived], f.type)

    return _assemble([f.name for f in fields], [column(f) for f in fields], len(places), headers)


def _assemble(
    names: list[str], cells: list[Sequence[Any]], count: int, headers: dict[tuple[str, ...], Header]
) -> list[Row]:
    """One row per entity, its cells in column order and taken by zip() at C
    speed; a column no entity has is left out of the header. Rows with the
    same columns share one header (from `headers`)."""
    kept = [(name, cell) for name, cell in zip(names, cells, strict=True) if _any_value(cell)]
    kept_names = tuple(name for name, _ in kept)
    header = headers.get(kept_names) or headers.setdefault(kept_names, Header(kept_names))
    rows = zip(*(cell for _, cell in kept), strict=True) if kept else [()] * count
    block = Block(frozenset(name for name, cell in kept if _one_object(cell)))
    # Whether a cell is NaN (unequal to itself), asked of each column at C speed: with
    # none, no row needs asking (Row.has_nan); with one, each row is asked as usual.
    nan = None if any(any(map(operator.ne, cell, cell)) for _, cell in kept) else False
    return made_rows(header, rows, count, nan, block)


def _one_object(cells: Sequence[Any]) -> bool:
    """Whether every cell is one object (a Block's alike column), asked at C
    speed: the same object is the same value of the same type, as the rules'
    memo tells values apart (1, 1.0 and true are not alike)."""
    return not cells or all(map(operator.is_, cells, itertools.repeat(cells[0])))


def _any_value(cell: Sequence[Any]) -> bool:
    """Whether any entity has a value in this column: the first one not None
    ends the scan (most columns have a value in their first entity; counting
    the Nones read all of every column)."""
    return any(map(operator.is_not, cell, itertools.repeat(None)))


Headers = dict[tuple[str, ...], Header]  # the header of each set of columns
# An entity's id, its placed model and the derived values not given as columns.
Entry = tuple[str, Placed[Any], Mapping[str, Any]]
ROWS_AT_ONCE = 5_000


def _facts(
    kind: str,
    fields: tuple[FactField, ...],
    entries: Sequence[Entry],
    columns: Mapping[str, Sequence[Any]] | None = None,
    headers: Headers | None = None,
) -> list[Fact]:
    """Facts of (entity id, placed model, derived values) entries, plus derived
    `columns` that hold one value per entry; rows of the same columns share one
    header of `headers` (default: of these facts only).

    Built ROWS_AT_ONCE entities at a time: a field's column is alive only while
    its rows are made, so what building costs beyond the facts themselves is
    the size of one part, not of the fleet (docs/performance.md, "Memory")."""
    facts: list[Fact] = []
    for first, rows in _rows(kind, fields, entries, columns, {} if headers is None else headers):
        part = entries[first : first + len(rows)]
        places = list(map(_PLACE_OF_ENTRY, part))
        facts += _made_facts(kind, list(map(_ID_OF_ENTRY, part)), rows, places)
    return facts


def _made_facts(
    kind: str, ids: Sequence[str], rows: Sequence[Row], places: Sequence[Placed[Any]]
) -> list[Fact]:
    """A fact of `kind` for each entity (its id, row and place), made a column at
    a time (core.made: 175,000 facts of a 100,000-server fleet)."""
    if not len(ids) == len(rows) == len(places):
        raise ValueError("facts of entities without a row or place each")  # a bug, not input
    set_kind, set_entity, set_values, set_file, set_src = _SET_FACT
    slots = ((set_kind, itertools.repeat(kind)), (set_entity, ids), (set_values, rows),
             (set_file, map(_FILE_OF, places)), (set_src, map(_SRC_OF, places)))
    facts: list[Fact] = made(Fact, len(ids), slots)
    return facts


_SET_FACT = tuple(setter(Fact, name) for name in ("kind", "entity", "values", "file", "src"))
_ID_OF_ENTRY, _PLACE_OF_ENTRY = operator.itemgetter(0), operator.itemgetter(1)
_FILE_OF, _SRC_OF, _PLACE_OF = (operator.attrgetter(name) for name in ("file", "src", "place"))


def _rows(
    kind: str,
    fields: tuple[FactField, ...],
    entries: Sequence[Entry],
    columns: Mapping[str, Sequence[Any]] | None,
    headers: dict[tuple[str, ...], Header],
) -> Iterator[tuple[int, list[Row]]]:
    """The entries' rows, ROWS_AT_ONCE at a time (with the index of the first):
    rows of the same columns share one header of `headers`."""
    _check_declared(kind, fields, [*(columns or {}), *{name for e in entries for name in e[2]}])
    for first in range(0, len(entries), ROWS_AT_ONCE):
        part = entries[first : first + ROWS_AT_ONCE]
        given = {name: column[first : first + ROWS_AT_ONCE] for name, column in (columns or {}).items()}
        yield first, _records(fields, [e[1] for e in part], [e[2] for e in part], given, headers)


class UndeclaredField(Exception):
    """A value computed for a fact under a name its kind does not declare: a
    bug (exit 3), since the rules would never see it."""


def _check_declared(kind: str, fields: tuple[FactField, ...], computed: Sequence[str]) -> None:
    declared = {f.name for f in fields if f.path is None}
    undeclared = sorted(set(computed) - declared)
    if undeclared:
        raise UndeclaredField(f"fact kind {kind}: computed but not declared: {', '.join(undeclared)}")


def _columns(spec: tuple[Column, ...]) -> tuple[FactField, ...]:
    """Capacity columns as derived fields: declared once, with unit and meaning."""
    return tuple(derived(c.name, c.type, c.unit, c.doc) for c in spec)


# ---------------------------------------------------------------- facility
HEADROOM_DOC = "share of a capacity to keep free (checker.yaml headroom_pct, default 10)"
LARGE_MODEL_DOC = (
    "models above this many billion parameters are large (checker.yaml large_model_params_b, default 1)"
)

FACILITY_FIELDS = (
    written("name", "string", "", "facility name"),
    written("location", "string", "", "free-text location"),
    written("altitude_m", "number", "m", "site elevation above sea level"),
    written("pue_target", "number", "", "maximum allowed PUE"),
    written("design_pue", "number", "", "design PUE, used when pue_model is absent"),
    written("pue_model.fixed_kw", "number", "kW", "fixed overhead: lighting, offices, security"),
    written("pue_model.cooling_kw_per_it_kw", "number", "kW/kW", "cooling power per IT kW"),
    written("pue_model.loss_fraction", "number", "", "UPS and distribution losses per IT kW"),
    written("power.it_capacity_kw", "number", "kW", "UPS / critical IT capacity, as written (it_capacity_kw: "
            "this or the UPS blocks')"),
    written(
        "power.ups.redundancy", "string", "", "N | N+1 | 2N | distributed | catcher: the UPS blocks' topology"
    ),
    written("power.utility_kw", "number", "kW", "utility supply"),
    derived("power.generators.count", "number", "", "standby generator sets (as written, or as listed)"),
    written("power.generators.capacity_kw", "number", "kW", "rating of each generator set (equal sets)"),
    derived("power.generators.largest_kw", "number", "kW", "the largest generator set: what N+1 may lose"),
    written("power.generators.redundancy", "string", "", "N | N+1 | 2N across the generator sets"),
    written(
        "power.basis",
        "string",
        "",
        "max | typical: the draw of the energy, cost and annual PUE figures (feeds, racks, the UPS "
        "and the utility are always checked on peak draw)",
    ),
    derived(
        "cooling.capacity_kw", "number", "kW",
        "heat rejection with all units running (as written, or the sum of the units listed)",
    ),
    derived("cooling.units", "number", "", "number of cooling units (as written, or how many are listed)"),
    derived("cooling_units_listed", "boolean", "", "cooling.units lists each unit with its capacity"),
    derived(
        "cooling.room_air.capacity_kw", "number", "kW",
        "the air handlers' capacity, every unit running (as written, or the sum of the units listed)",
    ),
    derived(
        "cooling.room_air.units", "number", "", "number of air handlers (as written, or how many are listed)"
    ),
    derived(
        "cooling.room_air.largest_unit_kw", "number", "kW",
        "the largest air handler (equal units: capacity_kw / units): what N+1 may lose",
    ),
    written("cooling.room_air.redundancy", "string", "", "N | N+1 | 2N across the air handlers"),
    written("cooling.redundancy", "string", "", "N | N+1 | 2N"),
    written("cooling.inlet_c", "number", "degC", "design inlet temperature"),
    written("cooling.ashrae_class", "string", "", "ASHRAE TC 9.9 class A1..A4, H1"),
    derived(
        "cooling.altitude_derating_c", "number", "degC",
        "how far the class's allowable maximum inlet drops at the site's altitude: for A1 and A2, 1 degC per "
        "300 m above 900 m (ASHRAE TC 9.9; unverified); 0 below 900 m or without altitude_m; absent for "
        "A3, A4 and H1 above 900 m, whose rates the tables do not hold",
    ),
    written("cooling.delta_t_c", "number", "degC", "air temperature rise across servers, for airflow"),
    written("cooling.water_class", "string", "", "ASHRAE liquid-cooling class of the facility water: W17-W+"),
    written("cooling.water_supply_c", "number", "degC", "design supply temperature of the facility water"),
    written("floor_max_kg_per_m2", "number", "kg/m2", "floor loading limit"),
    written("floor_concentrated_kn", "number", "kN", "raised-floor panel concentrated-load rating"),
    written("floor_rolling_kn", "number", "kN", "raised-floor panel rolling-load rating"),
    written("energy_price_per_kwh", "number", "currency/kWh", "energy price"),
    written("currency", "string", "", "currency of energy_price_per_kwh"),
    *_columns(FACILITY_COLUMNS),
    derived("headroom_pct", "number", "%", HEADROOM_DOC),
    derived("knowledge.as_of", "date", "", "the date the compatibility tables are current to"),
    derived(
        "knowledge.age_days", "number", "days",
        "the audit date (--as-of) minus knowledge.as_of: how stale the tables are",
    ),
    derived(
        "knowledge.software_servers", "number", "",
        "servers of the facility with a software section (checked against the tables)",
    ),
)


# ASHRAE TC 9.9: the allowable maximum dry-bulb of classes A1 and A2 derates
# about 1 degC per 300 m above 900 m (the reference review of December 2026,
# unverified). The rates of A3, A4 and H1 are not in the tables: above 900 m
# their derating is left absent, and cooling.altitude-derating-unknown says so.
DERATE_ABOVE_M = 900.0
DERATE_M_PER_C = 300.0
DERATED_CLASSES = ("A1", "A2")


def _altitude_derating(fac: m.Facility) -> float | None:
    altitude = fac.altitude_m or 0.0
    if altitude <= DERATE_ABOVE_M:
        return 0.0
    klass = fac.cooling.ashrae_class if fac.cooling else None
    if klass is not None and klass not in DERATED_CLASSES:
        return None
    return round((altitude - DERATE_ABOVE_M) / DERATE_M_PER_C, 2)


def _unit_set(prefix: str, sets: Sequence[m.UnitSet | None]) -> dict[str, list[Any]]:
    """A unit set's figures as facts read them (m.UnitSet): its total whether
    written or listed, how many units, the largest; `units` as written may be a list."""
    return {
        f"{prefix}capacity_kw": [_whole(u.total_kw) if u else None for u in sets],
        f"{prefix}units": [u.unit_count if u else None for u in sets],
        f"{prefix}largest_unit_kw": [_whole(u.largest_kw) if u else None for u in sets],
    }


def _facilities(run: Derivation) -> list[Fact]:
    inv, cap, ctx = run.inv, run.cap, run.ctx
    names = list(inv.facilities)
    entries: list[Entry] = [(entity_id("facility", n), place, {}) for n, place in inv.facilities.items()]
    checked = dict.fromkeys(names, 0)
    servers = list(inv.servers.values())
    for entry, sw in zip(servers, server_fields(servers, "software")[0], strict=True):
        if sw is not None and entry.facility in checked:
            checked[entry.facility] += 1
    as_of = ctx.knowledge.as_of
    knowledge: dict[str, list[Any]] = {
        "knowledge.as_of": [as_of.isoformat()] * len(names),
        "knowledge.age_days": [(ctx.as_of - as_of).days] * len(names),
        "knowledge.software_servers": [checked[n] for n in names],
        "headroom_pct": [ctx.headroom_pct] * len(names),
    }
    plants = [place.value.cooling for place in inv.facilities.values()]
    generators = [p.value.power.generators if p.value.power else None for p in inv.facilities.values()]
    written_as: dict[str, list[Any]] = {
        "cooling.altitude_derating_c": [_altitude_derating(p.value) for p in inv.facilities.values()],
        "cooling.capacity_kw": [_whole(c.total_kw) if c else None for c in plants],
        "cooling.units": [c.unit_count if c else None for c in plants],
        "cooling_units_listed": [isinstance(c.units, list) if c else None for c in plants],
        **_unit_set("cooling.room_air.", [c.room_air if c else None for c in plants]),
        "power.generators.count": [g.set_count if g else None for g in generators],
        "power.generators.largest_kw": [_whole(g.largest_kw) if g else None for g in generators],
    }
    columns = {**cap.facilities.cells_for(names), **knowledge, **written_as}
    return _facts("facility", FACILITY_FIELDS, entries, columns)


# ---------------------------------------------------------------- cooling unit
COOLING_UNIT_FIELDS = (
    derived("facility", "string", "", "facility whose plant the unit is in"),
    written("name", "string", "", "unit name"),
    written("capacity_kw", "number", "kW", "heat the unit rejects"),
    *_columns(COOLING_UNIT_COLUMNS),
)


def _facility_parts(
    run: Derivation,
    kind: str,
    fields: tuple[FactField, ...],
    figures: Table[Any],
    own: Mapping[str, list[Any]] | None = None,
    **same: Any,
) -> list[Fact]:
    """Facts of a facility's parts keyed (facility, name), a cooling unit, UPS block
    or CDU: their figures from `figures` (a capacity table) and `own` (a column
    each, in the parts' order), `same` for every one."""
    parts = getattr(run.inv, ENTITIES[kind].table)
    keys = list(parts)
    entries: list[Entry] = [(entity_id(kind, k), p, {}) for k, p in parts.items()]
    columns = {
        **figures.cells_for(keys),
        **(own or {}),
        "facility": [k[0] for k in keys],
        **{name: [value] * len(keys) for name, value in same.items()},
    }
    return _facts(kind, fields, entries, columns)


def _cooling_units(run: Derivation) -> list[Fact]:
    return _facility_parts(run, "cooling_unit", COOLING_UNIT_FIELDS, run.cap.cooling_units)


# A circuit's rating, written alike on a feed and a panel (m.Feed, m.Panel: feed_kw).
RATING_FIELDS = (
    written("voltage", "number", "V", "line-to-line voltage for three-phase"),
    written("amps", "number", "A", "breaker rating"),
    written("phase", "number", "", "1 | 3"),
    written(
        "max_utilization", "number", "%",
        "continuous-load limit, default 80: NEC 210.20(A) and common operator policy (IEC 60364-4-43 "
        "sets no blanket figure, I_B <= I_n <= I_Z: at IEC sites it is operator policy)",
    ),
    written("power_factor", "number", "", "power factor"),
)


# ---------------------------------------------------------------- UPS block
UPS_FIELDS = (
    derived("facility", "string", "", "facility whose UPS the block is"),
    written("name", "string", "", "block name"),
    written("reserve", "boolean", "", "a catcher's reserve block"),
    written("mechanical_kw", "number", "kW", "cooling that rides on the block (CDU and water pumps)"),
    written("mechanical_transfer_to", "string", "", "the block its cooling moves to when it fails"),
    written("mechanical_redundant", "boolean", "", "other pumps carry the flow without its own"),
    *_columns(UPS_COLUMNS),
)


def _ups_blocks(run: Derivation) -> list[Fact]:
    return _facility_parts(run, "ups", UPS_FIELDS, run.cap.ups_blocks)


# ---------------------------------------------------------------- panel
PANEL_FIELDS = (
    derived("facility", "string", "", "facility whose distribution the panel is"),
    written("name", "string", "", "panel name"),
    *RATING_FIELDS,  # as a feed's: the upstream breaker (panel main, PDU output, busway feed)
    written("ups", "string", "", "the UPS block it is fed from"),
    *_columns(PANEL_COLUMNS),
)


def _panels(run: Derivation) -> list[Fact]:
    return _facility_parts(run, "panel", PANEL_FIELDS, run.cap.panels)


# ---------------------------------------------------------------- CDU
CDU_FIELDS = (
    derived("facility", "string", "", "facility the CDU is in"),
    written("name", "string", "", "CDU name"),
    derived(
        "capacity_kw", "number", "kW",
        "heat it moves to the facility water with every unit running (as written, or the sum of the units "
        "listed)",
    ),
    derived(
        "units", "number", "", "CDUs (or modules) that share its racks (as written, or how many are listed)"
    ),
    derived("units_listed", "boolean", "", "units lists each CDU with its capacity"),
    written("redundancy", "string", "", "N | N+1 | 2N across its units"),
    *_columns(CDU_COLUMNS),
    derived("headroom_pct", "number", "%", HEADROOM_DOC),
)


def _cdus(run: Derivation) -> list[Fact]:
    cdus = [p.value for p in run.inv.cdus.values()]
    own = _unit_set("", cdus)
    own.pop("largest_unit_kw")  # a column of the capacity table (CDU_COLUMNS)
    own["units_listed"] = [isinstance(c.units, list) for c in cdus]
    return _facility_parts(run, "cdu", CDU_FIELDS, run.cap.cdus, own, headroom_pct=run.ctx.headroom_pct)


# ---------------------------------------------------------------- power shelf
SHELF_FIELDS = (
    derived("facility", "string", "", "facility its system is in"),
    derived("rack", "string", "", "rack its system fills"),
    derived("server", "string", "", "the rack-scale system (a server with trays) it powers"),
    derived("name", "string", "", "its number among its system's shelves, 1 to psu.count"),
    *_columns(SHELF_COLUMNS),
)


def _shelves(run: Derivation) -> list[Fact]:
    keys = list(run.inv.shelves)
    entries: list[Entry] = [(entity_id("shelf", k), p, {}) for k, p in run.inv.shelves.items()]
    columns = {
        **run.cap.shelves.cells_for(keys),
        "facility": [k[0] for k in keys],
        "rack": [k[1] for k in keys],
        "server": [k[2] for k in keys],
        "name": [k[3] for k in keys],
    }
    return _facts("shelf", SHELF_FIELDS, entries, columns)


# ---------------------------------------------------------------- rack
RACK_FIELDS = (
    derived("facility", "string", "", "facility the rack is in"),
    written("name", "string", "", "rack name"),
    written("u_height", "number", "U", "rack height"),
    written("weight_kg", "number", "kg", "empty rack weight"),
    written("max_weight_kg", "number", "kg", "rated static load"),
    written("footprint_m2", "number", "m2", "floor area"),
    written("cooling", "string", "", "air | rear-door | liquid"),
    written("cooling_kw", "number", "kW", "heat this position can reject"),
    written("redundancy", "string", "", "N | N+1 | 2N"),
    written("row", "string", "", "the row the rack stands in"),
    *_columns(RACK_COLUMNS),
    derived("headroom_pct", "number", "%", HEADROOM_DOC),
)


def _racks(run: Derivation) -> list[Fact]:
    return _table_facts(run, "rack", RACK_FIELDS, run.inv.racks, run.cap.racks, {"facility": 0},
                        {"headroom_pct": run.ctx.headroom_pct})


def _table_facts(
    run: Derivation, kind: str, fields: tuple[FactField, ...], placed: Mapping[Any, Placed[Any]],
    table: Table[Any], parts: Mapping[str, int], constants: Mapping[str, Any],
) -> list[Fact]:
    """The facts of the entities of a capacity table (racks, feeds: `placed`, in
    the table's order): its cells, the `parts` of each one's key (a field, the
    part's position in the key) and the `constants`. In the resident process
    those whose inputs are the last command's are its facts (carried_rows.table_facts);
    in a process of its own, the rows of a kept file's entities whose figures
    are the last run's are read from the cache folder (kept_tables)."""
    keys = list(placed)
    places = list(placed.values())
    ids = entity_ids(kind, keys)

    def rows_of(some: Sequence[int], headers: Headers) -> list[Row]:
        entries: list[Entry] = [(ids[i], places[i], _NO_VALUES) for i in some]
        columns = {
            **table.cells_for(keys, some),
            **{name: [keys[i][at] for i in some] for name, at in parts.items()},
            **{name: [value] * len(some) for name, value in constants.items()},
        }
        return [row for _, rows in _rows(kind, fields, entries, columns, headers) for row in rows]

    def build(some: Sequence[int], headers: Headers) -> list[Fact]:
        return _made_facts(kind, [ids[i] for i in some], rows_of(some, headers), [places[i] for i in some])

    constant = sorted(constants.items())
    if run.carried is not None:
        return carried_rows.table_facts(run.carried, kind, places, table, constant, build)
    if not run.inv.kept:  # nothing kept: nothing to read back
        return build(range(len(keys)), {})
    order = [f.name for f in fields]
    rows = kept_tables.table_rows(run.inv, kind, places, table, constant, rows_of, order)
    return _made_facts(kind, ids, rows, places)


# ---------------------------------------------------------------- feed
FEED_FIELDS = (
    derived("facility", "string", "", "facility of the feed's rack"),
    derived("rack", "string", "", "rack the feed powers"),
    written("name", "string", "", "feed name"),
    written("side", "string", "", "A | B (2N racks)"),
    *RATING_FIELDS,
    written("panel", "string", "", "the panel (power.panels) it is a circuit or tap-off of"),
    *_columns(FEED_COLUMNS),
)


def _feeds(run: Derivation) -> list[Fact]:
    key_parts = {"facility": 0, "rack": 1}
    return _table_facts(run, "feed", FEED_FIELDS, run.inv.feeds, run.cap.feeds, key_parts, {})


# ---------------------------------------------------------------- server

SUPPORT_FIELDS = (
    derived("support.checked_against", "date", "", "rollout_date, or the audit date (--as-of) without one"),
    derived("support.days_after_rollout", "number", "days", "support.until minus support.checked_against"),
    derived("support.horizon_days", "number", "days", "warn when support ends this soon after rollout "
       "(checker.yaml support_horizon_days, default 365)"),
    derived("support.level_rank", "number", "", "support.level ordered: none 0, nbd 1, 8x5 2, 24x7 3"),
    derived(
        "support.expected_level", "string", "",
        "the level GPU servers are expected to have (checker.yaml support_level, default 24x7)",
    ),
    derived("support.expected_rank", "number", "", "support.expected_level ordered like support.level_rank"),
)

SUPPORT_RANK = {"none": 0, "nbd": 1, "8x5": 2, "24x7": 3}

SERVER_FIT_FIELDS = (
    derived("workload_task", "string", "", "task of the server's workload"),
    derived("workload_servers", "number", "", "servers that run the server's workload"),
    derived("workload_params_b", "number", "billion", "parameters of the server's workload's model"),
    derived("workload_large_model_params_b", "number", "billion", LARGE_MODEL_DOC),
    derived("workload_framework", "string", "", "framework the server's workload needs"),
    derived("workload_dataset_tb", "number", "TB", "dataset of the server's workload"),
    derived("workload_memory_required_gb", "number", "GB", "GPU memory the server's workload needs"),
    derived("framework_installed", "boolean", "", "the workload's framework is in software.frameworks"),
)

SERVER_FIELDS = (
    written("name", "string", "", "server name"),
    derived("facility", "string", "", "facility of the server's document"),
    written("rack", "string", "", "rack name"),
    written("model", "string", "", "catalog server model"),
    written("position", "number", "U", "lowest U occupied (absent: not rack-mounted)"),
    written("u_height", "number", "U", "height"),
    written("weight_kg", "number", "kg", "weight"),
    written("power_w.max", "number", "W", "maximum wall draw"),
    written("power_w.typical", "number", "W", "typical wall draw"),
    written(
        "power_cap_w", "number", "W",
        "enforced, persistent cap on wall draw (BMC / Redfish power capping or a power-shelf policy; "
        "not nvidia-smi -pl, which limits GPU board power only and resets at reboot); "
        "replaces power_w.max wherever peak draw counts",
    ),
    written("psu.count", "number", "", "power supplies (a rack-scale system: its power shelves)"),
    written("psu.rating_w", "number", "W", "rating of one PSU (or power shelf)"),
    written("psu.redundant", "number", "", "PSUs that may fail (the +N)"),
    written("psu.per_side", "number", "", "PSUs on the smaller side of a 2N rack (default count // 2)"),
    written("psu.efficiency", "string", "", "80 PLUS level"),
    written("psu.phase", "number", "", "1: single-phase PSUs; 3: three-phase input (power shelves)"),
    written("psu.input_v.min", "number", "V", "lowest AC input voltage the PSUs are rated for"),
    written("psu.input_v.max", "number", "V", "highest AC input voltage the PSUs are rated for"),
    written("cooling", "string", "", "air | liquid"),
    written("liquid_fraction", "number", "", "share of the heat that goes to liquid (0-1)"),
    written(
        "max_coolant_supply_c", "number", "degC", "warmest coolant supply the equipment is specified for"
    ),
    written("inlet_c.min", "number", "degC", "lowest inlet temperature the equipment is specified for"),
    written("inlet_c.max", "number", "degC", "highest inlet temperature the equipment is specified for"),
    written("gpu.model", "string", "", "catalog GPU model"),
    written("gpu.count", "number", "", "GPUs (of each compute tray, for a rack-scale system)"),
    written(
        "trays", "number", "", "compute trays of a rack-scale system, each a node (gpu, cpu, memory per tray)"
    ),
    written("busbar_w", "number", "W", "rating of a rack-scale system's DC busbar"),
    written("cpu.sockets", "number", "", "CPU sockets"),
    written("cpu.pcie_lanes", "number", "", "PCIe lanes"),
    written("memory_gb", "number", "GB", "system memory (of each compute tray, for a rack-scale system)"),
    written("storage.nvme_tb", "number", "TB", "NVMe capacity"),
    written("storage.raid", "string", "", "none | 0 | 1 | 5 | 6 | 10"),
    written("storage.scratch", "boolean", "", "local NVMe is a scratch or cache tier (data lives elsewhere)"),
    written("network.fabric", "string", "", "infiniband | roce | ethernet"),
    written("network.gbps", "number", "Gb/s", "per-port speed"),
    written("network.ports", "number", "", "fabric ports"),
    written("network.nvlink", "boolean", "", "NVLink between the GPUs"),
    written("network.nvlink_domain", "number", "", "GPUs in one NVLink domain (NVL72: 72)"),
    written("network.nvlink_bridge", "number", "", "GPUs one NVLink bridge joins (2 or 4)"),
    written("software.os", "string", "", "operating system"),
    written("software.driver", "string", "", "NVIDIA driver version"),
    written("software.cuda", "string", "", "CUDA version the software is built for"),
    written("software.rocm", "string", "", "ROCm version"),
    written("software.cudnn", "string", "", "the host's cuDNN version"),
    written("software.nccl", "string", "", "the host's NCCL version"),
    written("support.vendor", "string", "", "support vendor"),
    written("support.level", "string", "", "24x7 | 8x5 | nbd | none"),
    written("support.until", "date", "", "end of the support contract"),
    derived("rollout_date", "date", "", "rollout date of the server's document"),
    written("workload", "string", "", "workload the server runs"),
    *_columns(SERVER_COLUMNS),
    *software.GPU_FIELDS,
    *software.SOFTWARE_FIELDS,
    *software.LIFECYCLE_FIELDS,
    *SUPPORT_FIELDS,
    *SERVER_FIT_FIELDS,
)


def _support(checked: dt.date, until: dt.date | None, level: str | None, ctx: Context) -> dict[str, Any]:
    return {
        "support.checked_against": checked.isoformat(),
        "support.days_after_rollout": (until - checked).days if until else None,
        "support.horizon_days": ctx.support_horizon_days,
        "support.level_rank": SUPPORT_RANK[level] if level else None,
        "support.expected_level": ctx.support_level,
        "support.expected_rank": SUPPORT_RANK[ctx.support_level],
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
        "workload_large_model_params_b": ctx.large_model_params_b,
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
    inv, cap = run.inv, run.cap
    if inv.kept and run.carried is None:  # a process of its own that kept files in a cache folder: rows too
        def rows_of(servers: carried_rows.Servers, cells: carried_rows.Cells, headers: Headers) -> list[Row]:
            return _server_rows(run, servers, cells, headers)

        order = [f.name for f in SERVER_FIELDS]
        rows = kept_rows.server_rows(inv, run.ctx, run.workloads, builtin(), cap.servers, rows_of, order)
        ids = run.server_ids
        return _made_facts("server", list(ids.values()), rows, list(map(_PLACE_OF, inv.servers.values())))
    capacity = cap.servers.cells_for(list(inv.servers))
    if run.carried is not None:
        def build(servers: carried_rows.Servers, cells: carried_rows.Cells, headers: Headers) -> list[Fact]:
            rows = _server_rows(run, servers, cells, headers)
            return [
                Fact("server", run.server_id(name), row, entry.place.file, entry.place.src)
                for (name, entry), row in zip(servers, rows, strict=True)
            ]

        headers = carried_rows.kept_headers(run.carried, "server")
        order = [f.name for f in SERVER_FIELDS]
        return carried_rows.server_rows(
            run.carried, run.server_runs, run.ctx, capacity, headers, build, order, _FactRows()
        )
    ids = run.server_ids
    entries: list[Entry] = [(ids[n], e.place, _NO_VALUES) for n, e in inv.servers.items()]
    columns = _server_columns(run, list(inv.servers.values()), capacity)
    return _facts("server", SERVER_FIELDS, entries, columns)


class _FactRows:
    """A fact's row (a Row: _server_rows made it), and the same fact of another."""

    def row_of(self, fact: Fact) -> Row:
        return cast(Row, fact.values)

    def remade(self, fact: Fact, row: Row) -> Fact:
        return Fact(fact.kind, fact.entity, row, fact.file, fact.src)


def _server_columns(
    run: Derivation, servers: Sequence[ServerEntry], capacity: Mapping[str, Sequence[Any]]
) -> dict[str, Sequence[Any]]:
    """The derived columns of these servers (`capacity`: their capacity cells)."""
    rollout = _normal([e.rollout_date for e in servers], "date")
    facility = [entry.facility for entry in servers]
    derived_ = _derived(run.inv, run.ctx, run.workloads, servers)
    return {**capacity, **derived_, "facility": facility, "rollout_date": rollout}


def _server_rows(
    run: Derivation,
    servers: Sequence[tuple[str, ServerEntry]],
    capacity: Mapping[str, Sequence[Any]],
    headers: Headers,
) -> list[Row]:
    """The fact rows of these servers (of one file, in inventory order), as _servers makes them."""
    entries: list[Entry] = [(run.server_id(n), e.place, _NO_VALUES) for n, e in servers]
    columns = _server_columns(run, [e for _, e in servers], capacity)
    return [row for _, rows in _rows("server", SERVER_FIELDS, entries, columns, headers) for row in rows]


def _derived(
    inv: Inventory, ctx: Context, workloads: Mapping[str, dict[str, Any]], servers: Sequence[ServerEntry]
) -> dict[str, list[Any]]:
    """Catalog, software, support and workload values of every server, as columns.

    A fleet repeats a few configurations many times: each value is computed
    once per distinct input (GPU set-up, software stack, support dates,
    workload) and shared by every server that has it."""
    gpu_keys: list[Hashable] = []
    sw_keys: list[Hashable] = []
    support_keys: list[tuple[dt.date, dt.date | None, str | None]] = []
    fit_keys: list[Hashable] = []
    lifecycle_keys: list[tuple[str | None, dt.date]] = []
    for entry in servers:
        server, sw = entry.server, entry.server.software
        network, gpu = server.network, server.gpu
        links = (network.nvlink, network.nvlink_bridge, network.nvlink_domain) if network else None
        gpu_keys.append((gpu.model, gpu.count, links, server.trays, server.model) if gpu else None)
        sw_keys.append((sw.driver, sw.cuda, sw.rocm) if sw else None)
        # Without a rollout date the server is checked as of the audit date, not skipped.
        until = server.support.until if server.support else None
        level = server.support.level if server.support else None
        support_keys.append((entry.rollout_date or ctx.as_of, until, level))
        lifecycle_keys.append((sw.driver if sw else None, entry.rollout_date or ctx.as_of))
        # What _server_fit reads: the workload, and the names of the frameworks installed.
        fit_keys.append((server.workload, None if sw is None else tuple(sw.frameworks)))
    models = [entry.server for entry in servers]
    return {
        **_spread(gpu_keys, models, lambda server: _gpu_values(inv, server)),
        **_spread(sw_keys, models, lambda server: software.software_values(server.software, ctx.knowledge)),
        **_spread(support_keys, support_keys, lambda key: _support(*key, ctx)),
        **_spread(lifecycle_keys, lifecycle_keys, lambda key: software.lifecycle_values(*key, ctx.knowledge)),
        **_spread(fit_keys, models, lambda server: _server_fit(server, workloads, ctx)),
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
    # Each key hashed once (they are tuples), then every column spread by index.
    position = {k: i for i, k in enumerate(rows)}
    at = list(map(position.__getitem__, keys))
    distinct = list(rows.values())
    return {name: list(map([row.get(name) for row in distinct].__getitem__, at)) for name in names}


def _of_servers(
    run: Derivation,
    kind: str,
    build: Callable[[Derivation, carried_rows.Servers, Headers], list[Fact]],
    has: Callable[[m.Software], bool],
) -> list[Fact]:
    """A kind made of the servers' software (`build`: its facts of these servers, in
    their order, under headers of `headers`). In the resident process each
    file's run of servers gets the facts the last commands made of it while
    what they are made from is the same (checker.derive.carried_rows.server_facts),
    and rows of the same columns share one header, this command's and the last ones'."""
    if run.carried is None:  # the others have nothing of the kind: they make no fact of it
        return build(run, run.with_software(has), {})
    headers = carried_rows.kept_headers(run.carried, kind)

    def made(servers: carried_rows.Servers) -> list[Fact]:
        return build(run, servers, headers)

    return carried_rows.server_facts(run.carried, run.server_runs, run.ctx, kind, made)


# ---------------------------------------------------------------- framework


def _frameworks(run: Derivation) -> list[Fact]:
    return _of_servers(run, "framework", _frameworks_of, lambda sw: bool(sw.frameworks))


def _frameworks_of(run: Derivation, servers: carried_rows.Servers, headers: Headers) -> list[Fact]:
    inv, ctx = run.inv, run.ctx
    entries: list[Entry] = []
    keys: list[Hashable] = []
    installs: list[tuple[str, m.FrameworkInstall, m.Software, str | None, str | None]] = []
    owners: list[str] = []
    sections, gpus, cpus = server_fields([e for _, e in servers], "software", "gpu", "cpu")
    for (name, entry), sw, ref, cpu in zip(servers, sections, gpus, cpus, strict=True):
        if sw is None:
            continue
        gpu = ref.model if ref else None
        platform = cpu.arch if cpu else None
        for fw, install in sw.frameworks.items():
            src = entry.place.src.descend("software", "frameworks", fw)
            place = Placed(install, entry.place.file, src)
            entries.append((run.server_id(name), place, _NO_VALUES))
            # What software.framework_values reads of the install and its server.
            keys.append((fw, install, sw.driver, sw.cuda, sw.rocm, gpu, platform))
            installs.append((fw, install, sw, gpu, platform))
            owners.append(name)

    def values(item: tuple[str, m.FrameworkInstall, m.Software, str | None, str | None]) -> dict[str, Any]:
        fw, install, sw, gpu_name, platform = item
        gpu = inv.gpu_models.get(gpu_name) if gpu_name is not None else None
        return software.framework_values(fw, install, sw, gpu.value if gpu else None, ctx.knowledge, platform)

    columns = {**_spread(keys, installs, values), "server": owners}
    return _facts("framework", software.FRAMEWORK_FIELDS, entries, columns, headers)


# ---------------------------------------------------------------- container


def _containers(run: Derivation) -> list[Fact]:
    return _of_servers(run, "container", _containers_of, lambda sw: bool(sw.containers))


def _containers_of(run: Derivation, servers: carried_rows.Servers, headers: Headers) -> list[Fact]:
    inv, ctx = run.inv, run.ctx
    entries: list[Entry] = []
    keys: list[Hashable] = []
    items: list[tuple[m.Container, m.Software, str | None]] = []
    owners: list[str] = []
    sections, gpus = server_fields([e for _, e in servers], "software", "gpu")
    for (name, entry), sw, ref in zip(servers, sections, gpus, strict=True):
        if sw is None:
            continue
        gpu = ref.model if ref else None
        for i, container in enumerate(sw.containers):
            src = entry.place.src.descend("software", "containers", i)
            entries.append((run.server_id(name), Placed(container, entry.place.file, src), _NO_VALUES))
            # What software.container_values reads of the container and its server.
            keys.append((container, sw.driver, gpu))
            items.append((container, sw, gpu))
            owners.append(name)

    def values(item: tuple[m.Container, m.Software, str | None]) -> dict[str, Any]:
        container, sw, gpu_name = item
        gpu = inv.gpu_models.get(gpu_name) if gpu_name is not None else None
        return software.container_values(container, sw, gpu.value if gpu else None, ctx.knowledge)

    columns = {**_spread(keys, items, values), "server": owners}
    return _facts("container", software.CONTAINER_FIELDS, entries, columns, headers)


# ---------------------------------------------------------------- engine


def _engines(run: Derivation) -> list[Fact]:
    return _of_servers(run, "engine", _engines_of, lambda sw: bool(sw.engines()))


def _engines_of(run: Derivation, servers: carried_rows.Servers, headers: Headers) -> list[Fact]:
    inv, ctx = run.inv, run.ctx
    entries: list[Entry] = []
    keys: list[Hashable] = []
    items: list[tuple[str, m.EngineInstall, m.Software, str | None]] = []
    owners: list[str] = []
    sections, gpus = server_fields([e for _, e in servers], "software", "gpu")
    for (name, entry), sw, ref in zip(servers, sections, gpus, strict=True):
        if sw is None:
            continue
        gpu = ref.model if ref else None
        for engine, install in sw.engines().items():
            place = Placed(install, entry.place.file, entry.place.src.descend("software", engine))
            entries.append((run.server_id(name), place, _NO_VALUES))
            # What software.engine_values reads of the install and its server.
            keys.append((engine, install, sw.driver, tuple(sw.frameworks.items()), gpu))
            items.append((engine, install, sw, gpu))
            owners.append(name)

    def values(item: tuple[str, m.EngineInstall, m.Software, str | None]) -> dict[str, Any]:
        engine, install, sw, gpu_name = item
        gpu = inv.gpu_models.get(gpu_name) if gpu_name is not None else None
        return software.engine_values(engine, install, sw, gpu.value if gpu else None, ctx.knowledge)

    columns = {**_spread(keys, items, values), "server": owners}
    return _facts("engine", software.ENGINE_FIELDS, entries, columns, headers)


# ---------------------------------------------------------------- jax


def _jax(run: Derivation) -> list[Fact]:
    return _of_servers(run, "jax", _jax_of, lambda sw: sw.jax is not None)


def _jax_of(run: Derivation, servers: carried_rows.Servers, headers: Headers) -> list[Fact]:
    inv, ctx = run.inv, run.ctx
    entries: list[Entry] = []
    keys: list[Hashable] = []
    items: list[tuple[m.JaxInstall, m.Software, str | None, int | None]] = []
    owners: list[str] = []
    sections, gpus, trays = server_fields([e for _, e in servers], "software", "gpu", "trays")
    for (name, entry), sw, ref, tray_count in zip(servers, sections, gpus, trays, strict=True):
        if sw is None or sw.jax is None:
            continue
        gpu = ref.model if ref else None
        devices = ref.count * m.nodes_of(tray_count) if ref else None
        place = Placed(sw.jax, entry.place.file, entry.place.src.descend("software", "jax"))
        entries.append((run.server_id(name), place, _NO_VALUES))
        # What software.jax_values reads of the install and its server.
        keys.append((sw.jax, sw.driver, sw.cuda, sw.cudnn, sw.nccl, tuple(sw.containers), gpu, devices))
        items.append((sw.jax, sw, gpu, devices))
        owners.append(name)

    def values(item: tuple[m.JaxInstall, m.Software, str | None, int | None]) -> dict[str, Any]:
        install, sw, gpu_name, devices = item
        gpu = inv.gpu_models.get(gpu_name) if gpu_name is not None else None
        model = gpu.value if gpu else None
        logical = devices * model.logical_gpus if devices is not None and model is not None else devices
        return software.jax_values(install, sw, model, logical, ctx.knowledge)

    columns = {**_spread(keys, items, values), "server": owners}
    return _facts("jax", software.JAX_FIELDS, entries, columns, headers)


# ---------------------------------------------------------------- workload

WORKLOAD_FIELDS = (
    written("name", "string", "", "workload name"),
    written("task", "string", "", "training | fine-tuning | inference"),
    written("params_b", "number", "billion", "model parameters"),
    written("precision", "string", "", "fp32 | bf16 | fp16 | fp8 | mxfp8 | int8 | int4 | nvfp4"),
    written("framework", "string", "", "framework that must be installed"),
    written("dataset_tb", "number", "TB", "dataset size"),
    written("tokens_b", "number", "billion", "training tokens"),
    written("deadline_days", "number", "days", "deadline"),
    written("model", "string", "", "catalog model (LanguageModels) whose shape it takes"),
    written("mode", "string", "", "training and fine-tuning: full | lora | qlora (default full)"),
    written("active_params_b", "number", "billion", "parameters used per token (a mixture of experts)"),
    written("layers", "number", "", "transformer layers (given, or the catalog model's)"),
    written("hidden_size", "number", "", "hidden size (given, or the catalog model's)"),
    written("kv_heads", "number", "", "key/value heads (given, or the catalog model's)"),
    written("head_dim", "number", "", "dimension of one attention head (given, or the catalog model's)"),
    written(
        "kv_elements", "number", "", "KV-cache elements per token and layer where attention compresses them"
    ),
    written("seq_len", "number", "tokens", "training: tokens per sequence"),
    written("micro_batch", "number", "", "training: sequences per GPU (default 1)"),
    written("context_len", "number", "tokens", "inference: tokens per session"),
    written("concurrency", "number", "", "inference: concurrent sessions (default 1)"),
    written("tensor_parallel", "number", "", "inference: GPUs a layer is split over (across servers too)"),
    written("pipeline_parallel", "number", "", "inference: stages the layers are split into"),
    written(
        "kv_precision", "string", "", "inference: KV-cache precision (default 16-bit; fp32 weights: fp32)"
    ),
    derived("server_count", "number", "", "servers that run it"),
    derived("large_model_params_b", "number", "billion", LARGE_MODEL_DOC),
    *fit.WORKLOAD_FIT_FIELDS,
)


def _workload_values(
    inv: Inventory, ctx: Context, carried: Carried | None = None
) -> dict[str, dict[str, Any]]:
    """Fit figures of every workload (checker.derive.fit), with its model and server count."""
    names = list(inv.workloads)
    gpus = {k: p.value for k, p in inv.gpu_models.items()}
    cols = fit.server_columns(list(inv.servers.values()), gpus, names, carried)
    models = [inv.workloads[n].value for n in names]
    values = fit.workload_values(models, cols, ctx.knowledge.fit)
    placed = cols.workload[cols.workload >= 0]
    counts = np.bincount(placed, minlength=len(names)).tolist()
    return {
        n: {**v, "model": mod, "server_count": c}
        for n, v, mod, c in zip(names, values, models, counts, strict=True)
    }


def _workloads(run: Derivation) -> list[Fact]:
    inv, large = run.inv, run.ctx.large_model_params_b
    entries = [
        (
            entity_id("workload", name), inv.workloads[name],
            {**{k: v for k, v in values.items() if k != "model"}, "large_model_params_b": large},
        )
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
            "cooling_unit",
            "one unit of a facility's cooling plant listed with its capacity (cooling.units)",
            COOLING_UNIT_FIELDS,
            _cooling_units,
            m.CoolingUnit,
        ),
        FactKind("cdu", "a coolant distribution unit and its racks", CDU_FIELDS, _cdus, m.Cdu),
        FactKind(
            "ups", "one block of a facility's UPS (power.ups.blocks)", UPS_FIELDS, _ups_blocks, m.UpsBlock
        ),
        FactKind(
            "panel",
            "distribution many feeds share behind one breaker: a panelboard, floor PDU or busway"
            " (power.panels)",
            PANEL_FIELDS,
            _panels,
            m.Panel,
        ),
        FactKind(
            "server", "a server, with catalog and defaults merged in", SERVER_FIELDS, _servers, m.Server
        ),
        FactKind(
            "shelf",
            "one power shelf of a rack-scale system (a server with trays): one of its psu.count PSUs",
            SHELF_FIELDS,
            _shelves,
            m.PowerShelf,
        ),
        FactKind(
            "workload", "a workload and the servers that run it", WORKLOAD_FIELDS, _workloads, m.Workload
        ),
        FactKind(
            "framework",
            "one framework installed on a server, with the server's GPU and driver (entity: the server)",
            software.FRAMEWORK_FIELDS,
            _frameworks,
            m.Software,
        ),
        FactKind(
            "container",
            "one container image a server runs, with what it brings and the server's GPU and driver "
            "(entity: the server)",
            software.CONTAINER_FIELDS,
            _containers,
            m.Container,
        ),
        FactKind(
            "engine",
            "one inference engine installed on a server (software.vllm, software.sglang, "
            "software.tensorrt_llm), with the server's torch, GPU and driver (entity: the server)",
            software.ENGINE_FIELDS,
            _engines,
            m.Software,
        ),
        FactKind(
            "jax",
            "JAX and its CUDA plugin on a server (software.jax), with the server's driver, CUDA, cuDNN, NCCL "
            "and GPU (entity: the server)",
            software.JAX_FIELDS,
            _jax,
            m.JaxInstall,
        ),
    )
}


def fact_kind(name: str) -> FactKind:
    """The registered kind, or a clear error naming the valid ones."""
    return lookup(REGISTRY, name, "fact kind")


def build_all(inv: Inventory, cap: Capacity, ctx: Context, carried: Carried | None = None) -> list[Fact]:
    """Every fact of the inventory. `carried`: the resident process's
    (checker.core.carried), which holds each file's server rows for the next
    command while what they are made from is the same (checker.derive.carried_rows)."""
    run = Derivation(inv, cap, ctx, carried)
    return [fact for kind in REGISTRY.values() for fact in kind.build(run)]
