"""Racks: failover capacity, load, heat and airflow, U and weight.

A rack's capacity pools its feeds (each feed's capacity and own load:
feeds.py). NetBox adds every feed together; a rack must survive the failure it
was designed for: N = sum of feeds; N+1 = sum minus the largest feed; 2N =
min(side A, side B), because either side carries the whole rack when the
other fails.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from checker.derive.capacity.feeds import AtsArrays, FeedArrays
from checker.derive.capacity.servers import F64, NAN, ServerArrays
from checker.derive.capacity.table import Column, Table
from checker.load.build import Inventory, placed_fields

# 1 W = 3.412 BTU/h (ASHRAE Fundamentals); airflow from Q = 1.08 x CFM x dT(F),
# i.e. CFM = 3.16 x W / dT(F).
BTU_H_PER_W = 3.412
CFM_W_PER_F = 3.16
# Standard gravity, m/s2: kg -> N.
G = 9.80665
# Floor point loads (IBM's sizing, after the CISCA test methods): one tile or
# caster carries up to a third of a standing rack, and up to half of it on one
# caster while the rack is rolled in.
CONCENTRATED_SHARE = 1 / 3
ROLLING_SHARE = 1 / 2

RACK_COLUMNS = (
    Column("feed_count", "", "power feeds"),
    Column("sided_feed_count", "", "feeds labelled side A or B"),
    Column(
        "labelled_side_count",
        "",
        "sides (A, B) with at least one feed: 2 is an A/B-fed rack, 1 a label with no side to fail over to",
    ),
    Column("server_count", "", "servers in the rack (rack-mounted or not)"),
    Column("total_feed_kw", "kW", "sum of every feed's capacity (no failover)"),
    Column("side_a_kw", "kW", "sum of side A feed capacity (2N racks, or any rack with feeds on both sides)"),
    Column("side_b_kw", "kW", "sum of side B feed capacity (2N racks, or any rack with feeds on both sides)"),
    Column("one_side_kw", "kW", "min(side A, side B): what is left when a side fails"),
    Column("largest_feed_kw", "kW", "the largest single feed (what N+1 may lose)"),
    Column("capacity_kw", "kW", "N: sum of feeds; N+1: sum minus the largest feed; 2N: min(side A, side B)"),
    Column("load_kw", "kW", "sum of server peak draw (power_cap_w where declared, else power_w.max)"),
    Column("headroom_kw", "kW", "capacity_kw - load_kw"),
    Column(
        "failover_headroom_kw", "kW", "one_side_kw - load_kw: what is left on one side when the other fails"
    ),
    Column("utilization_pct", "%", "load_kw / capacity_kw x 100; for 2N and N+1 this is after a failure"),
    Column("normal_side_load_kw", "kW", "2N: each side's load with both sides up (half the rack)"),
    Column("side_a_failover_pct", "%", "2N: load on side A alone (side B failed) / side A capacity x 100"),
    Column("side_b_failover_pct", "%", "2N: load on side B alone (side A failed) / side B capacity x 100"),
    Column(
        "side_short_server_count",
        "",
        "2N: servers whose one-side PSUs deliver less than their peak draw (rack-scale systems apart)",
    ),
    Column(
        "min_psu_side_pct",
        "%",
        "2N: the lowest psu_side_pct of the rack's servers (share of peak left on a side loss)",
    ),
    Column(
        "worst_feed_pct",
        "%",
        "the highest use of any of its feeds: utilization_pct, failover_utilization_pct or worst_phase_pct",
    ),
    Column("worst_feed", "", "the feed with worst_feed_pct", "string"),
    Column(
        "worst_ats_pct",
        "%",
        "the highest load of its transfer switches (ats) in % of their rating, all up or after a failure",
    ),
    Column("worst_ats", "", "the ATS with worst_ats_pct", "string"),
    Column("heat_kw", "kW", "heat to reject: every watt drawn becomes heat (load_kw)"),
    Column("heat_btu_h", "BTU/h", "heat_kw x 3,412"),
    Column("liquid_heat_kw", "kW", "sum of its servers' liquid_heat_w: heat to its CDU (absent: none)"),
    Column(
        "air_heat_kw", "kW", "heat_kw - liquid_heat_kw: heat to room air or a rear door (racks with liquid)"
    ),
    Column(
        "airflow_cfm",
        "CFM",
        "air through the servers for the air part of the heat: 3.16 x air W / dT(F), dT = facility "
        "cooling.delta_t_c",
    ),
    Column("cdu", "", "the CDU that serves the rack (by racks or rows)", "string"),
    Column("facility_cdu_count", "", "CDUs the rack's facility declares", context=True),
    Column("cooling_headroom_kw", "kW", "cooling_kw - heat_kw (racks with cooling_kw)"),
    Column("cooling_utilization_pct", "%", "heat_kw / cooling_kw x 100 (racks with cooling_kw)"),
    Column("liquid_server_count", "", "servers with cooling: liquid"),
    Column("u_used", "U", "U taken by rack-mounted servers"),
    Column("u_free", "U", "u_height - u_used"),
    Column("unmounted_server_count", "", "servers without a position (not rack-mounted: no U)"),
    Column("total_weight_kg", "kg", "empty rack weight_kg (if given) + servers with a known weight"),
    Column("unweighed_server_count", "", "servers without weight_kg (not in total_weight_kg)"),
    Column("floor_load_kg_per_m2", "kg/m2", "total_weight_kg / footprint_m2"),
    Column("floor_max_kg_per_m2", "kg/m2", "the facility's floor loading limit", context=True),
    Column(
        "concentrated_load_kn",
        "kN",
        "total_weight_kg x 9.80665 / 3 / 1000: what one caster or foot of the standing rack may put on a "
        "panel (up to a third of the rack)",
    ),
    Column(
        "rolling_load_kn",
        "kN",
        "total_weight_kg x 9.80665 / 2 / 1000: what one caster may carry while the loaded rack is rolled in "
        "(up to half of it)",
    ),
    Column("floor_concentrated_kn", "kN", "the facility's panel concentrated-load rating", context=True),
    Column("floor_rolling_kn", "kN", "the facility's panel rolling-load rating", context=True),
)


def rack_inputs(inv: Inventory) -> dict[str, npt.NDArray[Any]]:
    """Declared rack attributes as arrays, for server lookups and rack figures."""
    read = ("redundancy", "cooling", "u_height", "weight_kg", "footprint_m2", "cooling_kw")
    redundancy, cooling, u_height, weight_kg, footprint_m2, cooling_kw = placed_fields(
        list(inv.racks.values()), *read
    )
    served = rack_cdus(inv)
    fac_index = {name: i for i, name in enumerate(inv.facilities)}
    return {
        "facility": np.asarray([fac_index[f] for f, _ in inv.racks], dtype=np.intp),
        "redundancy": np.asarray(redundancy, dtype=object),
        "cooling": np.asarray(cooling, dtype=object),
        "u_height": np.asarray(u_height, dtype=np.float64),
        "weight_kg": np.asarray([w or 0.0 for w in weight_kg], dtype=np.float64),
        "footprint_m2": np.asarray(footprint_m2, dtype=np.float64),
        "cooling_kw": np.asarray([NAN if kw is None else kw for kw in cooling_kw], dtype=np.float64),
        "cdu": np.asarray([served.get(key) for key in inv.racks], dtype=object),
    }


def rack_cdus(inv: Inventory) -> dict[tuple[str, str], str]:
    """The CDU that serves each rack, by its `racks` or its `rows` (the first, where
    an input error names two)."""
    served: dict[tuple[str, str], str] = {}
    if not inv.cdus:
        return served
    (rack_rows,) = placed_fields(list(inv.racks.values()), "row")
    for (facility, name), place in inv.cdus.items():
        rows = set(place.value.rows)
        for rack_name in place.value.racks:
            served.setdefault((facility, rack_name), name)
        for (fac, rack_name), row in zip(inv.racks, rack_rows, strict=True):
            if fac == facility and row in rows:
                served.setdefault((fac, rack_name), name)
    return served


def _power(racks: dict[str, Any], f: FeedArrays, s: ServerArrays, side_pct: F64) -> dict[str, F64]:
    n = len(racks["redundancy"])
    kw, feed_rack, side = f.kw, f.rack, f.side
    a = np.bincount(feed_rack, weights=kw * (side == "A"), minlength=n)
    b = np.bincount(feed_rack, weights=kw * (side == "B"), minlength=n)
    total = np.bincount(feed_rack, weights=kw, minlength=n)
    largest = np.zeros(n)
    np.maximum.at(largest, feed_rack, kw)
    sided = np.bincount(feed_rack, weights=(side != "").astype(np.float64), minlength=n)
    on_a = np.bincount(feed_rack, weights=(side == "A").astype(np.float64), minlength=n) > 0
    on_b = np.bincount(feed_rack, weights=(side == "B").astype(np.float64), minlength=n) > 0
    two_n, n_plus_1 = racks["redundancy"] == "2N", racks["redundancy"] == "N+1"
    capacity = np.where(two_n, np.minimum(a, b), np.where(n_plus_1, total - largest, total))
    on = s.rack >= 0
    load = np.bincount(s.rack[on], weights=s.peak_w[on] / 1000.0, minlength=n)
    # One feed labelled A on an N rack is a label, not a second source: there is
    # no side to fail over to, so no side figures (0 kW "one side" was a false alarm).
    show_sides = two_n | (on_a & on_b)
    with np.errstate(invalid="ignore", divide="ignore"):
        cols = {
            "feed_count": np.bincount(feed_rack, minlength=n).astype(np.float64),
            "sided_feed_count": sided,
            "labelled_side_count": on_a.astype(np.float64) + on_b,
            "server_count": np.bincount(s.rack[on], minlength=n).astype(np.float64),
            "total_feed_kw": total,
            "side_a_kw": np.where(show_sides, a, NAN),
            "side_b_kw": np.where(show_sides, b, NAN),
            "one_side_kw": np.where(show_sides, np.minimum(a, b), NAN),
            "largest_feed_kw": np.where(np.bincount(feed_rack, minlength=n) > 0, largest, NAN),
            "capacity_kw": capacity,
            "load_kw": load,
            "headroom_kw": capacity - load,
            "failover_headroom_kw": np.where(show_sides, np.minimum(a, b) - load, NAN),
            "utilization_pct": np.where(capacity > 0, 100.0 * load / capacity, NAN),
            "normal_side_load_kw": np.where(two_n, load / 2, NAN),
            "side_a_failover_pct": np.where(two_n & (a > 0), 100.0 * load / a, NAN),
            "side_b_failover_pct": np.where(two_n & (b > 0), 100.0 * load / b, NAN),
            **_side_loss(n, s, side_pct),
        }
    return cols


def _side_loss(n: int, s: ServerArrays, side_pct: F64) -> dict[str, F64]:
    known = (s.rack >= 0) & ~np.isnan(side_pct)
    # A rack-scale system short on a side loss has a finding of its own
    # (power.shelf-side-loss, on its shelves): it is the rack.
    short = known & (side_pct < 100.0) & ~s.system
    lowest = np.full(n, np.inf)
    np.minimum.at(lowest, s.rack[known], side_pct[known])
    return {
        "side_short_server_count": np.bincount(s.rack[short], minlength=n).astype(np.float64),
        "min_psu_side_pct": np.where(np.isinf(lowest), NAN, lowest),
    }


def _thermal(
    racks: dict[str, Any], facilities: dict[str, Any], load: F64, s: ServerArrays
) -> dict[str, npt.NDArray[Any]]:
    n = len(load)
    on = s.rack >= 0
    delta_f = facilities["delta_t_c"][racks["facility"]] * 9.0 / 5.0
    cooling = racks["cooling_kw"]
    liquid = np.bincount(s.rack[on], weights=s.peak_w[on] * s.liquid_share[on] / 1000.0, minlength=n)
    air = load - liquid
    with np.errstate(invalid="ignore", divide="ignore"):
        return {
            "heat_kw": load,
            "heat_btu_h": load * 1000.0 * BTU_H_PER_W,
            "liquid_heat_kw": np.where(liquid > 0, liquid, NAN),
            "air_heat_kw": np.where(liquid > 0, air, NAN),
            "airflow_cfm": CFM_W_PER_F * air * 1000.0 / delta_f,
            "cdu": racks["cdu"],
            "facility_cdu_count": facilities["cdu_count"][racks["facility"]],
            "cooling_headroom_kw": cooling - load,
            "cooling_utilization_pct": np.where(cooling > 0, 100.0 * load / cooling, NAN),
            "liquid_server_count": np.bincount(
                s.rack[on], weights=s.liquid[on].astype(np.float64), minlength=n
            ),
        }


def _space(racks: dict[str, Any], facilities: dict[str, Any], s: ServerArrays) -> dict[str, F64]:
    n = len(racks["u_height"])
    on = s.rack >= 0
    used = np.bincount(s.rack[on], weights=np.nan_to_num(s.u_height[on]), minlength=n)
    weighed = on & ~np.isnan(s.weight_kg)
    weight = racks["weight_kg"] + np.bincount(s.rack[weighed], weights=s.weight_kg[weighed], minlength=n)
    return {
        "u_used": used,
        "u_free": racks["u_height"] - used,
        "unmounted_server_count": np.bincount(
            s.rack[on], weights=(~s.mounted[on]).astype(np.float64), minlength=n
        ),
        "total_weight_kg": weight,
        "unweighed_server_count": np.bincount(
            s.rack[on], weights=np.isnan(s.weight_kg[on]).astype(np.float64), minlength=n
        ),
        "floor_load_kg_per_m2": weight / racks["footprint_m2"],
        "floor_max_kg_per_m2": facilities["floor_max_kg_per_m2"][racks["facility"]],
        "concentrated_load_kn": weight * G * CONCENTRATED_SHARE / 1000.0,
        "rolling_load_kn": weight * G * ROLLING_SHARE / 1000.0,
        "floor_concentrated_kn": facilities["floor_concentrated_kn"][racks["facility"]],
        "floor_rolling_kn": facilities["floor_rolling_kn"][racks["facility"]],
    }


def _worst_feed(n: int, f: FeedArrays, loads: dict[str, npt.NDArray[Any]]) -> dict[str, npt.NDArray[Any]]:
    """Each rack's most used feed, in normal operation, after a designed failure
    or on its heaviest phase."""
    use = np.fmax(loads["utilization_pct"], loads["failover_utilization_pct"])
    use = np.fmax(use, loads["worst_phase_pct"])
    known = np.flatnonzero(~np.isnan(use))
    order = known[np.lexsort((known, -use[known], f.rack[known]))]
    first = order[np.concatenate(([True], f.rack[order][1:] != f.rack[order][:-1]))] if len(order) else order
    pct = np.full(n, NAN)
    name = np.full(n, None, dtype=object)
    pct[f.rack[first]] = use[first]
    name[f.rack[first]] = f.name[first]
    return {"worst_feed_pct": pct, "worst_feed": name}


def _worst_ats(n: int, switches: AtsArrays, pct: F64) -> dict[str, npt.NDArray[Any]]:
    order = np.lexsort((np.arange(len(pct)), -np.nan_to_num(pct, nan=-np.inf), switches.rack))
    racks = switches.rack[order]
    first = order[np.concatenate(([True], racks[1:] != racks[:-1]))] if len(order) else order
    worst = np.full(n, NAN)
    name = np.full(n, None, dtype=object)
    worst[switches.rack[first]] = pct[first]
    name[switches.rack[first]] = switches.name[first]
    return {"worst_ats_pct": worst, "worst_ats": name}


def rack_table(
    inv: Inventory,
    racks: dict[str, Any],
    facilities: dict[str, Any],
    f: FeedArrays,
    loads: dict[str, npt.NDArray[Any]],
    ats: tuple[AtsArrays, F64],
    s: ServerArrays,
    side_pct: F64,
) -> Table[tuple[str, str]]:
    power = _power(racks, f, s, side_pct)
    n = len(racks["redundancy"])
    columns = {
        **power,
        **_worst_feed(n, f, loads),
        **_worst_ats(n, *ats),
        **_thermal(racks, facilities, power["load_kw"], s),
        **_space(racks, facilities, s),
    }
    return Table(list(inv.racks), RACK_COLUMNS, columns)
