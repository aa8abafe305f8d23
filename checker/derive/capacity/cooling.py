"""Cooling units: each unit of a facility's plant, and what is left while it is down.

A plant written as a list of units (`cooling.units: [{name, capacity_kw}]`)
has units of their own sizes. N+1 means any one unit may fail, so the plant
keeps its total minus the largest unit (facilities.py); capacity x (units -
1) / units holds only for equal units: 3 x 400 + 1 x 200 kW keeps 1,000 kW,
not 1,050 kW. Each unit's row says what the plant keeps without it.

A CDU set (`cdus[].units`) is sized the same way, by the same rule
(facilities.usable_kw): 3 x 600 + 1 x 300 kW at N+1 keeps 2,100 - 600 =
1,500 kW, where capacity x (units - 1) / units would say 1,575 kW (the
total minus the average unit, never less than minus the largest: for unequal
units it is always a false pass).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from checker.derive.capacity.facilities import usable_kw
from checker.derive.capacity.servers import F64, NAN
from checker.derive.capacity.table import Column, Table
from checker.load.build import Inventory

COOLING_UNIT_COLUMNS = (
    Column("plant_capacity_kw", "kW", "the facility's cooling with every unit running (cooling.capacity_kw)"),
    Column("share_pct", "%", "capacity_kw / plant_capacity_kw x 100"),
    Column(
        "remaining_kw", "kW", "plant_capacity_kw - capacity_kw: what the plant keeps while this unit is down"
    ),
    Column(
        "largest",
        "",
        "the plant's largest unit (the first of equal ones): the unit whose loss N+1 is sized for",
        "boolean",
    ),
    Column(
        "loss_utilization_pct", "%", "facility_heat_kw / remaining_kw x 100: the plant with this unit down"
    ),
    Column("facility_heat_kw", "kW", "heat the unit's facility rejects at peak (its heat_kw)", context=True),
    Column("plant_redundancy", "", "N | N+1 | 2N: the facility's cooling.redundancy", "string", context=True),
)


def cooling_unit_table(inv: Inventory, facility_heat_kw: F64) -> Table[tuple[str, str]]:
    keys = list(inv.cooling_units)
    fac_index = {name: i for i, name in enumerate(inv.facilities)}
    facility = np.asarray([fac_index[f] for f, _ in keys], dtype=np.intp)
    kw = np.asarray([p.value.capacity_kw for p in inv.cooling_units.values()], dtype=np.float64)
    n = len(inv.facilities)
    total = np.bincount(facility, weights=kw, minlength=n)[facility]
    # The first largest unit of each facility: sorted by facility, then size down, then order.
    order = np.lexsort((np.arange(len(kw)), -kw, facility))
    first = np.zeros(len(kw), dtype=bool)
    if len(order):
        first[order[np.concatenate(([True], facility[order][1:] != facility[order][:-1]))]] = True
    heat = facility_heat_kw[facility] if len(keys) else np.zeros(0)
    remaining = total - kw
    facs = [p.value for p in inv.facilities.values()]
    redundancy = np.asarray([f.cooling.redundancy if f.cooling else None for f in facs], dtype=object)
    with np.errstate(invalid="ignore", divide="ignore"):
        columns: dict[str, npt.NDArray[Any]] = {
            "plant_capacity_kw": total,
            "share_pct": 100.0 * kw / total,
            "remaining_kw": remaining,
            "largest": first.astype(np.float64),
            "loss_utilization_pct": np.where(remaining > 0, 100.0 * heat / remaining, NAN),
            "facility_heat_kw": heat,
            "plant_redundancy": redundancy[facility] if len(keys) else np.zeros(0, dtype=object),
        }
    return Table(keys, COOLING_UNIT_COLUMNS, columns)


CDU_COLUMNS = (
    Column("rack_count", "", "racks it serves (its racks and the racks of its rows)"),
    Column("liquid_heat_kw", "kW", "the liquid part of its racks' heat (their liquid_heat_kw) at peak"),
    Column(
        "largest_unit_kw",
        "kW",
        "its largest unit (equal units: capacity_kw / units): what N+1 may lose",
    ),
    Column(
        "usable_kw",
        "kW",
        "capacity_kw with the designed failure: N all; N+1 the total minus the largest unit; 2N half",
    ),
    Column("utilization_pct", "%", "liquid_heat_kw / usable_kw x 100"),
    Column("headroom_kw", "kW", "usable_kw - liquid_heat_kw"),
)


def cdu_table(inv: Inventory, rack_cdu: npt.NDArray[Any], rack_liquid_kw: F64) -> Table[tuple[str, str]]:
    """Each CDU against the liquid heat of the racks it serves. `rack_cdu` is each
    rack's CDU name (None: none), in the inventory's rack order."""
    keys = list(inv.cdus)
    index = {key: i for i, key in enumerate(keys)}
    rack_facility = [f for f, _ in inv.racks]
    which = np.asarray(
        [-1 if c is None else index.get((f, c), -1) for f, c in zip(rack_facility, rack_cdu, strict=True)],
        dtype=np.intp,
    )
    n = len(keys)
    on = which >= 0
    heat = np.bincount(which[on], weights=np.nan_to_num(rack_liquid_kw[on]), minlength=n)
    cdus = [p.value for p in inv.cdus.values()]
    usable = np.asarray([usable_kw(c) for c in cdus], dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        columns: dict[str, npt.NDArray[Any]] = {
            "rack_count": np.bincount(which[on], minlength=n).astype(np.float64),
            "liquid_heat_kw": heat,
            "largest_unit_kw": np.asarray([c.largest_kw for c in cdus], dtype=np.float64),
            "usable_kw": usable,
            "utilization_pct": np.where(usable > 0, 100.0 * heat / usable, NAN),
            "headroom_kw": usable - heat,
        }
    return Table(keys, CDU_COLUMNS, columns)
