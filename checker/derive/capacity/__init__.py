"""Capacity with numpy: servers -> feeds and racks -> facilities, vectorised.

Each aggregate is a `Table` of typed columns keyed by the inventory's own keys
(servers.py, racks.py, facilities.py); facts and the JSON `capacity` section
read the same columns. No Python loop runs per server on the hot path: Python
only reads the validated models into arrays, numpy does the arithmetic and
the grouped sums.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from checker.core.carried import Carried
from checker.core.entity import entity_id
from checker.derive.capacity import feeds, servers, ups
from checker.derive.capacity import panels as panel_figures
from checker.derive.capacity import racks as rack_figures
from checker.derive.capacity.cooling import CDU_COLUMNS, COOLING_UNIT_COLUMNS, cdu_table, cooling_unit_table
from checker.derive.capacity.facilities import FACILITY_COLUMNS, facility_inputs, facility_table
from checker.derive.capacity.feeds import (
    FEED_COLUMNS,
    ats_arrays,
    feed_arrays,
    feed_kw,
    feed_loads,
    feed_table,
    pairs,
)
from checker.derive.capacity.panels import PANEL_COLUMNS, panel_table
from checker.derive.capacity.racks import rack_inputs, rack_table
from checker.derive.capacity.servers import server_table
from checker.derive.capacity.shelves import SHELF_COLUMNS, shelf_table
from checker.derive.capacity.table import Column, Table
from checker.load.build import Inventory

__all__ = [
    "CDU_COLUMNS",
    "COOLING_UNIT_COLUMNS",
    "FACILITY_COLUMNS",
    "FEED_COLUMNS",
    "PANEL_COLUMNS",
    "RACK_COLUMNS",
    "SERVER_COLUMNS",
    "SHELF_COLUMNS",
    "UPS_COLUMNS",
    "Capacity",
    "Column",
    "Table",
    "compute",
    "feed_kw",
]


# A server's own figures, then what it keeps when a feed fails (feeds.py).
SERVER_COLUMNS = servers.SERVER_COLUMNS + feeds.SERVER_COLUMNS
# A rack's own figures, then what a UPS block's failure does to it (ups.py).
RACK_COLUMNS = rack_figures.RACK_COLUMNS + ups.RACK_COLUMNS + panel_figures.RACK_COLUMNS
UPS_COLUMNS = ups.UPS_COLUMNS


@dataclass(frozen=True)
class Capacity:
    """Every aggregate, as tables keyed by the inventory's keys."""

    facilities: Table[str]
    racks: Table[tuple[str, str]]
    feeds: Table[tuple[str, str, str]]
    servers: Table[str]
    cooling_units: Table[tuple[str, str]]
    cdus: Table[tuple[str, str]]
    ups_blocks: Table[tuple[str, str]]
    shelves: Table[tuple[str, str, str, str]]
    panels: Table[tuple[str, str]]

    def to_json(self) -> dict[str, Any]:
        """The JSON `capacity` section: one object per entity, sorted by entity id."""
        return {
            "facilities": _entities("facility", self.facilities),
            "racks": _entities("rack", self.racks),
            "feeds": _entities("feed", self.feeds),
            "servers": _entities("server", self.servers),
            "cooling_units": _entities("cooling_unit", self.cooling_units),
            "cdus": _entities("cdu", self.cdus),
            "ups_blocks": _entities("ups", self.ups_blocks),
            "shelves": _entities("shelf", self.shelves),
            "panels": _entities("panel", self.panels),
        }


# Keys the JSON `capacity` rows carried before the figures took their fact names
# (0.1.0): kept beside the new names, since the JSON contract only ever adds.
_LEGACY = {
    "facility": {"servers": "server_count", "racks": "rack_count"},
    "rack": {
        "servers": "server_count",
        "feeds": "feed_count",
        "side_a_kw": "side_a_kw",
        "side_b_kw": "side_b_kw",
    },
}


def _entities(kind: str, table: Table[Any]) -> list[dict[str, Any]]:
    legacy = _LEGACY.get(kind, {})
    rows = []
    for key, row, full in zip(table.keys, table.figures, table.rows, strict=True):
        old = {name: full[new] for name, new in legacy.items() if new in full}
        if kind == "rack" and full.get("redundancy") != "2N":  # as in 0.1.0: sides only for 2N
            old.pop("side_a_kw", None), old.pop("side_b_kw", None)
        rows.append({"entity": entity_id(kind, key), **row, **old})
    return sorted(rows, key=lambda r: str(r["entity"]))


def compute(inv: Inventory, carried: Carried | None = None) -> Capacity:
    """Every capacity figure of the inventory. `carried`: the resident process's
    (checker.core.carried), which keeps what is read of each server's model for
    the next command (servers.server_inputs)."""
    rack_index = {k: i for i, k in enumerate(inv.racks)}
    racks = rack_inputs(inv)
    facilities = facility_inputs(inv)
    own, arrays = server_table(inv, rack_index, racks, facilities, carried)
    f, switches = feed_arrays(inv, rack_index), ats_arrays(inv, rack_index)
    cabled = pairs(inv, f, switches, racks["redundancy"], arrays)
    loads = feed_loads(inv, f, switches, racks["redundancy"], arrays, cabled)
    feed_columns, failover, ats_pct = loads.feeds, loads.servers, loads.ats_pct
    server_t = Table(own.keys, SERVER_COLUMNS, {**own.columns, **failover})
    side_pct = failover["psu_side_pct"]
    own_rack = rack_table(inv, racks, facilities, f, feed_columns, (switches, ats_pct), arrays, side_pct)
    ups_t, ups_racks, ups_capacity = ups.ups_table(inv, f, cabled, arrays, feed_columns["load_kw"])
    panels_t, panel_racks = panel_table(
        inv, f, cabled, arrays, (feed_columns["load_kw"], loads.line_kw), racks["redundancy"],
        (loads.scenarios, loads.rows),
    )
    rack_t = Table(own_rack.keys, RACK_COLUMNS, {**own_rack.columns, **ups_racks, **panel_racks})
    feed_t = feed_table(inv, f, feed_columns, rack_t.column("utilization_pct"))
    facility_t = facility_table(inv, racks["facility"], arrays, ups_capacity)
    units_t = cooling_unit_table(inv, facility_t.column("heat_kw"))
    cdus_t = cdu_table(inv, racks["cdu"], rack_t.column("liquid_heat_kw"))
    shelves_t = shelf_table(
        inv, f, switches, racks["redundancy"], arrays, cabled, (loads.scenarios, loads.rows)
    )
    return Capacity(facility_t, rack_t, feed_t, server_t, units_t, cdus_t, ups_t, shelves_t, panels_t)
