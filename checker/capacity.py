"""Power aggregation with numpy: feeds -> racks -> facilities, vectorised.

Feed capacity is NetBox's formula (netbox/dcim/models/power.py, PowerFeed.save):
kW = V x A x max_utilization/100 x (sqrt(3) for three-phase) / 1000, refined by
the power factor. NetBox adds A and B feeds together; a 2N rack must survive
the loss of either side, so its capacity is min(side A, side B).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from checker.inventory.loader import Inventory

F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Capacity:
    """Aggregates keyed by entity id; arrays stay internal, dicts go to facts and reports."""

    feeds: dict[str, dict[str, float]]
    racks: dict[str, dict[str, float]]
    facilities: dict[str, dict[str, float]]

    def to_json(self) -> dict[str, Any]:
        return {
            "facilities": [{"entity": k, **v} for k, v in sorted(self.facilities.items())],
            "racks": [{"entity": k, **v} for k, v in sorted(self.racks.items())],
        }


def feed_kw(voltage: F64, amps: F64, utilization: F64, phase: F64, power_factor: F64) -> F64:
    three_phase = np.where(phase == 3, np.sqrt(3.0), 1.0)
    kw: F64 = voltage * amps * (utilization / 100.0) * three_phase * power_factor / 1000.0
    return kw


def _column(values: list[float]) -> F64:
    return np.asarray(values, dtype=np.float64)


def _feeds(inv: Inventory, rack_index: dict[tuple[str, str], int]) -> tuple[F64, npt.NDArray[np.intp], F64]:
    feeds = [p.value for p in inv.feeds.values()]
    kw = feed_kw(
        _column([f.voltage for f in feeds]),
        _column([f.amps for f in feeds]),
        _column([f.max_utilization for f in feeds]),
        _column([f.phase for f in feeds]),
        _column([f.power_factor for f in feeds]),
    )
    racks = np.asarray([rack_index[(fac, rack)] for fac, rack, _ in inv.feeds], dtype=np.intp)
    side = np.asarray([{"A": 1.0, "B": 2.0}.get(f.side or "", 0.0) for f in feeds], dtype=np.float64)
    return kw, racks, side


def _server_draw_kw(inv: Inventory, server_fac: npt.NDArray[np.intp]) -> F64:
    """Each server's draw per its facility's `power.basis` (typical falls back to max)."""
    draws = [e.server.power_w for e in inv.servers.values()]
    peak = _column([d.max if d else 0.0 for d in draws])
    typical = _column([d.typical if d and d.typical else (d.max if d else 0.0) for d in draws])
    fac_typical = np.asarray(
        [bool(p.value.power and p.value.power.basis == "typical") for p in inv.facilities.values()],
        dtype=bool,
    )
    draw_w: F64 = np.where(fac_typical[server_fac], typical, peak) if len(draws) else peak
    return draw_w / 1000.0


def _server_facilities(inv: Inventory, fac_index: dict[str, int]) -> npt.NDArray[np.intp]:
    return np.asarray([fac_index[e.facility] for e in inv.servers.values()], dtype=np.intp)


def _racks_out(
    keys: list[tuple[str, str]], two_n: npt.NDArray[np.bool_], columns: dict[str, npt.NDArray[Any]]
) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for i, (fac, rack) in enumerate(keys):
        cap, load = columns["capacity_kw"][i], columns["load_kw"][i]
        row: dict[str, float] = {
            "capacity_kw": _r(cap),
            "load_kw": _r(load),
            "servers": int(columns["servers"][i]),
            "feeds": int(columns["feeds"][i]),
        }
        if two_n[i]:  # sides mean nothing for an N rack
            row["side_a_kw"], row["side_b_kw"] = _r(columns["side_a_kw"][i]), _r(columns["side_b_kw"][i])
        if cap > 0:
            row["utilization_pct"] = _r(100.0 * load / cap)
        out[f"rack/{fac}/{rack}"] = row
    return out


def compute(inv: Inventory) -> Capacity:
    rack_keys = list(inv.racks)
    rack_index = {k: i for i, k in enumerate(rack_keys)}
    fac_index = {name: i for i, name in enumerate(inv.facilities)}
    n = len(rack_keys)

    kw, feed_rack, side = _feeds(inv, rack_index)
    side_a = np.bincount(feed_rack, weights=kw * (side == 1.0), minlength=n)
    side_b = np.bincount(feed_rack, weights=kw * (side == 2.0), minlength=n)
    two_n = np.asarray([inv.racks[k].value.redundancy == "2N" for k in rack_keys], dtype=bool)
    total = np.bincount(feed_rack, weights=kw, minlength=n)

    server_fac = _server_facilities(inv, fac_index)
    draw_kw = _server_draw_kw(inv, server_fac)
    server_rack = np.asarray(
        [rack_index.get((e.facility, e.server.rack), -1) for e in inv.servers.values()], dtype=np.intp
    )
    placed = server_rack >= 0
    columns = {
        "capacity_kw": np.where(two_n, np.minimum(side_a, side_b), total),
        "load_kw": np.bincount(server_rack[placed], weights=draw_kw[placed], minlength=n),
        "servers": np.bincount(server_rack[placed], minlength=n),
        "feeds": np.bincount(feed_rack, minlength=n),
        "side_a_kw": side_a,
        "side_b_kw": side_b,
    }
    fac_load = np.bincount(server_fac, weights=draw_kw, minlength=len(fac_index))
    fac_servers = np.bincount(server_fac, minlength=len(fac_index))
    feeds_out = {
        f"feed/{fac}/{rack}/{feed}": {"capacity_kw": _r(kw[i])}
        for i, (fac, rack, feed) in enumerate(inv.feeds)
    }
    fac_out = {
        f"facility/{name}": _facility(inv, name, float(fac_load[i]), int(fac_servers[i]))
        for name, i in fac_index.items()
    }
    return Capacity(feeds_out, _racks_out(rack_keys, two_n, columns), fac_out)


def _facility(inv: Inventory, name: str, load_kw: float, servers: int) -> dict[str, float]:
    fac = inv.facilities[name].value
    out: dict[str, float] = {"it_load_kw": _r(load_kw), "servers": servers, "racks": len(fac.racks)}
    if fac.power:
        out["it_capacity_kw"] = fac.power.it_capacity_kw
    return out


def _r(value: float | np.floating[Any]) -> float:
    # Rounded so JSON output is stable and readable; 1 W resolution is plenty.
    return round(float(value), 3)
