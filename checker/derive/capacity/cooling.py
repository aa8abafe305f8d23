"""Cooling units: each unit of a facility's plant, and what is left while it is down.

A plant written as a list of units (`cooling.units: [{name, capacity_kw}]`)
has units of their own sizes. N+1 means any one unit may fail, so the plant
keeps its total minus the largest unit (facilities.py); capacity x (units -
1) / units holds only for equal units: 3 x 400 + 1 x 200 kW keeps 1,000 kW,
not 1,050 kW. Each unit's row says what the plant keeps without it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

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
