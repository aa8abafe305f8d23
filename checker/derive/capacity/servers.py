"""Per-server columns: draw on branch circuits and per basis, PSUs, U placement.

Branch circuits (feeds, racks) see a server's maximum draw, or its enforced
`power_cap_w` where declared: breakers trip on peaks, never on typical draw
(NEC 210.20(A); IEC 60364-4-43, 433.1, protects a circuit for its design
current I_B <= I_n <= I_Z, and I_B for a server is its peak draw; the 80 %
of `max_utilization` is NEC's and operator policy, not IEC's). So do the UPS and the utility
(checker/derive/capacity/facilities.py). The facility's `power.basis` only chooses the draw
that the energy, cost and annual PUE figures use (`basis_w`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from checker.core.carried import Carried
from checker.derive.capacity.table import Column, Table
from checker.derive.carried_columns import Columns, per_item
from checker.load import models as m
from checker.load.build import Inventory, ServerEntry, server_fields

F64 = npt.NDArray[np.float64]
IDX = npt.NDArray[np.intp]
RackIndex = Mapping[tuple[str, str], int]  # each rack's index, by (facility, rack)
NAN = math.nan
# Wider than any rack (u_height <= 100) plus the tallest device: keeps racks apart
# in the one sorted pass that finds overlapping U ranges.
_U_SPAN = 256

SERVER_COLUMNS = (
    Column("peak_w", "W", "draw on branch circuits: power_cap_w where declared, else power_w.max"),
    Column("basis_w", "W", "draw per the facility's power.basis (capped by power_cap_w)"),
    Column("psu_usable_w", "W", "(psu.count - psu.redundant) x psu.rating_w"),
    Column("psu_total_w", "W", "psu.count x psu.rating_w: what every PSU together delivers"),
    Column("top_u", "U", "highest U occupied: position + u_height - 1 (rack-mounted servers)"),
    Column(
        "fills_rack",
        "",
        "a rack-scale system (trays) written without position and u_height: it takes U 1 to the top",
        "boolean",
    ),
    Column("busbar_pct", "%", "peak_w / busbar_w x 100: the system's DC busbar at peak draw"),
    Column("rack_u_height", "U", "height of the server's rack", context=True),
    Column("overlaps_with", "", "the server whose U range this one's overlaps (first in U order)", "string"),
    Column("rack_mounted", "", "whether the server has a position (takes U)", "boolean", context=True),
    Column("rack_redundancy", "", "N | N+1 | 2N of the server's rack", "string", context=True),
    Column("rack_cooling", "", "air | rear-door | liquid of the server's rack", "string", context=True),
    Column("facility_inlet_c", "degC", "design inlet temperature of the server's facility", context=True),
    Column(
        "liquid_share",
        "",
        "share of its heat to liquid: liquid_fraction, else 1 for cooling: liquid (absent: all air)",
    ),
    Column("liquid_heat_w", "W", "peak_w x liquid_share: heat to the CDU and the facility water"),
    Column("air_heat_w", "W", "peak_w - liquid_heat_w: heat to the room air"),
    Column(
        "facility_water_supply_c",
        "degC",
        "the facility water's supply temperature: cooling.water_supply_c, else the top of its "
        "cooling.water_class (W27: 27); absent for W+ without water_supply_c",
        context=True,
    ),
    Column("facility_water_class", "", "ASHRAE class of the facility water", "string", context=True),
)


@dataclass(frozen=True)
class ServerArrays:
    """What rack and facility aggregates need from the servers, one row each."""

    facility: IDX
    rack: IDX  # -1: the rack does not exist (a schema error already says so)
    peak_w: F64
    basis_w: F64
    u_height: F64  # NaN: not rack-mounted
    mounted: npt.NDArray[np.bool_]
    weight_kg: F64
    liquid: npt.NDArray[np.bool_]
    liquid_share: F64  # share of its heat that goes to liquid, 0-1
    # Each server's PSUs as an index into `psu_parts`, the distinct parts (the
    # loader shares one frozen part between servers that have the same), so
    # the feed checks work per part, not per server.
    psu: IDX
    psu_parts: tuple[m.Psu | None, ...]
    system: npt.NDArray[np.bool_]  # a rack-scale system (trays)


def pick(mask: npt.NDArray[np.bool_], values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """An object column: `values` where `mask`, else None (absent)."""
    out = np.full(len(mask), None, dtype=object)
    out[mask] = values[mask]
    return out


def at(values: npt.NDArray[Any], index: IDX, fill: Any) -> npt.NDArray[Any]:
    """values[index] per row, `fill` where the index is -1 (no such rack)."""
    out = np.full(len(index), fill, dtype=values.dtype)
    found = index >= 0
    out[found] = values[index[found]]
    return out


def _col(values: Sequence[float | None]) -> F64:
    return np.asarray([NAN if v is None else v for v in values], dtype=np.float64)


def _draws(inputs: ServerInputs, fac_typical: npt.NDArray[np.bool_]) -> tuple[F64, F64]:
    peak_max, typical, cap = inputs.peak_max, inputs.typical, inputs.cap
    # fmin ignores NaN: no cap leaves max draw, no typical falls back to max.
    peak = np.nan_to_num(np.fmin(peak_max, cap))
    basis = (
        np.where(fac_typical[inputs.facility], np.fmin(np.fmin(typical, peak_max), cap), peak)
        if len(peak)
        else peak
    )
    return peak, np.nan_to_num(basis)


@dataclass(frozen=True)
class ServerInputs:
    """What the server table reads of each server's model and place, one array per
    field, in the inventory's order: the reads done in Python, server by server
    (the rest of the table is numpy over these)."""

    facility: IDX
    rack: IDX  # -1: no such rack
    position: F64
    u_height: F64
    trays: F64
    peak_max: F64
    typical: F64
    cap: F64
    liquid: npt.NDArray[np.bool_]
    fraction: F64
    busbar: F64
    weight: F64
    psus: list[m.Psu | None]

    @classmethod
    def of(
        cls, entries: Sequence[ServerEntry], fac_index: Mapping[str, int], rack_index: RackIndex
    ) -> ServerInputs:
        rack, position, u_height, trays, power, cap, cooling, fraction, busbar, weight, psu = server_fields(
            entries, "rack", "position", "u_height", "trays", "power_w", "power_cap_w", "cooling",
            "liquid_fraction", "busbar_w", "weight_kg", "psu",
        )
        facilities = [e.facility for e in entries]
        places = zip(facilities, rack, strict=True)
        return cls(
            np.asarray([fac_index[f] for f in facilities], dtype=np.intp),
            np.asarray(list(map(rack_index.get, places, itertools.repeat(-1))), dtype=np.intp),
            _col(position),
            _col(u_height),
            _col(trays),
            _col([p.max if p else None for p in power]),
            _col([p.typical if p else None for p in power]),
            _col(cap),
            np.asarray([c == "liquid" for c in cooling], dtype=bool),
            _col(fraction),
            _col(busbar),
            _col(weight),
            psu,
        )

    def columns(self) -> Columns:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def server_inputs(
    inv: Inventory, fac_index: Mapping[str, int], rack_index: RackIndex, carried: Carried | None = None
) -> ServerInputs:
    """Each server's inputs (ServerInputs). In the resident process
    (checker.core.carried) a server whose entry is the last command's (the same
    object: it holds the server's model and where it stands) has the inputs it
    had then, while the facilities and racks are listed as they were (its
    indices are theirs); only the others are read."""
    entries = list(inv.servers.values())

    def read(some: Sequence[int]) -> Columns:
        return ServerInputs.of([entries[i] for i in some], fac_index, rack_index).columns()

    listed = (list(fac_index), list(rack_index))
    return ServerInputs(**per_item(carried, "server inputs", entries, listed, read))


def psu_map(psu: m.Psu | None, order: Sequence[str] | None) -> dict[str, int] | None:
    """How many of a server's PSUs go to each feed (or ATS) of its rack, where
    the inventory says (m.psu_feed_names: its own psu.feeds, else its rack's
    psu_order, `order`, dealt round; None: not said, the PSUs are spread as
    evenly as whole PSUs allow)."""
    names = m.psu_feed_names(psu, order)
    if names is None:
        return None
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return counts


def _psus(index: IDX, parts: tuple[m.Psu | None, ...]) -> dict[str, F64]:
    count = _col([p.count if p else None for p in parts])
    rating = _col([p.rating_w if p else None for p in parts])
    redundant = _col([p.redundant if p else None for p in parts])
    return {"psu_usable_w": ((count - redundant) * rating)[index], "psu_total_w": (count * rating)[index]}


def overlaps(rack: IDX, position: F64, u_height: F64, mounted: npt.NDArray[np.bool_]) -> IDX:
    """For each server, the index of an earlier (lower) server in the same rack whose
    U range [position, position + u_height) it intersects, else -1. One sort and a
    running maximum of range ends, not a comparison of every pair."""
    out = np.full(len(rack), -1, dtype=np.intp)
    idx = np.flatnonzero(mounted & (rack >= 0))
    if len(idx) < 2:
        return out
    order = idx[np.lexsort((idx, position[idx], rack[idx]))]
    start = rack[order].astype(np.int64) * _U_SPAN + position[order].astype(np.int64)
    end = start + u_height[order].astype(np.int64)
    n = len(order)
    reach = np.maximum.accumulate(end * n + np.arange(n))  # max end so far, and whose
    before = np.concatenate(([-1], reach[:-1]))
    hit = np.zeros(n, dtype=bool)
    hit[1:] = start[1:] < before[1:] // n
    out[order[hit]] = order[before[hit] % n]
    return out


def server_table(
    inv: Inventory,
    rack_index: dict[tuple[str, str], int],
    racks: dict[str, npt.NDArray[Any]],
    facilities: dict[str, npt.NDArray[Any]],
    carried: Carried | None = None,
) -> tuple[Table[str], ServerArrays]:
    fac_index = {name: i for i, name in enumerate(inv.facilities)}
    inputs = server_inputs(inv, fac_index, rack_index, carried)
    facility, rack = inputs.facility, inputs.rack
    position, u_height, trays = inputs.position, inputs.u_height, inputs.trays
    # A rack-scale system written without a place fills its rack: U 1 to the top.
    fills = ~np.isnan(trays) & np.isnan(position) & np.isnan(u_height) & (rack >= 0)
    position = np.where(fills, 1.0, position)
    u_height = np.where(fills, at(racks["u_height"], rack, NAN), u_height)
    mounted = ~np.isnan(position) & ~np.isnan(u_height)
    peak, basis = _draws(inputs, facilities["basis_typical"])
    redundancy = at(racks["redundancy"], rack, None)
    names = np.asarray(list(inv.servers), dtype=object)
    overlap = overlaps(rack, position, u_height, mounted)
    psu_index, psu_parts = _parts(inputs.psus)
    psus = _psus(psu_index, psu_parts)
    liquid, fraction = inputs.liquid, inputs.fraction
    share = np.where(np.isnan(fraction), liquid.astype(np.float64), fraction)
    columns: dict[str, npt.NDArray[Any]] = {
        "peak_w": peak,
        "basis_w": basis,
        **psus,
        "top_u": np.where(mounted, position + u_height - 1, NAN),
        "fills_rack": np.where(np.isnan(trays), NAN, fills.astype(np.float64)),
        "busbar_pct": 100.0 * peak / inputs.busbar,
        "rack_u_height": at(racks["u_height"], rack, NAN),
        "overlaps_with": pick(overlap >= 0, names[overlap]),
        "rack_mounted": mounted.astype(np.float64),
        "rack_redundancy": redundancy,
        "rack_cooling": at(racks["cooling"], rack, None),
        "facility_inlet_c": facilities["inlet_c"][facility],
        # Absent for air-cooled servers: all their heat is air, as peak_w says.
        "liquid_share": np.where(share > 0, share, NAN),
        "liquid_heat_w": np.where(share > 0, peak * share, NAN),
        "air_heat_w": np.where(share > 0, peak * (1.0 - share), NAN),
        "facility_water_supply_c": facilities["water_supply_c"][facility],
        "facility_water_class": facilities["water_class"][facility],
    }
    arrays = ServerArrays(
        facility,
        rack,
        peak,
        basis,
        np.where(mounted, u_height, NAN),
        mounted,
        inputs.weight,
        liquid,
        share,
        psu_index,
        psu_parts,
        ~np.isnan(trays),
    )
    return Table(list(inv.servers), SERVER_COLUMNS, columns), arrays


def _parts(psus: list[m.Psu | None]) -> tuple[IDX, tuple[m.Psu | None, ...]]:
    """Each server's PSU part as an index into the distinct parts (by identity:
    the loader shares equal ones), numbered in the order each first appears."""
    if not psus:
        return np.zeros(0, dtype=np.intp), ()
    ids = np.fromiter(map(id, psus), dtype=np.uintp, count=len(psus))
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # the distinct parts by first appearance
    rank = np.empty(len(order), dtype=np.intp)
    rank[order] = np.arange(len(order))
    return rank[inverse.reshape(-1)], tuple(psus[i] for i in first[order].tolist())
