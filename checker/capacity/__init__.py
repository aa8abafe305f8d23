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

from checker.capacity.facilities import FACILITY_COLUMNS, facility_inputs, facility_table
from checker.capacity.racks import FEED_COLUMNS, RACK_COLUMNS, feed_kw, rack_inputs, rack_table
from checker.capacity.servers import SERVER_COLUMNS, server_table
from checker.capacity.table import Column, Table
from checker.entity import entity_id
from checker.inventory.loader import Inventory

__all__ = [
    "FACILITY_COLUMNS",
    "FEED_COLUMNS",
    "RACK_COLUMNS",
    "SERVER_COLUMNS",
    "Capacity",
    "Column",
    "Table",
    "compute",
    "feed_kw",
]


@dataclass(frozen=True)
class Capacity:
    """Every aggregate, as tables keyed by the inventory's keys."""

    facilities: Table[str]
    racks: Table[tuple[str, str]]
    feeds: Table[tuple[str, str, str]]
    servers: Table[str]

    def to_json(self) -> dict[str, Any]:
        """The JSON `capacity` section: one object per entity, sorted by entity id."""
        return {
            "facilities": _entities("facility", self.facilities),
            "racks": _entities("rack", self.racks),
            "feeds": _entities("feed", self.feeds),
            "servers": _entities("server", self.servers),
        }


def _entities(kind: str, table: Table[Any]) -> list[dict[str, Any]]:
    rows = [
        {"entity": entity_id(kind, key), **row} for key, row in zip(table.keys, table.figures, strict=True)
    ]
    return sorted(rows, key=lambda r: str(r["entity"]))


def compute(inv: Inventory) -> Capacity:
    rack_index = {k: i for i, k in enumerate(inv.racks)}
    racks = rack_inputs(inv)
    facilities = facility_inputs(inv)
    servers, arrays = server_table(inv, rack_index, racks, facilities)
    rack_t, feed_t = rack_table(inv, rack_index, racks, facilities, arrays)
    return Capacity(facility_table(inv, racks["facility"], arrays), rack_t, feed_t, servers)
